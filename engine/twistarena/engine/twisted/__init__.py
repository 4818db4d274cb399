"""Twisted (docs/rules/twisted.md), 2-4 players: a row of numbered cards, twists and takes."""

from __future__ import annotations

from ..core import JSON, GameInfo
from .cards import DECK
from .data import DEFAULTS, OPTION_RANGES
from .narrate import narrate
from .sample import sample_state
from .state import TwistedState


def _new_state(num_players: int, seed: int, options: JSON) -> TwistedState:
    return TwistedState(num_players, seed, options)


GAME = GameInfo(
    id="twisted",
    name="Twisted",
    min_players=2,
    max_players=4,
    defaults=DEFAULTS,
    deck_size=len(DECK),
    new_state=_new_state,
    narrate=narrate,
    sample_state=sample_state,
    option_ranges=OPTION_RANGES,
)

__all__ = ["DEFAULTS", "GAME", "TwistedState", "narrate"]
