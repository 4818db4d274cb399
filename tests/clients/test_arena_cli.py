"""``twistarena practice`` and ``twistarena tournament`` against a live server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main
from twistarena.clients.sdk import ArenaClient
from twistarena.league import standings_from_csv
from twistarena.server.tournaments import game_match_id

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
    first = run(ArenaClient(server.target).get_match(game_match_id(tid, 0, 0)))
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
