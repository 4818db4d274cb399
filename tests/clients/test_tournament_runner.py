"""The in-process runner and ``twistarena evaluate`` on small, fast tournaments."""

from __future__ import annotations

import json
import pathlib
from collections import Counter

import pytest
from twistarena.bots import Bot, make_bot
from twistarena.clients.cli import main
from twistarena.clients.tournament import run_games, run_swiss
from twistarena.league import GameResult, compute_standings, round_robin


def _named(entrant: str, game_id: str, seed: int) -> Bot:
    """Entrants "heuristic-1", "random-2", ...: the strategy is the name's first part."""
    return make_bot(entrant.split("-")[0], game_id, seed)


def test_round_robin_tournament_is_reproducible_and_reports_progress() -> None:
    games = round_robin(["heuristic", "random", "ismcts"], 2, deals=1, seed=4)
    seen: list[tuple[int, int]] = []

    def on_game(done: int, total: int, result: GameResult) -> None:
        seen.append((done, total))

    factory = _tiny_ismcts
    results = run_games(games, "twisted", factory, on_game=on_game)
    assert seen == [(i, len(games)) for i in range(1, len(games) + 1)]
    assert results == run_games(games, "twisted", factory)
    standings = compute_standings(results)
    assert sum(s.wins for s in standings) == pytest.approx(len(results))


def _tiny_ismcts(entrant: str, game_id: str, seed: int) -> Bot:
    if entrant == "ismcts":
        from twistarena.bots.ismcts import ismcts_bot

        return ismcts_bot(game_id, seed, iterations=4)
    return make_bot(entrant, game_id, seed)


def test_swiss_tournament_avoids_rematches_and_plays_every_round() -> None:
    entrants = ["heuristic-1", "heuristic-2", "random-1", "random-2"]
    results = run_swiss(entrants, "twisted", 2, rounds=3, deals=1, seed=2, factory=_named)
    assert len(results) == 3 * 2 * 2  # rounds x tables x rotations
    pairs = Counter(frozenset(r.seats) for r in results)
    assert len(pairs) == 6 and set(pairs.values()) == {2}  # 3 rounds, never the same pair
    rounds = Counter(r.round for r in results)
    assert rounds == {0: 4, 1: 4, 2: 4}


def test_evaluate_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["evaluate", "--game", "twhist", "--players", "3", "--bots", "heuristic,random",
                 "--deals", "3", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["meta"]["games"] == 9 and doc["meta"]["players"] == 3
    assert {s["entrant"] for s in doc["standings"]} == {"heuristic", "random"}
    assert [(c["a"], c["b"]) for c in doc["comparisons"]] == [("heuristic", "random")]
    assert doc["comparisons"][0]["n"] == 3


def test_evaluate_round_robin_with_ismcts_and_files(tmp_path: pathlib.Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    csv_path, out_path = tmp_path / "s.csv", tmp_path / "r.json"
    code = main(["evaluate", "--game", "twisted", "--players", "2", "--deals", "1",
                 "--iterations", "3", "--csv", str(csv_path), "--out", str(out_path)])
    assert code == 0
    tables = capsys.readouterr().out
    for pair in ("ismcts vs heuristic", "ismcts vs random", "heuristic vs random"):
        assert pair in tables
    report = json.loads(out_path.read_text())
    assert [(c["a"], c["b"]) for c in report["comparisons"]] == [
        ("ismcts", "heuristic"), ("ismcts", "random"), ("heuristic", "random")]
    assert len(report["results"]) == 6  # 3 pairs x 2 rotations
    assert csv_path.read_text().startswith("name,entrant,games,")


def test_evaluate_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--game", "twisted", "--players", "9"]) == 2
    assert main(["evaluate", "--game", "twisted", "--bots", "random,random"]) == 2
    assert main(["evaluate", "--game", "twisted", "--bots", "nobody"]) == 2
