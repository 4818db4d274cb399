"""twistarena.engine: the rules of the three games as a pure, deterministic library.

No I/O, no asyncio, no network: options + seed + actions determine a match.

    >>> from twistarena import engine
    >>> state = engine.make("tricky_twist", 4, seed=7)
    >>> seat = state.to_act()[0]
    >>> state.apply(seat, state.legal_action_ids(seat)[0])
"""

from .core import (
    JSON,
    Action,
    EngineError,
    Event,
    GameInfo,
    IllegalAction,
    InvalidObservation,
    InvalidOptions,
    ObservationPart,
    State,
)
from .registry import GAME_IDS, game, games, make, replay, sample_state

__all__ = [
    "GAME_IDS",
    "JSON",
    "Action",
    "EngineError",
    "Event",
    "GameInfo",
    "IllegalAction",
    "InvalidObservation",
    "InvalidOptions",
    "ObservationPart",
    "State",
    "game",
    "games",
    "make",
    "replay",
    "sample_state",
]
