"""Tournament tables count the deals each entrant played and name registered agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main
from twistarena.clients.sdk import TournamentClient, register_agent
from twistarena.league import standings_from_csv

from .helpers import run


def test_duplicate_standings_count_blocks(server: Any, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    csv_path = tmp_path / "standings.csv"
    assert main(["tournament", "create", "--server", server.target, "--game", "twisted",
                 "--entrants", "heuristic,random", "--players", "2", "--duplicate",
                 "--games-per-pairing", "2", "--seed", "3", "--csv", str(csv_path)]) == 0
    table = capsys.readouterr().out
    assert "blocks" in table
    standings = standings_from_csv(csv_path.read_text())
    # Two deals, each played in both seatings: 4 games and 2 blocks per entrant.
    assert {(s.entrant, s.games, s.blocks) for s in standings} == \
        {("heuristic", 4, 2), ("random", 4, 2)}


def test_registered_agents_are_shown_by_name(server: Any) -> None:
    async def names() -> dict[str, str]:
        agent_id, _ = await register_agent(server.target, "Zebra the Bold")
        return await TournamentClient(server.target).entrant_names(
            [agent_id, "heuristic", "ag_nobody"])

    shown = run(names())
    assert list(shown.values()) == ["Zebra the Bold", "heuristic", "ag_nobody"]
