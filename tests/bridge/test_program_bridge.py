"""The stdin/stdout bridge against a real server: a program that crashes, hangs or prints
garbage costs it that decision (the match's fallback plays it), is restarted, and
the match goes on to its end."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs
from twistarena.clients.bridge import ProgramBot, play_bridged
from twistarena.clients.sdk import ArenaClient

from tests.clients.helpers import run

HERE = Path(__file__).resolve().parent


def test_crash_garbage_and_hang_fall_back_and_restart(server: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        client = ArenaClient(server.target)
        # A restarted program is a fresh Python process: its first answer must fit
        # in the deadline even on a loaded machine, so the only miss by time is
        # the program's deliberate hang.
        created = await client.create_match("twisted", 2, seed=4, decision_ms=4000,
                                            house_bots=["", "random"])
        token = created.seat_tokens[0].token
        bot = ProgramBot([sys.executable, str(HERE / "misbehaving_bot.py"),
                          str(tmp_path / "count")], name="misbehaving")
        with capture_logs() as logs:
            result = await play_bridged(bot, server=server.target,
                                        match_id=created.match.match_id, token=token,
                                        no_events=True)
        assert result.reason == "COMPLETED"
        whys = [e["why"] for e in logs if e["event"].startswith("bot program failed")]
        assert len(whys) == 4, whys
        assert whys[0].startswith("it exited (exit code 3")
        assert "'my move is the best move' is not a legal action id" in whys[1]
        # The bridge gives up just before the deadline; on a loaded machine the
        # server's fallback may settle the decision first.
        assert whys[2].startswith(("no answer within", "the decision was settled"))
        assert "is not a legal action id" in whys[3]
        assert bot.failures == 4 and bot.restarts == 4
        assert any(e["event"] == "bot stderr" and e["line"] == "decision 1" for e in logs)
        match = await client.get_match(created.match.match_id)
        # The fallback played exactly the four failed decisions; every other was answered.
        assert match.seats[0].timeouts == 4
        replay = await client.get_replay(created.match.match_id)
        answered = [a for a in replay.actions if a.seat == 0 and not a.timeout]
        assert int((tmp_path / "count").read_text()) == len(answered) + 4

    run(scenario(), 120)


def test_a_program_that_cannot_start_never_stops_the_bridge(server: Any) -> None:
    async def scenario() -> None:
        client = ArenaClient(server.target)
        created = await client.create_match("twisted", 2, seed=5, decision_ms=50,
                                            house_bots=["", "random"])
        bot = ProgramBot(["/nonexistent/bot-program"])
        result = await play_bridged(bot, server=server.target,
                                    match_id=created.match.match_id,
                                    token=created.seat_tokens[0].token, no_events=True)
        assert result.reason == "COMPLETED"
        assert bot.failures > 0
        # The fallback played every one of the seat's moves.
        replay = await client.get_replay(created.match.match_id)
        mine = [a.timeout for a in replay.actions if a.seat == 0]
        assert mine and all(mine)

    run(scenario(), 120)
