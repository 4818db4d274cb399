"""Tricky Twist (docs/rules/tricky_twist.md): 3-4 players, tricks and false tricks in balance."""

from __future__ import annotations

from ..core import JSON, GameInfo, State
from .cards import DECK_SIZE
from .data import DEFAULTS, OPTION_RANGES
from .narrate import narrate
from .sample import sample_state
from .state import TrickyTwistState


def _new_state(num_players: int, seed: int, options: JSON) -> State:
    return TrickyTwistState(num_players, seed, options)


GAME = GameInfo(
    id="tricky_twist",
    name="Tricky Twist",
    min_players=3,
    max_players=4,
    defaults=DEFAULTS,
    deck_size=DECK_SIZE,
    new_state=_new_state,
    narrate=narrate,
    sample_state=sample_state,
    option_ranges=OPTION_RANGES,
)

__all__ = ["GAME", "TrickyTwistState"]
