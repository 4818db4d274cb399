"""What the Python live tensors share: the base class (a seat's tensor rebuilt
from ``State.observation_parts`` for a game without a class of its own) and the
writes of a zone's flags that change only where they differ."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Protocol, cast

import numpy as np
from twistarena.engine import State
from twistarena.engine.core import JSON

from ..tensors import Encoder, Tensor


class Elements(Protocol):
    """A tensor's elements written one at a time (a memoryview of it: cheaper than
    the array's own item assignment)."""

    def __setitem__(self, index: int, value: float, /) -> None: ...


def swap(view: Elements, old: Sequence[int], new: Sequence[int]) -> None:
    """Clear the flags at ``old``, then set those at ``new`` (element positions)."""
    for i in old:
        view[i] = 0.0
    for i in new:
        view[i] = 1.0


def card_flags(view: Elements, base: int, index: Sequence[int], old: list[int],
               new: list[int]) -> None:
    """Card flags at ``base + index[card]``: from showing ``old`` to showing ``new``
    (writing only the cards that differ; most zones change by a card or two)."""
    size = len(old)
    if len(new) >= size and new[:size] == old:  # grown at the end: a row, a pile
        for c in new[size:]:
            view[base + index[c]] = 1.0
        return
    before = set(old)
    gone = before.difference(new)
    for c in gone:
        view[base + index[c]] = 0.0
    if len(new) != size - len(gone):  # not only fewer (the cards of a zone are distinct)
        for c in set(new).difference(before):
            view[base + index[c]] = 1.0


#: a card's place in a zone of a game whose card ids are 0..deck size - 1 already
SAME = tuple(range(64))


def set_bits(view: Elements, base: int, old: int, new: int) -> None:
    """Flag ``base + b`` is bit ``b`` of ``new``; it was bit ``b`` of ``old`` (bitmask
    zones: only the bits that differ are written)."""
    changed = old ^ new
    while changed:
        low = changed & -changed  # the lowest bit that differs
        view[base + low.bit_length() - 1] = 1.0 if new & low else 0.0
        changed ^= low


class LiveTensors:
    """The tensors of ``state``'s seats; ``tensor(seat)`` gives a fresh copy."""

    def __init__(self, encoder: Encoder, state: State) -> None:
        self.encoder = encoder
        self.state = state
        n = state.num_players
        self.tensors = [np.zeros(encoder.size, np.float32) for _ in range(n)]
        #: memoryviews of ``tensors``: writing one element is cheaper through them
        self.views = [cast(Elements, memoryview(t.data)) for t in self.tensors]
        #: per seat, what its tensor shows (game-specific; None: nothing yet)
        self.seen: list[Any] = [None] * n
        #: per seat: observation part slot -> (version, the part's dict)
        self.parts: list[dict[Hashable, tuple[Hashable, JSON]]] = [{} for _ in range(n)]

    def tensor(self, seat: int) -> Tensor:
        """``encoder.encode(state.observation(seat))``, from the kept tensor."""
        self._update(seat)
        return self.tensors[seat].copy()

    def tensor_into(self, seat: int, out: Tensor) -> None:
        """``tensor(seat)`` written into ``out`` (a buffer the caller keeps)."""
        self._update(seat)
        out[:] = self.tensors[seat]

    def _update(self, seat: int) -> None:
        """Bring ``tensors[seat]`` up to date (subclasses rewrite only what changed).

        Here, for a game without a class of its own: the dict path, with the
        observation made of ``State.observation_slots`` and each part rebuilt only
        when its version changed (as the wire's ``ObservationEncoder`` does)."""
        kept = self.parts[seat]
        observation: dict[str, Any] = {}
        state = self.state
        for slot, version in state.observation_slots(seat):
            part = kept.get(slot)
            if version is None or part is None or part[0] != version:
                part = (version, state.observation_part(seat, slot))
                if version is not None:
                    kept[slot] = part
            for key, value in part[1].items():
                if key in observation:  # parts' lists of the same key are joined
                    value = [*observation[key], *value]
                observation[key] = value
        self.encoder.encode_into(self.tensors[seat], observation)
