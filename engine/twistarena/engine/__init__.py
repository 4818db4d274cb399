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
    ObservationSlot,
    State,
)
from .registry import GAME_IDS, game, games, make, replay, sample_state

#: The modules a decision runs through, which an install with a C compiler builds
#: with mypyc (setup.py); everything else here is always interpreted.
COMPILED_MODULES = ("core", "dealing", "tricky_twist.actions", "tricky_twist.cards",
                    "tricky_twist.faces", "tricky_twist.hidden", "tricky_twist.scoring",
                    "tricky_twist.state", "tricky_twist.views",
                    "twhist.cards", "twhist.state", "twisted.cards", "twisted.state")


def compiled() -> bool:
    """Whether the rules run compiled in this process (the same rules either way)."""
    from . import core

    return not core.__file__.endswith(".py")


__all__ = [
    "COMPILED_MODULES",
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
    "ObservationSlot",
    "State",
    "compiled",
    "game",
    "games",
    "make",
    "replay",
    "sample_state",
]
