"""The Tricky Twist data table: every [decided] figure of docs/rules/tricky_twist.md,
overridable per match.

A match option replaces any entry (``twistarena.engine.make(..., options={...})``);
``merge_options`` checks names and types, ``state.Config`` checks the meaning.
"""

from __future__ import annotations

from typing import Any

#: Scoring card names (TT-7.5). The scoring deck is made of ``scoring_cards``.
SCORING_CARDS: tuple[str, ...] = (
    "longest_run",
    "chosen_moon_sun",
    "chosen_square_circle",
    "largest_family",
    "distinct_families",
    "fewest_false_tricks",
    "most_false_tricks",
    "even_values",
    "odd_values",
)

DEFAULTS: dict[str, Any] = {
    # TT-3.2: all 48 cards are dealt, 16 each with 3 players, 12 each with 4.
    "hand_size_3p": 16,
    "hand_size_4p": 12,
    # TT-3.3: cards each player lays aside as a face-down reserve.
    "reserve_size": 5,
    # TT-7.2: stars per pair (one trick + one false trick); balanced when T == F.
    "pair_stars": 3,
    "balanced_pair_stars": 5,
    # TT-2.2 / TT-7.5: the scoring deck (shuffled; one card revealed per round).
    "scoring_cards": list(SCORING_CARDS),
    # TT-6.3 [decided]: values listed on the Odd and Even faces; Any allows 1..12.
    "odd_values": [1, 3, 5, 7, 9, 11],
    "even_values": [2, 4, 6, 8, 10, 12],
    "any_values": list(range(1, 13)),
    # TT-6.4 [decided]: faces of the four variable bonus cards. A face is
    # "symbol_<family>_<family>", "odd", "even", "any" or "modifier".
    "variable_cards": {
        "v1": {"plain": "symbol_moon_sun", "framed": "odd"},
        "v2": {"plain": "symbol_square_circle", "framed": "even"},
        "v3": {"plain": "symbol_moon_square", "framed": "any"},
        "v4": {"plain": "symbol_sun_circle", "framed": "modifier"},
    },
    # TT-6.4 [decided]: scoring cards that show the framed faces (the others: plain).
    "framed_scoring_cards": ["longest_run", "even_values", "odd_values", "most_false_tricks"],
    # TT-7.5 [decided]: stars by count (the last entry applies to any larger count).
    "star_tables": {
        "longest_run": [0, 1, 3, 6, 10, 15, 21],
        "chosen_moon_sun": [0, 1, 3, 6, 10, 15],
        "chosen_square_circle": [0, 1, 3, 6, 10, 15],
        "largest_family": [0, 0, 1, 3, 6, 10, 15],
        "distinct_families": [0, 1, 3, 6, 10],
        "even_values": [0, 1, 2, 4, 7, 11, 16],
        "odd_values": [0, 1, 2, 4, 7, 11, 16],
    },
    # TT-7.6 [decided]: stars by place for "fewest"/"most" (later places: the last entry).
    "place_stars": [12, 7, 3, 0],
}


#: Bounds of every option that holds numbers (options.check_ranges).
OPTION_RANGES: dict[str, tuple[int, int]] = {
    "hand_size_3p": (1, 16),
    "hand_size_4p": (1, 12),
    "reserve_size": (0, 15),
    "pair_stars": (0, 50),
    "balanced_pair_stars": (0, 50),
    "odd_values": (1, 12),
    "even_values": (1, 12),
    "any_values": (1, 12),
    "star_tables": (0, 100),
    "place_stars": (0, 100),
}
