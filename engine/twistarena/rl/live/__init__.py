"""Every seat's tensor of one live match, kept up to date instead of rebuilt.

``Encoder.encode`` builds a tensor from the seat's observation dict: exact, and
the definition of what a tensor holds, but building the dict and walking it
costs several engine decisions, and a learner asks for a tensor every decision.
``LiveTensors`` keeps each seat's tensor between calls and rewrites only the
zones of the state that changed since that seat last asked (a card played, a
pile grown, the turn passed), writing single elements through a memoryview.

It reads the state itself, not the dict (a seat's first tensor of a match, or
of a Twisted round, is written from zeros by the same code), so it is held to
the dict path: tests/rl/test_live.py plays many random matches of every game
and player count and checks that every seat's live tensor equals the dict
path's at every decision, so it holds exactly what the seat may know and
nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twistarena.engine import State

from ..actions import ActionSpace
from ..native import Observer, SeatTensors, native_tensors, observer
from ..tensors import Encoder
from ..turns import Turns
from .base import LiveTensors
from .tricky_twist import TrickyTwistLive
from .twhist import TwhistLive
from .twisted import TwistedLive

__all__ = ["FollowsLiveTensors", "LiveTensors", "TrickyTwistLive", "TwhistLive", "TwistedLive",
           "live_tensors", "python_live_tensors"]


class FollowsLiveTensors:
    """For an environment whose tensors follow ``turns.state``: ``follow`` makes
    them (``live``, and ``_observation``: a seat's tensor and mask in one call). A
    copy or a pickle leaves them out (memoryviews and the compiled writers cannot
    be copied, and a copy's tensors must follow the copy's own state) and makes
    them anew for the copy."""

    encoder: Encoder
    space: ActionSpace
    turns: Turns
    live: LiveTensors | SeatTensors
    _observation: Observer

    def follow(self, state: State) -> None:
        """Tensors (and observations) of ``state``'s seats from now on."""
        self.live = live_tensors(self.encoder, state)
        self._observation = observer(self.live, self.space)

    def __getstate__(self) -> dict[str, Any]:
        attributes = dict(self.__dict__)
        attributes.pop("live", None)
        attributes.pop("_observation", None)
        return attributes

    def __setstate__(self, attributes: dict[str, Any]) -> None:
        self.__dict__.update(attributes)
        self.follow(self.turns.state)


def live_tensors(encoder: Encoder, state: State) -> LiveTensors | SeatTensors:
    """The seats' tensors of ``state`` for its game (``encoder`` is the game's):
    written by compiled code where it was built, else kept up to date in Python."""
    native = native_tensors(encoder, state)
    if native is not None:
        return native
    return python_live_tensors(encoder, state)


def python_live_tensors(encoder: Encoder, state: State) -> LiveTensors:
    """The ``LiveTensors`` of ``state`` for its game (``encoder`` is the game's)."""
    makers: dict[str, Callable[[Any, Any], LiveTensors]] = {
        "twisted": TwistedLive, "twhist": TwhistLive, "tricky_twist": TrickyTwistLive}
    make = makers.get(state.game_id, LiveTensors)
    return make(encoder, state)
