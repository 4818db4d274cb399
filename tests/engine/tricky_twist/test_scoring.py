"""Round scoring: TT-7.2 pairs, the nine scoring cards of TT-7.5, places of TT-7.6."""

from __future__ import annotations

import pytest
from twistarena.engine.tricky_twist import scoring
from twistarena.engine.tricky_twist.data import DEFAULTS, SCORING_CARDS

from .helpers import cs, end_position, new

MOON, SUN, SQUARE, CIRCLE = range(4)


@pytest.mark.parametrize(("tricks", "false", "stars"), [
    (6, 1, 9), (3, 4, 12), (4, 4, 24),  # the rulebook checks (TT-7.2)
    (0, 0, 0), (0, 5, 0), (2, 0, 2), (1, 1, 6), (5, 3, 14),
])
def test_pairs_score_three_or_five_when_balanced(tricks: int, false: int, stars: int) -> None:
    """TT-7.2: T stars + min(T, F) pairs at 3 stars, 5 when T == F."""
    assert scoring.base_stars(tricks, false) == stars


def test_rulebook_run_example_7_3_6_2_8_gives_three() -> None:
    """TT-7.5 longest run: 7, 3, 6, 2, 8 -> 6-7-8, 3 cards (families ignored, duplicates once)."""
    assert scoring.longest_run([7, 3, 6, 2, 8]) == 3
    assert scoring.longest_run([7, 7, 6, 2]) == 2
    assert scoring.longest_run([-1, 5]) == 1
    ft = [(CIRCLE, 7), (SQUARE, 3), (CIRCLE, 6), (MOON, 2), (SQUARE, 8)]
    assert scoring.scoring_card_stars("longest_run", [ft], DEFAULTS) == [6]


def test_rulebook_largest_family_example_three_cards_three_stars() -> None:
    """TT-7.5 largest family: 7c, 3s, 6c, 2m, 9c -> 3 cards of one family = 3 stars;
    on a tie only one family scores."""
    ft = [(CIRCLE, 7), (SQUARE, 3), (CIRCLE, 6), (MOON, 2), (CIRCLE, 9)]
    assert scoring.scoring_card_stars("largest_family", [ft], DEFAULTS) == [3]
    tie = [(CIRCLE, 1), (CIRCLE, 2), (SUN, 3), (SUN, 4)]
    assert scoring.scoring_card_stars("largest_family", [tie], DEFAULTS) == [1]


def test_rulebook_distinct_families_example() -> None:
    """TT-7.5 distinct families: 7c, 3s, 6c, 2m, 7s -> 3 families (6 stars)."""
    ft = [(CIRCLE, 7), (SQUARE, 3), (CIRCLE, 6), (MOON, 2), (SQUARE, 7)]
    assert scoring.card_count("distinct_families", ft) == 3
    assert scoring.scoring_card_stars("distinct_families", [ft], DEFAULTS) == [6]


def test_rulebook_even_and_odd_examples() -> None:
    """TT-7.5: 7, 3, 6, 2, 7 -> 2 even values, 3 odd values; valueless false tricks ignored."""
    ft = [(CIRCLE, 7), (CIRCLE, 3), (CIRCLE, 6), (SQUARE, 2), (CIRCLE, 7), (MOON, -1)]
    assert scoring.card_count("even_values", ft) == 2
    assert scoring.card_count("odd_values", ft) == 3
    assert scoring.scoring_card_stars("even_values", [ft], DEFAULTS) == [2]
    assert scoring.scoring_card_stars("odd_values", [ft], DEFAULTS) == [4]


# Four seats' false tricks for the table of all nine cards (TT-7.5).
FALSE = {
    0: cs("7 moon", "3 sun", "6 moon", "2 circle", "8 sun"),
    1: cs("1 square", "2 square", "3 square"),
    2: cs("12 moon"),
    3: [],
}
EXPECTED = {
    "longest_run": [6, 6, 1, 0],  # runs 3 (6-7-8), 3 (1-2-3), 1, 0
    "chosen_moon_sun": [3, 0, 1, 0],  # best of moon/sun: 2, 0, 1, 0
    "chosen_square_circle": [1, 6, 0, 0],  # 1, 3, 0, 0
    "largest_family": [1, 3, 0, 0],  # 2, 3, 1, 0 on 0,0,1,3
    "distinct_families": [6, 1, 1, 0],  # 3, 1, 1, 0
    "fewest_false_tricks": [3, 7, 12, 0],  # counts 5, 3, 1, none
    "most_false_tricks": [12, 7, 3, 0],
    "even_values": [4, 1, 1, 0],  # 3, 1, 1, 0 on 0,1,2,4
    "odd_values": [2, 2, 0, 0],  # 2, 2, 0, 0
}


def test_the_table_covers_all_nine_cards() -> None:
    assert sorted(EXPECTED) == sorted(SCORING_CARDS) and len(SCORING_CARDS) == 9


@pytest.mark.parametrize("card", SCORING_CARDS)
def test_each_scoring_card_in_a_played_round(card: str) -> None:
    """TT-7.3..7.5: the round's scoring card adds its stars, for false tricks only."""
    state = end_position(new(4), card, false=FALSE, tricks={3: [cs("1 moon", "4 moon")]})
    rows = state.last_round
    assert [r["card"] for r in rows] == EXPECTED[card]
    assert rows[3]["base"] == 1  # one trick, no false trick: the trick alone
    assert [r["round_total"] for r in rows] == [
        r["base"] + r["card"] for r in rows]
    assert state.total == [r["round_total"] for r in rows]


@pytest.mark.parametrize(("counts", "fewest", "most"), [
    ([2, 2, 3, 0], [12, 12, 7, 0], [7, 7, 12, 0]),
    ([1, 1, 1, 1], [12, 12, 12, 12], [12, 12, 12, 12]),
    ([1, 3, 5, 4], [12, 7, 0, 3], [0, 3, 12, 7]),
    ([0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]),
    ([4, 2, 4, 1], [3, 7, 3, 12], [12, 7, 12, 3]),
    ([2, 5, 0], [12, 7, 0], [7, 12, 0]),
])
def test_fewest_and_most_places_with_ties(counts: list[int], fewest: list[int],
                                          most: list[int]) -> None:
    """TT-7.6: equal counts share a place and all score it, the next count takes the
    next place (12, 7, 3, 0); players without false tricks score 0."""
    stars = DEFAULTS["place_stars"]
    assert scoring.place_stars(counts, False, stars) == fewest
    assert scoring.place_stars(counts, True, stars) == most


def test_ties_in_a_played_round() -> None:
    """TT-7.6 through the engine: two seats tie for fewest and both score 12."""
    false = {0: cs("1 moon", "2 moon"), 1: cs("3 moon", "4 moon"), 2: cs("5 sun", "6 sun", "7 sun")}
    state = end_position(new(4), "fewest_false_tricks", false=false)
    assert [r["card"] for r in state.last_round] == [12, 12, 7, 0]


def test_star_tables_come_from_the_options() -> None:
    """TT-7.5 [decided] tables are data: a match may override them."""
    tables = dict(DEFAULTS["star_tables"], odd_values=[0, 100])
    state = end_position(new(3, options={"star_tables": tables}), "odd_values",
                         false={0: cs("1 moon", "3 moon")})
    assert state.last_round[0]["card"] == 100


def test_an_unknown_scoring_card_is_named_in_the_error() -> None:
    """TT-7.5 lists nine scoring cards; any other name is a programming error."""
    with pytest.raises(ValueError, match=r"^unknown scoring card 'fewest_points'$"):
        scoring.card_count("fewest_points", [(0, 3)])
