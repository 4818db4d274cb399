"""``twistarena evaluate``: an estimate and a bar on stderr, tables (or --json) on stdout."""

from __future__ import annotations

import json
import re

import pytest
from twistarena.clients.cli import main

SMALL = ["evaluate", "--game", "twisted", "--players", "2", "--deals", "1",
         "--iterations", "5", "--jobs", "1", "--bots", "ismcts,random"]


def test_tables_only_on_stdout_and_an_estimate_on_stderr(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(SMALL) == 0
    out, err = capsys.readouterr()
    assert "Paired by deal" in out and "ismcts vs random" in out
    assert not any(line.lstrip().startswith("{") for line in out.splitlines())
    assert "2 games (1 deals x 2 seatings) on 1 worker" in err
    assert "(ismcts: 5 iterations per decision)" in out


def test_the_estimate_leaves_out_the_first_game_and_ismcts_is_named_only_when_it_plays(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The first game also pays for loading the bots: the estimate is of the games
    left, from the rate after it (there is none when no game is left)."""
    assert main(["evaluate", "--game", "twisted", "--players", "2", "--deals", "3",
                 "--jobs", "1", "--bots", "heuristic,random"]) == 0
    out, err = capsys.readouterr()
    assert "an estimate follows the first 3" in err
    assert re.search(r"estimate: about \d+ s more for the 6 games", err)
    assert "ismcts" not in out


def test_json_only_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SMALL, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    meta = report["meta"]
    assert meta["deals"] == 1 and meta["games"] == 2
    # CPU seconds of ismcts's searched decisions: one seat in each of the two games.
    assert meta["search_decisions"] > 10
    assert 0 < meta["search_seconds_mean"] <= meta["search_seconds_max"]
