"""Every figure of the Twisted rules as one data table; a match may override any entry."""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    # TW-2.1: cards per hand by number of players (keys are player counts as text).
    "hand_size": {"2": 9, "3": 9, "4": 8},
    # TW-3.1: an extending card differs from the rightmost card by at most this.
    "extend_distance": 10,
    # TW-4.3: points per plus-pile card, per minus-pile card, per minus-pile toad.
    "plus_point": 1,
    "minus_point": 1,
    "toad_penalty": 5,
    # TW-4.4: rounds in a game.
    "rounds": 2,
    # TW-4.5: expert variant (taking a one-card row also takes the top of the draw pile).
    "expert": False,
}


#: Bounds of every option that holds numbers (options.check_ranges): no option
#: can make a match endless (``rounds``) or its scores overflow.
OPTION_RANGES: dict[str, tuple[int, int]] = {
    "hand_size": (1, 39),
    "extend_distance": (0, 86),
    "plus_point": (0, 10),
    "minus_point": (0, 10),
    "toad_penalty": (0, 50),
    "rounds": (1, 20),
}
