"""Standings add up, intervals behave, paired tests and exports round-trip."""

from __future__ import annotations

import json
import math

import pytest
from twistarena.league import (
    GameResult,
    ScheduledGame,
    compute_standings,
    games_for_tables,
    pairwise,
    report_from_json,
    report_json,
    standings_from_csv,
    standings_to_csv,
)
from twistarena.league.stats import (
    betainc,
    mean_ci,
    paired_test,
    sign_test,
    t_quantile,
    t_sf2,
    wilson_ci,
)


def _fake_results() -> list[GameResult]:
    """a beats b beats c on most deals; one tie for first; seat 0 gets +1 (a seat edge)."""
    games = games_for_tables([["a", "b", "c"]], deals=6, seed=3)
    out = []
    strength = {"a": 10, "b": 6, "c": 3}
    for g in games:
        scores = [strength[name] + (1 if seat == 0 else 0) + g.deal % 3
                  for seat, name in enumerate(g.seats)]
        if g.deal == 5:
            scores = [7, 7, 1]
        places = [1 + sum(1 for o in scores if o > s) for s in scores]
        out.append(GameResult.of(g, scores, places))
    return out


def test_counts_add_up_and_win_shares_sum_to_games() -> None:
    results = _fake_results()
    standings = compute_standings(results)
    assert sum(s.games for s in standings) == len(results) * 3
    assert sum(s.wins for s in standings) == pytest.approx(len(results))
    assert [s.entrant for s in standings] == ["a", "b", "c"]
    for s in standings:
        assert s.blocks == 6
        assert s.score_ci_low <= s.mean_score <= s.score_ci_high
        assert 0 <= s.win_ci_low <= s.win_share <= s.win_ci_high <= 1
        assert s.conservative == pytest.approx(s.mu - 3 * s.sigma)


def test_an_entrant_with_several_seats_counts_each_seat() -> None:
    g = ScheduledGame(0, 0, 0, 1, ("x", "y", "y", "y"))
    results = [GameResult.of(g, [5, 9, 9, 1], [3, 1, 1, 4])]
    standings = {s.entrant: s for s in compute_standings(results)}
    assert standings["y"].games == 3 and standings["x"].games == 1
    assert standings["y"].wins == pytest.approx(1.0) and standings["x"].wins == 0
    assert standings["y"].mean_score == pytest.approx(19 / 3)


def test_pairwise_is_paired_by_deal() -> None:
    results = _fake_results()
    comps = {(c.a, c.b): c.test for c in pairwise(results, ["a", "b", "c"])}
    ab = comps[("a", "b")]
    assert ab.n == 6 and ab.wins == 5 and ab.ties == 1  # deal 5 is the tie
    assert ab.mean_diff == pytest.approx(4 * 5 / 6)
    assert ab.t_p < 0.01


def test_csv_and_json_round_trip() -> None:
    results = _fake_results()
    standings = compute_standings(results)
    assert standings_from_csv(standings_to_csv(standings)) == standings
    comps = pairwise(results)
    text = report_json(standings, results, comps, {"game": "x"})
    back, back_results, meta = report_from_json(text)
    assert back == standings and back_results == results and meta == {"game": "x"}
    doc = json.loads(text)
    assert len(doc["comparisons"]) == 3 and set(doc["comparisons"][0]) >= {"a", "b", "t_p"}


def test_json_has_no_infinities() -> None:
    g = games_for_tables([["a", "b"]], 3, seed=1)
    results = [GameResult.of(x, [2, 1] if x.seats[0] == "a" else [1, 2],
                             [1, 2] if x.seats[0] == "a" else [2, 1]) for x in g]
    comps = pairwise(results)
    assert math.isinf(comps[0].test.t)
    doc = json.loads(report_json(compute_standings(results), results, comps))
    assert doc["comparisons"][0]["t"] is None


def test_statistics_against_known_values() -> None:
    assert t_quantile(0.975, 10) == pytest.approx(2.228139, abs=1e-5)
    assert t_quantile(0.975, 1) == pytest.approx(12.7062, abs=1e-3)
    assert t_sf2(2.228139, 10) == pytest.approx(0.05, abs=1e-5)
    assert betainc(2, 3, 0.4) == pytest.approx(0.5248, abs=1e-4)
    assert mean_ci([1, 2, 3, 4, 5]) == pytest.approx((1.0367568, 4.9632432))
    assert sign_test(9, 1) == pytest.approx(0.021484375)
    assert sign_test(0, 0) == 1.0
    low, high = wilson_ci(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    test = paired_test([3, 4, 5, 6], [1, 3, 2, 2])
    assert test.mean_diff == pytest.approx(2.5) and test.wins == 4 and 0 < test.t_p < 0.05
    with pytest.raises(ValueError):
        paired_test([1.0], [1.0, 2.0])
