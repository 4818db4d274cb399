"""Each decision's stderr, kept with the seat's record: only the agent's own api
token reads it (GetSeatLogs), the failed match records its failing step, and
the node keeps a bounded number of seat logs per agent."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import grpc
import pytest
from twistarena.clients.cli import main as cli
from twistarena.clients.sdk import AgentError, register_agent
from twistarena.clients.sdk.versions import VersionClient
from twistarena.hosted.archives import pack_directory
from twistarena.storage import Holder, MatchReport, Store
from twistarena.storage.versions import SEAT_LOGS_KEPT, SeatLogRecord, StepLogRecord

from tests.clients.helpers import run
from tests.support.server import InProcessServer


def test_a_seat_log_is_its_owners_only_and_the_failure_names_its_step(
        hosting_server: InProcessServer, valkey: Any, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    async def scenario() -> tuple[str, str, str]:
        target = hosting_server.target
        owner, owner_token = await register_agent(target, "logger")
        _other, other_token = await register_agent(target, "snoop")
        (tmp_path / "bot.py").write_text("print(1)\n")
        stored = await VersionClient(target, api_token=owner_token).submit(
            pack_directory(tmp_path), "python3 bot.py")
        vid = stored.version.version_id
        match_id = "m-" + secrets.token_hex(4)
        steps = (StepLogRecord(0, "<script>alert(1)</script> opening\n"),
                 StepLogRecord(4, "Traceback: boom\n", "crash", "it exited (exit code 1)"))
        store = Store(valkey.url, Holder("node-t", "", 2000))
        await store.connect()
        try:
            await store.versions.record_match(owner, vid, MatchReport(
                report_id=f"{match_id}:1", match_id=match_id, decisions=5, crashes=1,
                stderr_tail=b"Traceback: boom\n", seat=1, steps=steps))
            await store.versions.record_seat_log(owner, SeatLogRecord(match_id, 1, vid,
                                                                      list(steps)))
        finally:
            await store.close()

        mine = await VersionClient(target, api_token=owner_token).seat_logs(match_id)
        [seat] = mine.seats
        assert (seat.seat, seat.version_id) == (1, vid)
        assert [(s.step, s.text, s.failure) for s in seat.steps] == [
            (0, "<script>alert(1)</script> opening\n", ""), (4, "Traceback: boom\n", "crash")]
        with pytest.raises(AgentError) as refused:
            await VersionClient(target, api_token=other_token).seat_logs(match_id)
        assert refused.value.code == grpc.StatusCode.NOT_FOUND
        with pytest.raises(AgentError) as anonymous:
            await VersionClient(target).seat_logs(match_id)
        assert anonymous.value.code == grpc.StatusCode.UNAUTHENTICATED

        details = await VersionClient(target, api_token=owner_token).details(owner)
        [failure] = details.versions[0].stats.failures
        assert (failure.match_id, failure.seat, failure.step) == (match_id, 1, 4)
        assert failure.reason == "crash: it exited (exit code 1)"
        return owner, owner_token, match_id

    owner, token, match_id = run(scenario())
    # The command line gives the same to the token.
    server = ["--server", hosting_server.target, "--api-token", token]
    capsys.readouterr()
    assert cli(["agent", "logs", *server, match_id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["seats"][0]["steps"][1] == {"step": 4, "text": "Traceback: boom\n",
                                             "failure": "crash",
                                             "why": "it exited (exit code 1)"}
    assert cli(["agent", "logs", *server, match_id, "--step", "4"]) == 0
    text = capsys.readouterr().out
    assert "seat 1 step 4 crash: it exited (exit code 1)" in text
    assert "Traceback: boom" in text and "opening" not in text
    assert cli(["agent", "show", *server, owner]) == 0
    assert "seat 1 step 4: crash: it exited" in capsys.readouterr().out


def test_the_node_keeps_the_newest_seat_logs_of_an_agent_only(valkey: Any) -> None:
    async def scenario() -> None:
        agent = secrets.token_hex(6)
        store = Store(valkey.url, Holder("node-t", "", 2000))
        await store.connect()
        try:
            for n in range(SEAT_LOGS_KEPT + 3):
                await store.versions.record_seat_log(agent, SeatLogRecord(
                    f"match-{n}", 0, "v", [StepLogRecord(n, "x" * 100_000)]))
            assert await store.versions.seat_logs(agent, "match-0", 8) == []
            assert await store.versions.seat_logs(agent, "match-2", 8) == []
            [kept] = await store.versions.seat_logs(agent, f"match-{SEAT_LOGS_KEPT + 2}", 8)
            assert len(kept.steps[0].text) == 64 * 1024  # capped in bytes
            assert await store.versions._redis.hlen(f"{{av:{agent}}}:seatlogs") == SEAT_LOGS_KEPT
        finally:
            await store.close()

    run(scenario())
