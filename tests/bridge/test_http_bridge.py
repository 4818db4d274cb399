"""The HTTP bridge: decisions POSTed to URL/move, the result to URL/end."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from structlog.testing import capture_logs
from twistarena.bridge import HttpBot, play_bridged
from twistarena.clients.sdk import MatchClient

from tests.clients.helpers import run


class Endpoint(BaseHTTPRequestHandler):
    """Answers the lowest legal id, except a garbage body for the third decision and an
    id that is not legal for the fifth."""

    moves: list[dict[str, Any]] = []
    ends: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/move":
            self.moves.append(body)
            legal = [a["id"] for a in body["legal_actions"]]
            reply = (b"no idea" if len(self.moves) == 3 else
                     str(max(legal) + 1000).encode() if len(self.moves) == 5 else
                     json.dumps({"id": legal[0]}).encode())
        else:
            self.ends.append(body)
            reply = b"{}"
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    Endpoint.moves, Endpoint.ends = [], []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        thread.join(10)


def test_http_bot_plays_a_match_and_hears_the_result(server: Any, endpoint: str) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twhist", 3, seed=6, decision_ms=1000,
                                            house_bots=["", "random", "random"])
        bot = HttpBot(endpoint)
        with capture_logs() as logs:
            result = await play_bridged(bot, server=server.target,
                                        match_id=created.match.match_id,
                                        token=created.seat_tokens[0].token, no_events=True)
        assert result.reason == "COMPLETED"
        # The garbage is quoted as text, not as Python bytes.
        whys = [e["why"] for e in logs if "why" in e]
        assert whys == ["its answer 'no idea' is not a legal action id"]
        # The illegal id was refused, and the same decision POSTed again with the refusal.
        refused, again = Endpoint.moves[4], Endpoint.moves[5]
        assert "rejected" not in refused
        assert again["decision_id"] == refused["decision_id"]
        assert again["rejected"].startswith("ILLEGAL_ACTION: ")
        assert again["time_left_ms"] <= refused["time_left_ms"]
        assert again["legal_actions"] == refused["legal_actions"]
        assert sum("rejected" in m for m in Endpoint.moves) == 1
        first = Endpoint.moves[0]
        assert first["type"] == "decision" and first["game"] == "twhist" and first["seat"] == 0
        assert first["observation"]["hand"] and first["legal_actions"][0]["label"]
        assert Endpoint.ends == [{"type": "over", "seat": 0, "scores": list(result.scores),
                                  "places": list(result.places), "reason": "COMPLETED"}]
        assert bot.failures == 1
        match = await client.get_match(created.match.match_id)
        assert match.seats[0].timeouts == 1

    run(scenario(), 120)
