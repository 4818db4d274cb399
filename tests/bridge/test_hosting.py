"""The bridge behind matchmaking and tournaments: ``practice --exec``, ``queue --exec``
until a tournament ends, and ``tournament create --entrants exec:...`` running
submitted programs in the sandbox, with its limits."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main
from twistarena.clients.sdk import MatchClient, TournamentClient, register_agent

from tests.clients.helpers import run

PROBE = Path(__file__).resolve().parent / "probe_bot.py"


def _lines(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_practice_plays_a_program(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    command = shlex.join([sys.executable, str(PROBE)])
    assert main(["practice", "--server", server.target, "--game", "twhist", "--exec", command,
                 "--strength", "random", "--seed", "3", "--json"]) == 0
    (out,) = _lines(capsys.readouterr().out)
    assert out["reason"] == "COMPLETED" and sorted(out["places"])[0] == 1


def test_queue_plays_a_tournament_until_it_is_over(server: Any,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    agent_id, token = run(register_agent(server.target, "queued"))
    created = run(TournamentClient(server.target).create("twisted", [agent_id, "random"],
                                                         players=2, seed=5))
    command = shlex.join([sys.executable, str(PROBE)])
    assert main(["queue", "--server", server.target, "--api-token", token, "--game", "twisted",
                 "--players", "2", "--tournament", created.tournament_id, "--exec", command,
                 "--json"]) == 0
    captured = capsys.readouterr()
    played = _lines(captured.out)
    assert len(played) == created.games_planned == 2
    assert {p["tournament_id"] for p in played} == {created.tournament_id}
    assert f"tournament {created.tournament_id} is finished" in captured.err
    # Queued again after the end, the agent is told at once instead of waiting forever.
    assert main(["queue", "--server", server.target, "--api-token", token, "--game", "twisted",
                 "--players", "2", "--tournament", created.tournament_id, "--json"]) == 0
    assert _lines(capsys.readouterr().out) == []


def test_tournament_runs_submitted_programs_in_the_sandbox(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The probe answers with garbage if its sandbox is not as promised (see probe_bot)."""
    def twisted_matches() -> list[Any]:
        return run(MatchClient(server.target).list_matches("twisted", limit=200))

    # Only this tournament's matches count: the session's server holds whatever the
    # tests run before in this process played (the probe plays in other files too).
    before = {m.match_id for m in twisted_matches()}
    command = shlex.join(["python3", str(PROBE), "30", "32", str(server.port)])
    assert main(["tournament", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--entrants", f"exec:{command},random", "--seed", "9",
                 "--cpu-seconds", "30", "--memory-mb", "900", "--open-files", "32",
                 "--json", "-"]) == 0
    standings = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = {row["entrant"]: row for row in standings["standings"]}
    program = next(e for e in rows if e != "random")
    assert program.startswith("ag_") and rows[program]["games"] == 2
    seats = [s for m in twisted_matches() if m.match_id not in before
             for s in m.seats if s.name == PROBE.name]
    assert len(seats) == 2
    assert all(s.timeouts == 0 for s in seats), "the probe found its sandbox wrong (stderr)"


def test_a_host_command_outside_the_sandbox_is_refused_before_anything_starts(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    command = shlex.join([sys.executable, str(PROBE)])
    assert main(["tournament", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--entrants", f"exec:{command},random"]) == 2
    assert "is not in the sandbox" in capsys.readouterr().err
