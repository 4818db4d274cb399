"""Plackett-Luce ratings move the right way (table tests) and match the reference."""

from __future__ import annotations

import pytest
from twistarena.league import GameResult, PlackettLuce, Rating, rate_results

MODEL = PlackettLuce()
FRESH = MODEL.rating()


def test_matches_the_openskill_reference_for_one_game() -> None:
    """openskill's PlackettLuce (tau 0): 1v1 from defaults gives 27.6352 / 8.0655."""
    a, b = PlackettLuce(tau=0.0).rate([FRESH, FRESH], [1, 2])
    assert a.mu == pytest.approx(27.635231383473453)
    assert b.mu == pytest.approx(22.364768616526547)
    assert a.sigma == pytest.approx(8.065506316323548)
    assert b.sigma == pytest.approx(8.065506316323548)


@pytest.mark.parametrize(("places", "up", "down"), [
    ([1, 2], [0], [1]),
    ([2, 1], [1], [0]),
    ([1, 2, 3], [0], [2]),
    ([1, 2, 3, 4], [0, 1], [2, 3]),
    ([3, 1, 2, 4], [1, 2], [0, 3]),
])
def test_winners_rise_losers_fall_sigma_shrinks(places: list[int], up: list[int],
                                                down: list[int]) -> None:
    after = MODEL.rate([FRESH] * len(places), places)
    for i in up:
        assert after[i].mu > FRESH.mu
    for i in down:
        assert after[i].mu < FRESH.mu
    assert all(r.sigma < FRESH.sigma for r in after)
    # places order mu: better place, higher mu
    by_place = sorted(range(len(places)), key=lambda i: places[i])
    mus = [after[i].mu for i in by_place]
    assert mus == sorted(mus, reverse=True)


def test_ties_share_and_move_less() -> None:
    tied = MODEL.rate([FRESH, FRESH], [1, 1])
    assert tied[0].mu == pytest.approx(tied[1].mu)
    assert abs(tied[0].mu - FRESH.mu) < 1e-9  # equal ratings, a tie: nothing to learn
    won = MODEL.rate([FRESH, FRESH, FRESH], [1, 2, 3])
    shared = MODEL.rate([FRESH, FRESH, FRESH], [1, 1, 3])
    assert shared[0].mu == pytest.approx(shared[1].mu)
    assert FRESH.mu < shared[0].mu < won[0].mu  # sharing the win gains less than winning
    assert shared[1].mu >= won[1].mu - 1e-9  # ... and no less than coming second alone
    assert won[2].mu < shared[2].mu < FRESH.mu  # losing to a tied pair costs less


def test_an_upset_moves_more_than_an_expected_result() -> None:
    strong, weak = Rating(35.0, 4.0), Rating(15.0, 4.0)
    expected = MODEL.rate([strong, weak], [1, 2])
    upset = MODEL.rate([strong, weak], [2, 1])
    gain_expected = expected[0].mu - strong.mu
    gain_upset = upset[1].mu - weak.mu
    assert 0 < gain_expected < gain_upset
    assert upset[0].mu < strong.mu and upset[1].mu > weak.mu


def test_uncertain_players_move_more() -> None:
    sure, unsure = Rating(25.0, 2.0), Rating(25.0, 8.0)
    a, b = MODEL.rate([sure, unsure], [2, 1])
    assert abs(b.mu - unsure.mu) > abs(a.mu - sure.mu)


def test_repeated_wins_separate_and_sigma_keeps_shrinking() -> None:
    results = [GameResult(0, 0, d, d, ("a", "b", "c"), (3, 2, 1), (1, 2, 3)) for d in range(20)]
    early = rate_results(results[:5])
    ratings = rate_results(results)
    assert ratings["a"].mu > ratings["b"].mu > ratings["c"].mu
    assert ratings["a"].conservative > ratings["b"].conservative > ratings["c"].conservative
    for name in "abc":
        assert ratings[name].sigma < early[name].sigma < FRESH.sigma


def test_win_probabilities_sum_to_one_and_order() -> None:
    p = MODEL.win_probabilities([Rating(30, 3), Rating(25, 3), Rating(20, 3)])
    assert sum(p) == pytest.approx(1.0)
    assert p[0] > p[1] > p[2]
