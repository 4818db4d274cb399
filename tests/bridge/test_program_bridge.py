"""The stdin/stdout bridge against a real server: a program that crashes, hangs or prints
garbage costs it that decision (the match's fallback plays it, at once), is restarted
at most three times, and the match goes on to its end; an illegal id is refused and the
program hears why."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs
from twistarena.bridge import ProgramBot, bridged_agent, play_bridged, run_bridged
from twistarena.clients.sdk import MatchClient
from twistarena.clients.sdk.localbots import BOT_OUTPUT, configure_logging

from tests.clients.helpers import run
from tests.support.waiting import wait_until

HERE = Path(__file__).resolve().parent


def test_crash_garbage_and_hang_fall_back_and_restart(server: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
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
        assert whys[0].startswith("it exited (exit code 3")
        assert "'my move is the best move' is not a legal action id" in whys[1]
        # The bridge gives up just before the deadline; on a loaded machine the
        # server's fallback may settle the decision first.
        assert whys[2].startswith(("no answer within", "the decision was settled"))
        assert "is not a legal action id" in whys[3]
        # Three restarts, then the fallback plays every later decision of the seat.
        assert bot.restarts == 3 and len(whys) == 4, whys
        stats = bot.stats
        assert (stats.crashes, stats.illegal_outputs, stats.timeouts) == (1, 2, 1)
        # Answered: 1, 3, 5, 7, the refused 8 and its second asking, 9 (not a decision
        # of its own); the rest were failures, given up on after the fourth.
        assert stats.answered == 6 and stats.decisions == bot.failures + 5
        assert b"decision 1\n" in stats.stderr_tail
        said = [e["line"] for e in logs if e["event"] == BOT_OUTPUT and e["log_level"] == "info"]
        assert "decision 1" in said
        # Decision 8's illegal id was refused; the program read why in decision 9.
        assert [line for line in said if line.startswith("rejected ")] == [
            said[said.index("decision 9") + 1]]
        assert said[said.index("decision 9") + 1].startswith("rejected ILLEGAL_ACTION: ")
        match = await client.get_match(created.match.match_id)
        replay = await client.get_replay(created.match.match_id)
        mine = [a for a in replay.actions if a.seat == 0]
        assert len([a for a in mine if not a.timeout]) == 5
        assert match.seats[0].timeouts == len(mine) - 5 == bot.failures
        assert int((tmp_path / "count").read_text()) == 10

    run(scenario(), 120)


def test_a_program_that_cannot_start_never_stops_the_bridge(server: Any) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
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


def test_bot_output_is_shown_at_info_without_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(verbose=False)
    log = structlog.get_logger("twistarena.bridge")
    log.info("starting the bot program again", bot="b")
    log.info(BOT_OUTPUT, bot="b", line="thinking about 43")
    err = capsys.readouterr().err
    assert "thinking about 43" in err and "[info" in err and BOT_OUTPUT in err
    assert "starting the bot program again" not in err
def test_a_program_that_exits_is_settled_at_once_not_at_the_deadline(server: Any,
                                                                      tmp_path: Path) -> None:
    """Every decision of a program that exits at once is settled by the fallback
    straight away: the match ends long before even one of its 60 s deadlines."""
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=6, decision_ms=60_000,
                                            house_bots=["", "random"])
        bot = ProgramBot(["/bin/sh", "-c", "exit 7"], name="quitter")
        result = await asyncio.wait_for(play_bridged(
            bot, server=server.target, match_id=created.match.match_id,
            token=created.seat_tokens[0].token, no_events=True), 30)
        assert result.reason == "COMPLETED"
        assert bot.stats.crashes == 4 and bot.restarts == 3
        match = await client.get_match(created.match.match_id)
        assert match.seats[0].timeouts == bot.stats.decisions > 4

    run(scenario(), 60)


def test_the_program_starts_when_the_seat_is_assigned_not_at_the_first_decision(
        server: Any, tmp_path: Path) -> None:
    """Seat 1 never joins, so no decision is ever sent; the program is started anyway,
    and the agent joins once it waits for its input."""
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=7)
        started = tmp_path / "started"
        bot = ProgramBot(["/bin/sh", "-c", f"touch {started}; cat > /dev/null"])
        agent = bridged_agent(bot, server=server.target, match_id=created.match.match_id,
                              token=created.seat_tokens[0].token, no_events=True)
        playing = asyncio.get_running_loop().create_task(run_bridged(agent, bot))
        try:
            await wait_until(started.exists, "the program to start")
            await wait_until(agent.seated.is_set, "the agent to join")
            assert agent.decisions == 0
        finally:
            playing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await playing
        assert bot.stats.decisions == 0 and bot.restarts == 0

    run(scenario(), 60)


@pytest.mark.clock  # its later answers must each come within 250 ms
def test_a_restarted_program_still_starting_is_waited_for_then_skipped_not_killed(
        server: Any, tmp_path: Path) -> None:
    """The program answers once and exits; started again, it computes for a second
    before it reads. Each decision of that second waits for it as long as its own
    time allows, then goes to the fallback without being sent (the program is not
    killed for it, so not restarted again); the later decisions are its own."""
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=8, decision_ms=300,
                                            house_bots=["", "random"])
        script = tmp_path / "slow_restart.py"
        script.write_text(SLOW_RESTART)
        bot = ProgramBot([sys.executable, str(script), str(tmp_path / "restarted")])
        result = await play_bridged(bot, server=server.target,
                                    match_id=created.match.match_id,
                                    token=created.seat_tokens[0].token, no_events=True)
        assert result.reason == "COMPLETED"
        stats = bot.stats
        assert (stats.crashes, stats.restarts, stats.illegal_outputs) == (1, 1, 0)
        assert stats.missed_while_starting >= 1 and stats.answered >= 2
        assert stats.decisions == (stats.answered + stats.crashes + stats.timeouts
                                   + stats.missed_while_starting)

    run(scenario(), 60)


SLOW_RESTART = """
import json, sys, time
from pathlib import Path
marker = Path(sys.argv[1])
if marker.exists():
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        pass
marker.touch()
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "decision":
        break
    print(message["legal_actions"][0]["id"], flush=True)
    if not Path(sys.argv[1] + ".crashed").exists():
        Path(sys.argv[1] + ".crashed").touch()
        sys.exit(1)
"""
