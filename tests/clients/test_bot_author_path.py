"""What a bot author sees from ``practice``, ``bot`` and ``tournament create``: a bot that
cannot play is an error at once, not a match played on fallback; every result table
shows each seat's missed decisions and names every seat; entrants go by name, ids
beside; tables keep their full cells when piped."""

from __future__ import annotations

import asyncio
import csv
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from twistarena.bridge.hosted import register_programs
from twistarena.clients.cli import main
from twistarena.clients.cli.match import MISSED
from twistarena.clients.cli.tournament import until_over
from twistarena.clients.sdk import AgentError, MatchClient
from twistarena.server.embedded import free_port

from tests.support.process import ENTRY

from .helpers import run

PROBE = Path(__file__).resolve().parents[1] / "bridge" / "probe_bot.py"


def _match_count(server: Any) -> int:
    return len(run(MatchClient(server.target).list_matches("twisted", (), 1000)))


@pytest.mark.parametrize(("who", "says"), [
    (["--exec", "nosuchcmd --fast"], "the program could not start: 'nosuchcmd'"),
    (["--http", "http://127.0.0.1:{port}"], "the endpoint http://127.0.0.1:{port} does not answer"),
])
def test_practice_and_bot_with_a_bot_that_cannot_play_stop_before_the_match(
        server: Any, capsys: pytest.CaptureFixture[str], who: list[str], says: str) -> None:
    port = free_port()
    who = [w.format(port=port) for w in who]
    before = _match_count(server)
    assert main(["practice", "--server", server.target, "--game", "twisted", *who]) != 0
    said = capsys.readouterr()
    assert says.format(port=port) in " ".join(said.err.split())
    assert "Practice" not in said.out + said.err
    assert _match_count(server) == before  # no match was created
    # bot says the same before it joins anything (no such match is needed).
    assert main(["bot", "--server", server.target, "--match", "nothing", "--token", "none",
                 *who]) != 0
    assert says.format(port=port) in " ".join(capsys.readouterr().err.split())


def test_bot_that_never_answers_exits_non_zero_and_its_misses_are_in_the_table(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    client = MatchClient(server.target)
    created = run(client.create_match("twisted", 2, seed=4, decision_ms=60,
                                      game_options={"rounds": 1},
                                      house_bots=["", "heuristic"]))
    match_id = created.match.match_id
    assert main(["bot", "--server", server.target, "--match", match_id, "--token",
                 created.seat_tokens[0].token, "--exec", "false"]) == 1
    out = capsys.readouterr().out
    missed = run(client.get_match(match_id)).seats[0].timeouts
    assert missed > 0
    flat = " ".join(out.split())
    assert "answered none of its decisions: the match's fallback played them all" in flat
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in out.splitlines() if line.startswith("│")}
    assert rows["0"][1] == "false (this bot)" and rows["0"][4] == str(missed)
    assert rows["1"][1] == "house heuristic" and rows["1"][4] == "0"


def test_practice_table_names_the_house_seats_and_counts_misses(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # A long command: the table, printed to a file that is no terminal, is wider than 80
    # columns and keeps every cell whole.
    command = f"{sys.executable} {PROBE} {'-' * 40}"
    assert main(["practice", "--server", server.target, "--game", "twisted", "--exec",
                 command, "--strength", "random"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.split("┃")[1:-1]] == [
        "seat", "player", "score", "place", MISSED]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()
            if line.startswith("│")]
    assert sorted(r[1] for r in rows) == sorted([f"{command} (you)", "house random"])
    assert [r[4] for r in rows] == ["0", "0"]
    assert "…" not in out and len(header) > 80


def test_a_tournament_with_a_program_that_cannot_start_is_refused(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "create", "--server", server.target, "--game", "twisted",
                 "--entrants", "heuristic,exec:nosuchcmd"]) != 0
    said = capsys.readouterr()
    assert "exec:nosuchcmd: the program could not start" in " ".join(said.err.split())
    assert "games" not in said.out + said.err


def test_exec_entrants_are_named_and_names_are_unique(server: Any) -> None:
    command = f"{sys.executable} {PROBE}"
    entrants = [f"exec:{command}", f"exec:{command}", f"exec:alice={command}",
                "exec:/usr/bin/env", "heuristic"]
    named, hosted = run(register_programs(server.target, entrants))
    assert [h.name for h in hosted] == ["probe_bot.py", "probe_bot.py#2", "alice", "env"]
    assert [h.command for h in hosted][2] == command
    assert named[-1] == "heuristic" and all(a.startswith("ag_") for a in named[:-1])


def test_piped_tournament_standings_name_entrants_in_full(
        server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{sys.executable} {PROBE}"
    csv_path = tmp_path / "standings.csv"
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "tournament", "create", "--server", server.target,
         "--game", "twisted", "--players", "2", "--seed", "5", "--sandbox", "none",
         "--entrants", f"exec:alice-the-very-thorough-twisted-player={command},exec:{command}",
         "--csv", str(csv_path)],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "…" not in out, out
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()
            if line.startswith("│")]
    assert {r[1] for r in rows} == {"alice-the-very-thorough-twisted-player", "probe_bot.py"}
    assert all(r[2].startswith("ag_") for r in rows)
    assert all(r[6].count("(") == 1 and r[6].endswith(")") for r in rows)  # 0.50 (0.09-0.91)
    assert max(len(line) for line in out.splitlines()) > 80
    table = list(csv.reader(io.StringIO(csv_path.read_text())))
    assert table[0][:2] == ["name", "entrant"]
    assert {(r[0], r[1]) for r in table[1:]} == {(r[1], r[2]) for r in rows}
    # The list of tournaments names the leader too, its id beside.
    tournament_id = out.split("tournament ", 1)[1].split(":", 1)[0]
    leader = next(r for r in rows if r[0] == "1")
    assert main(["tournament", "list", "--server", server.target]) == 0
    listed = next([c.strip() for c in line.split("│")[1:-1]]
                  for line in capsys.readouterr().out.splitlines()
                  if line.startswith(f"│ {tournament_id}"))
    assert listed[-3:-1] == [leader[1], leader[2]]  # then the node driving it


def test_an_entrant_that_stops_with_an_error_ends_tournament_create_with_it() -> None:
    """``tournament create`` plays its exec: entrants itself: one whose loop fails (its
    Queue call refused, say) ends the command with the entrant's error at once,
    instead of following a tournament whose games wait for that entrant."""
    async def scenario() -> str:
        follow = asyncio.ensure_future(asyncio.sleep(3600))  # the tournament goes on
        finished = asyncio.ensure_future(asyncio.sleep(0))  # an entrant done, no error

        async def refused() -> None:
            await asyncio.sleep(0.05)
            raise AgentError("queue at 127.0.0.1:1: ALREADY_QUEUED")

        failing = asyncio.ensure_future(refused())
        try:
            with pytest.raises(AgentError) as stopped:
                await asyncio.wait_for(
                    until_over(follow, {finished: "calm", failing: "bot.py"}, "t-1"), 10)
            assert not follow.done()  # ended by the entrant, not by the tournament
            return str(stopped.value)
        finally:
            follow.cancel()

    said = asyncio.run(scenario())
    assert said.startswith("entrant bot.py stopped: queue at 127.0.0.1:1: ALREADY_QUEUED")
    assert "tournament cancel t-1" in said

    async def ends() -> None:
        follow = asyncio.ensure_future(asyncio.sleep(0.05))
        entrant = asyncio.ensure_future(asyncio.sleep(3600))  # still waiting on its queue
        try:
            await asyncio.wait_for(until_over(follow, {entrant: "calm"}, "t-2"), 10)
            assert follow.done() and not entrant.done()
        finally:
            entrant.cancel()

    asyncio.run(ends())
