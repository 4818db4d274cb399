"""Seats' tensors and action masks written by compiled code (``_native``).

``live.LiveTensors`` keeps each seat's tensor and catches it up on every move
in Python, which costs two to three engine decisions per step. The compiled
writers fill a seat's tensor from scratch, straight from the engine state, in
a fraction of one decision; they keep nothing between calls, so there is
nothing to catch up, and a copy of an environment needs nothing rebuilt.

The extension is optional: where it was not built (no C compiler when the
package was installed) ``available()`` is false and ``live.live_tensors`` and
``ActionSpace.mask`` fall back to Python; ``use_compiled(False)`` does the same
on purpose. tests/rl/test_live.py holds the compiled writers to the dict path
(``Encoder.encode``) at every decision of many random matches and checks that
this build has them; tests/rl/test_native.py gives them bad input.

Each writer (csrc/<game>.c) is given, besides the state: a getter of the state
attributes it reads (an ``operator.attrgetter`` of the names the writer gives:
one call that reads them all in C, with the compiled engine in about 60% of
the time of a Python function's attribute loads; with the interpreted engine,
whose attribute loads the interpreter specialises, it costs a few tenths of a
microsecond more), the start of each segment of the tensor, and the game's
tables. The writer names what it reads (``_native.WRITERS``): the getter is
made from its field names, the layout is taken from the encoder's segments and
the tables from a dict by those names, so that none can drift out of the
writer's order; the writer refuses a layout or tables of another length or
kind, and tests/rl/test_native.py holds each getter to the writer's fields.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt
from twistarena.engine import State
from twistarena.engine.tricky_twist import cards as tt_cards
from twistarena.engine.tricky_twist.data import SCORING_CARDS
from twistarena.engine.tricky_twist.state import END_BONUS as TT_END_BONUS
from twistarena.engine.tricky_twist.state import GAME_OVER as TT_OVER
from twistarena.engine.tricky_twist.state import RESERVE as TT_RESERVE
from twistarena.engine.tricky_twist.state import TrickyTwistState
from twistarena.engine.twhist.cards import TWHIST_BASE as TH_BASE
from twistarena.engine.twhist.cards import TWHIST_NAMES as TH_TWHIST_NAMES
from twistarena.engine.twhist.state import PHASES as TH_PHASES
from twistarena.engine.twhist.state import PICK as TH_PICK
from twistarena.engine.twhist.state import PLAY as TH_PLAY
from twistarena.engine.twhist.state import TwhistState
from twistarena.engine.twisted import cards as tw_cards
from twistarena.engine.twisted.state import OVER as TW_OVER
from twistarena.engine.twisted.state import TwistedState

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
    per_seat,
)

if TYPE_CHECKING:
    from .actions import ActionSpace

try:
    from . import _native
except ImportError:  # not built: the Python paths serve
    _native = None  # type: ignore[assignment]


#: (legal ids, engine id -> mask index, mask size) -> the int8 mask
MaskWriter = Callable[[Iterable[int], tuple[int, ...], int], "npt.NDArray[np.int8]"]


def available() -> bool:
    """Whether the compiled writers were built with this package."""
    return _native is not None


#: whether environments made from now on use the compiled writers (``use_compiled``)
_in_use = _native is not None
#: the compiled mask writer while in use (``ActionSpace.mask`` reads it), else None
compiled_mask: MaskWriter | None = _native.mask if _native is not None else None


def use_compiled(on: bool) -> bool:
    """Use the compiled writers (where built) for tensors and masks made from now on,
    or the Python paths (to compare them, or to rule the compiled code out); the
    setting before. Environments already made keep their tensors until reset."""
    global _in_use, compiled_mask
    before = _in_use
    _in_use = on and _native is not None
    compiled_mask = _native.mask if _in_use else None
    return before


def in_use() -> bool:
    """Whether the compiled writers serve (built, and not turned off)."""
    return _in_use


class SeatTensors(Protocol):
    """A match's seats' tensors: ``tensor(seat)`` is a new array of the state as it is."""

    def tensor(self, seat: int, /) -> Tensor: ...

    def tensor_into(self, seat: int, out: Tensor, /) -> None: ...


#: what a game's Python side gives its writer: the fields getter (state -> the
#: attributes the writer reads, in the order of its ``fields``), the layout and
#: the tables
Arguments = tuple[Callable[[Any], tuple[Any, ...]], tuple[int, ...], tuple[Any, ...]]
#: a game's writer's tables, by the names it gives them
Tables = dict[str, Any]


def _twisted_tables(encoder: TwistedEncoder, state: TwistedState) -> Tables:
    """The deck's places, the phases and the match's constants."""
    return {"card_place": _TW_INDEX, "is_toad": tw_cards.IS_TOAD, "phases": _TW_PHASES,
            "over": TW_OVER, "deck_size": _TW_K, "rounds": state.rounds,
            "distance": state.distance, "expert": state.expert,
            "plus_point": state.plus_point, "minus_point": state.minus_point,
            "toad_penalty": state.toad_penalty}


def _twhist_tables(encoder: TwhistEncoder, state: TwhistState) -> Tables:
    """The state's colours, Twhist kinds, phases and FLIP bits as the encoder places
    them, the play and pick phases, the first Twhist action id, the number of
    number cards, the match's tricks and whether Twhist cards lie open."""
    t = state.t
    return {"colour_place": tuple(encoder.colours.index(c) for c in t.colours),
            "twhist_place": tuple(_TH_TWHIST.index(name) for name in TH_TWHIST_NAMES),
            "phase_place": tuple(_TH_PHASES.index(phase) for phase in TH_PHASES),
            "star_place": tuple(b + t.flip_min - encoder.flip_min for b in range(len(t.stars))),
            "play": TH_PLAY, "pick": TH_PICK, "twhist_base": TH_BASE, "deck_size": _TH_K,
            "tricks_total": state.tricks_total, "twhist_visible": t.twhist_visible}


#: every face a variable bonus card may show (state.parse_face) -> its face kind
_TT_FACE_KIND = {face: _face_kind(face) for face in (
    *(kind for kind in tt_cards.FACE_KINDS if kind != "symbol"),
    *(f"symbol_{a}_{b}" for a in tt_cards.FAMILIES for b in tt_cards.FAMILIES if a != b))}
#: the decision's kind is the phase but in the end bonus and at the end (-1)
_TT_PHASE_KIND = tuple(-1 if phase in (TT_END_BONUS, TT_OVER) else _TT_KINDS.index(phase)
                       for phase in _TT_PHASES)


def _tricky_twist_tables(encoder: TrickyTwistEncoder, state: TrickyTwistState) -> Tables:
    """The deck's and bonus cards' ids and names, the phases, the scoring cards' and
    faces' places, and the match's rounds."""
    return {"card_place": tuple(range(tt_cards.DECK_SIZE)), "family": tt_cards.FAMILY_OF,
            "phases": _TT_PHASES, "phase_kind": _TT_PHASE_KIND,
            "reserve_phase": _TT_PHASES.index(TT_RESERVE), "kinds": _TT_KINDS,
            "bonus_names": _TT_BONUS, "bonus_place": tuple(range(len(_TT_BONUS))),
            "scoring_place": {name: i for i, name in enumerate(SCORING_CARDS)},
            "face_kind": _TT_FACE_KIND, "variable": tt_cards.VARIABLE,
            "face_kinds": len(tt_cards.FACE_KINDS), "rounds": state.rounds}


#: per game: its writer's tables
_TABLES: dict[str, Callable[[Any, Any], Tables]] = {
    "twisted": _twisted_tables, "twhist": _twhist_tables, "tricky_twist": _tricky_twist_tables}
#: per game: the getter of the state's fields its writer reads (``fields_getter``)
_GETTERS: dict[str, Callable[[Any], tuple[Any, ...]]] = {}


def fields_getter(game_id: str) -> Callable[[Any], tuple[Any, ...]]:
    """State -> the attributes ``game_id``'s writer reads, in the order it names them
    (``WRITERS[game_id]["fields"]``), as one ``attrgetter`` of those names."""
    getter = _GETTERS.get(game_id)
    if getter is None:
        getter = _GETTERS[game_id] = attrgetter(*_native.WRITERS[game_id]["fields"])
    return getter


def writer_layout(encoder: Encoder, described: Mapping[str, Any]) -> tuple[int, ...]:
    """The start of each segment the writer ``described`` (``WRITERS[game]``) names,
    in its order: its segments, then each relative seat's (``ValueError``: the
    encoder has no such segment, or one of another length than the writer's)."""
    segments = {s.name: s for s in encoder.segments}
    names = [name for name, _ in described["segments"]]
    lengths = [length for _, length in described["segments"]]
    for r in range(encoder.num_players):
        names.extend(per_seat(name, r) for name, _ in described["seat_segments"])
        lengths.extend(length for _, length in described["seat_segments"])
    starts = []
    for name, length in zip(names, lengths, strict=True):
        segment = segments.get(name)
        if segment is None or (length and segment.length != length):
            raise ValueError(f"the {encoder.game_id} writer writes {name!r}"
                             f"{f' of {length}' if length else ''}; the encoder has"
                             f" {segment.length if segment else 'no such segment'}")
        starts.append(segment.start)
    return tuple(starts)


def writer_tables(tables: Tables, described: Mapping[str, Any]) -> tuple[Any, ...]:
    """``tables`` in the order the writer ``described`` names them (``ValueError``:
    one is missing or not read)."""
    names = described["tables"]
    if set(tables) != set(names):
        raise ValueError(f"the writer reads the tables {sorted(names)}, given {sorted(tables)}")
    return tuple(tables[name] for name in names)


#: each encoder's layout as its writer reads it (an encoder's segments never change,
#: and an environment makes its writer anew at every reset)
_LAYOUTS: WeakKeyDictionary[Encoder, tuple[int, ...]] = WeakKeyDictionary()


def writer_arguments(encoder: Encoder, state: State) -> Arguments:
    """What ``state``'s game's writer is given besides the state: its fields getter,
    the tensor's layout and the game's tables (``KeyError``: no writer)."""
    tables = _TABLES[state.game_id]
    described = _native.WRITERS[state.game_id]
    layout = _LAYOUTS.get(encoder)
    if layout is None:
        layout = _LAYOUTS[encoder] = writer_layout(encoder, described)
    return (fields_getter(state.game_id), layout,
            writer_tables(tables(encoder, state), described))


def native_tensors(encoder: Encoder, state: State) -> SeatTensors | None:
    """The compiled writer of ``state``'s game, or None (not built, or no such game)."""
    if not _in_use or state.game_id not in _TABLES:
        return None
    fields, layout, tables = writer_arguments(encoder, state)
    return _native.SeatTensors(state.game_id, state, fields, encoder.size, layout, tables)


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
