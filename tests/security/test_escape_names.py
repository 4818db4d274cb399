"""Names, entries, build logs and stderr that a stranger wrote, full of terminal
escapes and Rich markup, through a real server and the real commands on a
console that believes it is a terminal: nothing reaches it but Rich's own
colours, and the hostile text is shown as text."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import grpc
import pytest
from twistarena.clients.cli import main
from twistarena.clients.sdk import AgentError, MatchClient, register_agent
from twistarena.clients.sdk.arenas import ArenaLadderClient
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.storage import Holder, MatchReport, Store

from tests.support.hosting import FIRST_LEGAL, finished_match, store_version
from tests.support.waiting import wait_until

#: Retitle the window, clear the screen, a hidden OSC 8 link, a bell, a carriage
#: return that overwrites the line, a bidi override, and Rich markup (a link, blink).
HOSTILE = ("e\x1b]0;owned\x07\x1b[2J\x1b]8;;http://e.example\x1b\\c\x1b]8;;\x1b\\"
           "\r\u202e[link=http://e.example]x[/link][blink]b[/blink]")
#: Rich's own colours (SGR) are the only escape sequences a command may print.
RICH_STYLES = re.compile(r"\x1b\[[0-9;]*m")


def assert_harmless(output: str, shows_name: bool) -> None:
    rest = RICH_STYLES.sub("", output)
    assert "\x1b" not in rest and "\x07" not in rest and "\r" not in rest, repr(rest[:400])
    assert "\u202e" not in rest
    assert "\x1b]8;" not in output  # no link, from the name nor from markup
    if shows_name:
        assert "[link=http://e.example]" in rest  # the markup is shown as text
        assert "\\x1b]0;owned" in rest  # and the escapes as visible text


def test_hostile_names_reach_no_terminal(server: Any, valkey: Any,
                                         capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")  # Rich writes as to a terminal...
    monkeypatch.setenv("COLUMNS", "3000")  # ...wide enough for whole cells
    target = server.target

    async def setup() -> tuple[str, str, str, str]:
        agent_id, token = await register_agent(target, HOSTILE)
        version = await store_version(valkey.url, agent_id, {"bot.py": FIRST_LEGAL},
                                      "python3 bot.py " + HOSTILE.replace("\r", ""))
        try:
            await ArenaLadderClient(target).create("twisted", 2)
        except AgentError as error:  # another test on the shared server opened it
            assert error.code == grpc.StatusCode.ALREADY_EXISTS, error
        played = await MatchClient(target).create_match("twisted", 2, seed=4,
                                                        house_bots=["random", "random"])
        await finished_match(target, played.match.match_id, "the house bots' match ended")
        store = Store(valkey.url, Holder("tests", "", 2000))
        await store.connect()
        try:  # the stderr a runner reported (or a forged report)
            await store.versions.record_match(agent_id, version.version_id, MatchReport(
                report_id="forged:0", match_id="m" * 16, crashes=1,
                stderr_tail=HOSTILE.encode()))
            # The arena rates the match once it sees it ended, as one it created.
            await store.arenas.add_live("twisted-2", played.match.match_id,
                                        [f"{agent_id}@1", "house:random@0"])
        finally:
            await store.close()
        created = await MatchClient(target).create_match("twisted", 2, seat_names=[
            HOSTILE, "plain"])
        tournament = await TournamentClient(target).create(
            "twisted", [f"agent:{agent_id}", "random"], players=2)

        async def rated() -> bool:
            board = await ArenaLadderClient(target).leaderboard("twisted-2")
            return any(r.agent_id == agent_id for r in board.rows)

        await wait_until(rated, "the arena rated the agent's match")
        return agent_id, token, created.match.match_id, tournament.tournament_id

    agent_id, token, match_id, tournament_id = asyncio.run(setup())
    capsys.readouterr()
    commands = [  # and whether the output shows the name (a new tournament has no rows)
        (["agent", "show", "--server", target, agent_id, "--api-token", token], True),
        (["agent", "versions", "--server", target, "--api-token", token], True),
        (["match", "get", "--server", target, match_id], True),
        (["tournament", "show", "--server", target, tournament_id], False),
        (["arena", "show", "--server", target, "twisted-2"], True),
    ]
    for argv, shows_name in commands:
        assert main(argv) == 0, argv
        out = capsys.readouterr()
        assert_harmless(out.out + out.err, shows_name)
