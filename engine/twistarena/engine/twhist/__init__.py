"""Twhist (docs/rules/twhist.md): 3-5 players, tricks with Twhist cards, scoring by FLIP cards."""

from __future__ import annotations

from ..core import JSON, GameInfo, State
from .cards import DECK_SIZE
from .data import DEFAULTS, OPTION_RANGES
from .narrate import narrate
from .sample import sample_state
from .state import TwhistState


def _new_state(num_players: int, seed: int, options: JSON) -> State:
    return TwhistState(num_players, seed, options)


GAME = GameInfo(
    id="twhist",
    name="Twhist",
    min_players=3,
    max_players=5,
    defaults=DEFAULTS,
    deck_size=DECK_SIZE,
    new_state=_new_state,
    narrate=narrate,
    sample_state=sample_state,
    option_ranges=OPTION_RANGES,
)

__all__ = ["DEFAULTS", "GAME", "TwhistState"]
