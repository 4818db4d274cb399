"""Seats' tensors and action masks written by compiled code (``_native``).

``live.LiveTensors`` keeps each seat's tensor and catches it up on every move
in Python, which costs two to three engine decisions per step. The compiled
writers fill a seat's tensor from scratch, straight from the engine state, in
a fraction of one decision; they keep nothing between calls, so there is
nothing to catch up, and a copy of an environment needs nothing rebuilt.

The extension is optional: where it was not built (no C compiler when the
package was installed) ``available()`` is false and ``live.live_tensors`` and
``ActionSpace.mask`` fall back to Python. tests/rl/test_native.py holds the
compiled writers to the dict path (``Encoder.encode``) at every decision of many
random matches, and checks that this build has them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt
from twistarena.engine import State
from twistarena.engine.tricky_twist import cards as tt_cards
from twistarena.engine.tricky_twist.data import SCORING_CARDS
from twistarena.engine.tricky_twist.state import END_BONUS as TT_END_BONUS
from twistarena.engine.tricky_twist.state import GAME_OVER as TT_OVER
from twistarena.engine.tricky_twist.state import RESERVE as TT_RESERVE
from twistarena.engine.twhist.cards import TWHIST_BASE as TH_BASE
from twistarena.engine.twhist.cards import TWHIST_NAMES as TH_TWHIST_NAMES
from twistarena.engine.twhist.state import PHASES as TH_PHASES
from twistarena.engine.twhist.state import PICK as TH_PICK
from twistarena.engine.twhist.state import PLAY as TH_PLAY
from twistarena.engine.twhist.state import TwhistState
from twistarena.engine.twisted import cards as tw_cards
from twistarena.engine.twisted.state import OVER as TW_OVER

from .tensors import (
    _TH_K,
    _TH_PHASES,
    _TH_TWHIST,
    _TT_BONUS,
    _TT_KINDS,
    _TT_PHASES,
    _TW_INDEX,
    _TW_K,
    _TW_PHASES,
    Encoder,
    Tensor,
    TrickyTwistEncoder,
    TwhistEncoder,
    TwistedEncoder,
    _face_kind,
)

if TYPE_CHECKING:
    from .actions import ActionSpace

try:
    from . import _native
except ImportError:  # not built: the Python paths serve
    _native = None  # type: ignore[assignment]


def available() -> bool:
    """Whether the compiled writers were built with this package."""
    return _native is not None


class SeatTensors(Protocol):
    """A match's seats' tensors: ``tensor(seat)`` is a new array of the state as it is."""

    def tensor(self, seat: int, /) -> Tensor: ...


def twisted_arguments(encoder: TwistedEncoder) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """The Twisted writer's layout and tables (their order: csrc/twisted.c)."""
    layout = (encoder.hand, encoder.row, encoder.right, encoder.phase, encoder.to_act,
              encoder.starter, encoder.numbers,
              *(start for block in encoder.seats for start in block))
    return layout, (_TW_INDEX, tw_cards.IS_TOAD, _TW_PHASES, TW_OVER, _TW_K)


def _twisted(encoder: TwistedEncoder, state: State) -> SeatTensors:
    assert _native is not None
    return _native.SeatTensors("twisted", state, encoder.size, *twisted_arguments(encoder))


def _twhist(encoder: TwhistEncoder, state: State) -> SeatTensors:
    """Layout: hand, twhist_hand, trick, lead_colour, picked, pool, open_cards,
    discard, phase, to_act, roles, numbers, then each relative seat's twhist,
    star_side, void and counts. Tables: the state's colours, Twhist kinds, phases
    and FLIP bits as the encoder places them, then the play and pick phases, the
    first Twhist action id and the number of number cards."""
    assert isinstance(state, TwhistState)
    t = state.t
    layout = (encoder.hand, encoder.twhist_hand, encoder.trick, encoder.lead, encoder.picked,
              encoder.pool, encoder.open, encoder.discard, encoder.phase, encoder.to_act,
              encoder.roles, encoder.numbers,
              *(start for block in encoder.players for start in block))
    tables = (tuple(encoder.colours.index(c) for c in t.colours),
              tuple(_TH_TWHIST.index(name) for name in TH_TWHIST_NAMES),
              tuple(_TH_PHASES.index(phase) for phase in TH_PHASES),
              tuple(b + t.flip_min - encoder.flip_min for b in range(len(t.stars))),
              TH_PLAY, TH_PICK, TH_BASE, _TH_K)
    assert _native is not None
    return _native.SeatTensors("twhist", state, encoder.size, layout, tables)


#: every face a variable bonus card may show (state.parse_face) -> its face kind
_TT_FACE_KIND = {face: _face_kind(face) for face in (
    *(kind for kind in tt_cards.FACE_KINDS if kind != "symbol"),
    *(f"symbol_{a}_{b}" for a in tt_cards.FAMILIES for b in tt_cards.FAMILIES if a != b))}


def _tricky_twist(encoder: TrickyTwistEncoder, state: State) -> SeatTensors:
    """Layout: the 18 zones of the table and the round (hand .. numbers), then each
    relative seat's 8 (known_in_hand .. counts); the tables as csrc/tricky_twist.c
    lists them."""
    layout = (encoder.hand, encoder.reserve, encoder.trick, encoder.led, encoder.phase,
              encoder.kind, encoder.decider, encoder.bonus, encoder.queues, encoder.to_act,
              encoder.first, encoder.leader, encoder.scoring, encoder.past, encoder.supply,
              encoder.out_, encoder.faces, encoder.numbers,
              *(start for block in encoder.players for start in block))
    #: the decision's kind is the phase but in the end bonus and at the end
    phase_kind = tuple(-1 if phase in (TT_END_BONUS, TT_OVER) else _TT_KINDS.index(phase)
                       for phase in _TT_PHASES)
    tables = (tuple(range(tt_cards.DECK_SIZE)), tt_cards.FAMILY_OF, _TT_PHASES, phase_kind,
              _TT_PHASES.index(TT_RESERVE), _TT_KINDS, _TT_BONUS, tuple(range(len(_TT_BONUS))),
              {name: i for i, name in enumerate(SCORING_CARDS)}, _TT_FACE_KIND,
              tt_cards.VARIABLE, len(tt_cards.FACE_KINDS))
    assert _native is not None
    return _native.SeatTensors("tricky_twist", state, encoder.size, layout, tables)


def native_tensors(encoder: Encoder, state: State) -> SeatTensors | None:
    """The compiled writer of ``state``'s game, or None (not built, or no such game)."""
    if _native is None:
        return None
    makers: dict[str, Callable[[Any, State], SeatTensors]] = {
        "twisted": _twisted, "twhist": _twhist, "tricky_twist": _tricky_twist}
    make = makers.get(state.game_id)
    return make(encoder, state) if make is not None else None


MaskWriter = Callable[[Iterable[int], tuple[int, ...], int], "npt.NDArray[np.int8]"]
#: (seat, its legal ids) -> PettingZoo's observation: its tensor and action mask
Observer = Callable[[int, Sequence[int]], dict[str, Any]]


def observer(tensors: SeatTensors | Any, space: ActionSpace) -> Observer:
    """``{"observation": tensors.tensor(seat), "action_mask": space.mask(legal_ids)}``:
    one compiled call where ``tensors`` are the compiled writer's (the environments
    ask for it every step)."""
    if _native is not None and isinstance(tensors, _native.SeatTensors):
        return partial(tensors.observation, space.index_tuple, space.size)
    tensor, mask = tensors.tensor, space.mask

    def observe_in_python(seat: int, legal_ids: Sequence[int]) -> dict[str, Any]:
        return {"observation": tensor(seat), "action_mask": mask(legal_ids)}
    return observe_in_python


def mask_writer() -> MaskWriter | None:
    """``_native.mask(legal_ids, index, size)``, or None where it was not built."""
    return None if _native is None else _native.mask
