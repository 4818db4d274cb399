"""``twistarena practice`` and ``twistarena tournament`` against a live server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main
from twistarena.clients.sdk import MatchClient
from twistarena.league import standings_from_csv
from twistarena.server.league.tournaments import game_match_id

from .helpers import run


def _last_json(text: str) -> Any:
    return json.loads(text.strip().splitlines()[-1])


def test_practice_plays_a_match_in_one_command(server: Any,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["practice", "--server", server.target, "--game", "twisted",
                 "--strength", "random", "--strategy", "random", "--seed", "4", "--json"]) == 0
    out = _last_json(capsys.readouterr().out)
    assert len(out["scores"]) == 2 and out["seat"] == 4 % 2

    assert main(["practice", "--server", server.target, "--game", "twhist", "--node",
                 "--json"]) == 0
    out = _last_json(capsys.readouterr().out)
    assert out["command"].startswith(f"node clients/node/agent.js --server {server.target} "
                                      f"--match {out['match_id']} --token ")


def test_tournament_create_follows_and_exports(server: Any, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "create", "--server", server.target, "--game", "twisted",
                 "--format", "gauntlet", "--entrants", "heuristic,random,random#2",
                 "--players", "2", "--seed", "9", "--join-timeout-ms", "120000",
                 "--json", "-"]) == 0
    report = _last_json(capsys.readouterr().out)
    assert report["meta"]["status"] == "TOURNAMENT_FINISHED"
    assert len(report["results"]) == 4  # the hero vs 2 others x 2 seatings
    tid = report["meta"]["tournament_id"]
    first = run(MatchClient(server.target).get_match(game_match_id(tid, 0, 0)))
    assert first.options.time_control.join_timeout_ms == 120_000
    csv_path = tmp_path / "standings.csv"
    assert main(["tournament", "show", "--server", server.target, tid,
                 "--csv", str(csv_path)]) == 0
    standings = standings_from_csv(csv_path.read_text())
    by_name = {s.entrant: s for s in standings}
    assert by_name["heuristic"].games == 4 and by_name["random"].games == 2
    assert sum(s.wins for s in standings) == pytest.approx(4)


def test_tournament_follow_prints_progress_lines_when_piped(server: Any) -> None:
    """Piped (a log file, ``| tee``), ``follow`` prints a line as games end, not only
    the standings once the tournament is over."""
    import subprocess
    import sys

    from twistarena.clients.sdk.tournaments import TournamentClient
    from twistarena.v1 import tournaments_pb2 as tpb

    client = TournamentClient(server.target)
    created = run(client.create("twisted", ["random", "random#2"], players=2,
                                games_per_pairing=40, parallel=1))
    tid = created.tournament_id
    follow = subprocess.Popen([sys.executable, "-m", "twistarena.clients.cli", "tournament",
                               "follow", "--server", server.target, tid],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert follow.stdout is not None
        first = follow.stdout.readline()
        assert first.startswith(f"tournament {tid}: ") and " games" in first, first
        # It came while the games went on.
        assert run(client.get(tid)).status == tpb.TOURNAMENT_RUNNING
        run(client.cancel(tid, "seen enough"))
        rest, _ = follow.communicate(timeout=60)
        assert f"Tournament {tid}" in rest  # the final standings still end it
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()


def _json_lines(text: str) -> list[Any]:
    """The JSON lines of a command's output (the in-process server logs there too)."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_queue_arena_enrolls_plays_and_prints_each_rating(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``queue --arena`` with only the agent's api token: enrolled, seated by the
    arena, each result printed with the rating after it; ``--tournament ARENA``
    points to ``--arena``; the SDK's ``play_arena`` does the same in one call."""
    from twistarena.clients.sdk import get_agent, play_arena, register_agent
    from twistarena.clients.sdk.arenas import ArenaLadderClient

    run(ArenaLadderClient(server.target).create("tricky_twist", 3,
                                                house=["random", "heuristic"]))
    agent_id, token = run(register_agent(server.target, "queue-arena"))
    capsys.readouterr()
    assert main(["queue", "--server", server.target, "--api-token", token, "--arena",
                 "tricky_twist-3", "--strategy", "random", "--matches", "2", "--json"]) == 0
    lines = _json_lines(capsys.readouterr().out)
    assert [line["arena_id"] for line in lines] == ["tricky_twist-3"] * 2
    assert [line["rating"]["games"] for line in lines] == [1, 2]
    info = run(get_agent(server.target, agent_id))
    assert info.rating_arena_id == "tricky_twist-3" and info.matches == 2
    assert round(info.mu, 9) == round(lines[-1]["rating"]["mu"], 9)

    assert main(["queue", "--server", server.target, "--api-token", token, "--game",
                 "tricky_twist", "--players", "3", "--tournament", "tricky_twist-3"]) != 0
    assert "queue --arena tricky_twist-3" in capsys.readouterr().err

    def first_legal(observation: object, legal_actions: list[Any]) -> int:
        return int(legal_actions[0].id)

    [played] = run(play_arena(first_legal, server.target, token, "tricky_twist-3", matches=1))
    assert played.rating is not None and played.rating.games == 3


def test_a_host_updates_closes_and_is_warned_about_its_arena(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``serve --arena`` brings house rungs unless ``--house none``; ``arena enroll``
    says why no table can form; ``arena update`` changes rungs and rates; ``arena
    close`` stops play for good and keeps the leaderboard readable."""
    from twistarena.bots import ARENA_HOUSE
    from twistarena.clients.cli import build_parser
    from twistarena.clients.sdk import register_agent
    from twistarena.clients.sdk.arenas import ArenaLadderClient
    from twistarena.v1 import arenas_pb2

    parser = build_parser()
    assert parser.parse_args(["serve", "--arena", "twisted:2"]).house == ",".join(ARENA_HOUSE)
    assert ARENA_HOUSE == ("random", "heuristic", "ismcts-fast")

    target = ["--server", server.target]
    assert main(["arena", "create", *target, "--game", "twhist", "--players", "5"]) == 0
    agent_id, token = run(register_agent(server.target, "lonely"))
    capsys.readouterr()
    assert main(["arena", "enroll", *target, "twhist-5", agent_id, "--api-token", token]) == 0
    out = capsys.readouterr().out
    assert "(1 agent enrolled)" in out
    assert "warning: no table can form: a table has 5 seats and the arena has 1 enrolled " \
           "agent and 0 house rungs" in " ".join(out.split())

    assert main(["arena", "update", *target, "twhist-5", "--house", "random,heuristic",
                 "--matches-per-minute", "30", "--max-concurrent-per-agent", "1"]) == 0
    assert main(["arena", "update", *target, "twhist-5", "--house", "nobody"]) != 0
    arena = run(ArenaLadderClient(server.target).get("twhist-5"))
    assert (list(arena.house_bots), arena.matches_per_minute,
            arena.max_concurrent_per_agent) == (["random", "heuristic"], 30, 1)
    capsys.readouterr()
    assert main(["arena", "show", *target, "twhist-5"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "1 agent enrolled" in shown and "win share" in shown

    assert main(["arena", "close", *target, "twhist-5"]) == 0
    closed = run(ArenaLadderClient(server.target).get("twhist-5"))
    assert closed.status == arenas_pb2.ARENA_STATUS_CLOSED
    assert main(["arena", "resume", *target, "twhist-5"]) != 0
    assert "ARENA_CLOSED" in capsys.readouterr().err
    assert run(ArenaLadderClient(server.target).leaderboard("twhist-5")).arena.arena_id \
        == "twhist-5"
    capsys.readouterr()
    assert main(["arena", "enroll", *target, "twhist-5", agent_id, "--api-token", token]) == 0
    assert "arena twhist-5 is closed" in capsys.readouterr().out
