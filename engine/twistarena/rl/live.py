"""Every seat's tensor of one live match, kept up to date instead of rebuilt.

``Encoder.encode`` builds a tensor from the seat's observation dict: exact, and
the definition of what a tensor holds, but building the dict and walking it
costs several engine decisions, and a learner asks for a tensor every decision.
``LiveTensors`` keeps each seat's tensor between calls and rewrites only the
zones of the state that changed since that seat last asked (a card played, a
pile grown, the turn passed), writing single elements through a memoryview.

It reads the state itself, not the dict, so it is held to the dict path: on
anything rare or involved (a new round, the end of the match) it rebuilds the
seat's tensor with ``Encoder.encode_into(state.observation(seat))``, and
tests/rl/test_live.py plays many random matches of every game and player count
and checks that every seat's live tensor equals the dict path's at every
decision, so it holds exactly what the seat may know and nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, cast

import numpy as np
from twistarena.engine import State
from twistarena.engine.twhist.cards import DECK_SIZE as TH_DECK_SIZE
from twistarena.engine.twhist.cards import TWHIST_BASE
from twistarena.engine.twhist.state import TwhistState
from twistarena.engine.twisted.state import OVER as TW_OVER
from twistarena.engine.twisted.state import TwistedState

from .tensors import _TW_INDEX, _TW_K, _TW_PHASES, Encoder, Tensor, TwhistEncoder, TwistedEncoder


class Elements(Protocol):
    """A tensor's elements written one at a time (a memoryview of it: cheaper than
    the array's own item assignment)."""

    def __setitem__(self, index: int, value: float, /) -> None: ...


assert TWHIST_BASE == TH_DECK_SIZE  # a trick block: 32 number cards, then the 4 Twhist cards


def _swap(view: Elements, old: Sequence[int], new: Sequence[int]) -> None:
    """Clear the flags at ``old``, then set those at ``new`` (element positions)."""
    for i in old:
        view[i] = 0.0
    for i in new:
        view[i] = 1.0


def _cards(view: Elements, base: int, index: Sequence[int], old: list[int],
           new: list[int]) -> None:
    """Card flags at ``base + index[card]``: from showing ``old`` to showing ``new``
    (writing only the cards that differ; most zones change by a card or two)."""
    size = len(old)
    if len(new) >= size and new[:size] == old:  # grown at the end: a row, a pile
        for c in new[size:]:
            view[base + index[c]] = 1.0
        return
    before = set(old)
    for c in before.difference(new):
        view[base + index[c]] = 0.0
    for c in set(new).difference(before):
        view[base + index[c]] = 1.0


#: a card's place in a zone of a game whose card ids are 0..deck size - 1 already
_SAME = tuple(range(64))


def _bits(mask: int, base: int) -> list[int]:
    """``base + b`` for every bit ``b`` set in ``mask``."""
    out = []
    b = 0
    while mask:
        if mask & 1:
            out.append(base + b)
        mask >>= 1
        b += 1
    return out


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

    def tensor(self, seat: int) -> Tensor:
        """``encoder.encode(state.observation(seat))``, from the kept tensor."""
        self._update(seat)
        return self.tensors[seat].copy()

    def _update(self, seat: int) -> None:
        """Bring ``tensors[seat]`` up to date (subclasses rewrite only what changed)."""
        self._rebuild(seat)

    def _rebuild(self, seat: int) -> None:
        self.encoder.encode_into(self.tensors[seat], self.state.observation(seat))


# -- Twisted -----------------------------------------------------------------------


class _TwistedSeen:
    """What one seat's Twisted tensor shows; within a round piles only grow."""

    __slots__ = ("decisions", "hand", "phase", "pile", "round", "row", "sizes", "turn")

    def __init__(self, state: TwistedState) -> None:
        """As an all-zero tensor of ``state``'s round would show it."""
        self.round = state.round
        self.decisions = len(state.history)
        self.hand: list[int] = []
        self.row: list[int] = []
        self.phase = ""
        self.turn = -1
        self.pile = -1
        self.sizes = [(-1, -1, 0, 0)] * state.num_players


def _tw_sizes(state: TwistedState, seat: int) -> tuple[int, int, int, int]:
    return (len(state.hands[seat]), len(state.face_down[seat]), len(state.plus[seat]),
            len(state.minus[seat]))


class TwistedLive(LiveTensors):
    """Twisted: the row, the turn and the mover's hand change every decision; within
    a round only a seat that moved changes its hand and piles. A new round starts
    the tensor from zeros; the end of the match rebuilds it."""

    def __init__(self, encoder: TwistedEncoder, state: TwistedState) -> None:
        super().__init__(encoder, state)
        self.enc = encoder
        self.tw = state

    def _update(self, seat: int) -> None:
        st, seen = self.tw, self.seen[seat]
        if st.phase == TW_OVER:
            self._rebuild(seat)
            self.seen[seat] = None
            return
        enc, view, index, n = self.enc, self.views[seat], _TW_INDEX, st.num_players
        movers: Iterable[int]
        if seen is None or seen.round != st.round:
            seen = self.seen[seat] = self._new_round(seat)
            movers = range(n)
        else:
            movers = {s for s, _ in st.history[seen.decisions:]}
        hand = st.hands[seat]
        if hand != seen.hand:
            _cards(view, enc.hand, index, seen.hand, hand)
            seen.hand = list(hand)
        row = st.row
        if row != seen.row:
            right, old = enc.right, seen.row
            _cards(view, enc.row, index, old, row)
            if old:
                view[right + index[old[-1]]] = 0.0
            if row:
                view[right + index[row[-1]]] = 1.0
            view[enc.numbers] = len(row) / 10
            seen.row = list(row)
        if st.phase != seen.phase:
            if seen.phase:
                view[enc.phase + _TW_PHASES.index(seen.phase)] = 0.0
            view[enc.phase + _TW_PHASES.index(st.phase)] = 1.0
            seen.phase = st.phase
        if st.turn != seen.turn:
            if seen.turn >= 0:
                view[enc.to_act + (seen.turn - seat) % n] = 0.0
            view[enc.to_act + (st.turn - seat) % n] = 1.0
            seen.turn = st.turn
        if len(st.pile) != seen.pile:
            seen.pile = len(st.pile)
            view[enc.numbers + 1] = seen.pile / _TW_K
        for s in movers:
            self._seat_moved(view, seat, s, seen)
        seen.decisions = len(st.history)

    def _new_round(self, seat: int) -> _TwistedSeen:
        """Zero ``seat``'s tensor and write what stays fixed for the round."""
        st, enc, view, n = self.tw, self.enc, self.views[seat], self.tw.num_players
        self.tensors[seat].fill(0.0)
        view[enc.starter + (st.starter - seat) % n] = 1.0
        numbers = enc.numbers
        view[numbers + 2] = st.round / st.rounds
        view[numbers + 3] = st.rounds / 20
        view[numbers + 4] = st.distance / 86
        view[numbers + 5] = float(st.expert)
        for s in range(n):
            view[enc.seats[(s - seat) % n][2] + 3] = st.totals[s] / 10
        return _TwistedSeen(st)

    def _seat_moved(self, view: Elements, seat: int, s: int, seen: _TwistedSeen) -> None:
        """Rewrite what changed of seat ``s``'s hand count and piles."""
        st, index = self.tw, _TW_INDEX
        old, new = seen.sizes[s], _tw_sizes(st, s)
        if old == new:
            return
        plus, minus, counts = self.enc.seats[(s - seat) % st.num_players]
        view[counts] = new[0] / 9
        view[counts + 1] = new[1]
        if old[2:] != new[2:]:
            for c in st.plus[s][old[2]:]:
                view[plus + index[c]] = 1.0
            for c in st.minus[s][old[3]:]:
                view[minus + index[c]] = 1.0
            view[counts + 2] = st._round_score(s) / 10
        seen.sizes[s] = new


# -- Twhist ------------------------------------------------------------------------


class _TwhistSeen:
    """What one seat's Twhist tensor shows: each zone as the element positions it
    set (flags) or the state values it was written from (numbers)."""

    __slots__ = ("discard", "flips", "hand", "key", "lead", "picked", "pool", "sizes",
                 "trick", "twhist", "voids")

    def __init__(self, live: TwhistLive, seat: int) -> None:
        st = live.th
        self.hand = list(st.hands[seat])
        self.key = live.key(seat)
        self.trick = live.trick_flags(seat)
        self.lead = st.lead_colour
        self.picked = list(st.picked)
        self.pool = list(st.pool)
        self.discard = len(st.discard)
        self.twhist = list(st.twhist)
        self.flips = list(st.flips)
        self.voids = list(st.voids)
        self.sizes = [len(h) for h in st.hands]


class TwhistLive(LiveTensors):
    """Twhist: the trick, the pick and the FLIP cards change; the discard grows."""

    def __init__(self, encoder: TwhistEncoder, state: TwhistState) -> None:
        super().__init__(encoder, state)
        self.enc = encoder
        self.th = state
        t = state.t
        #: the encoder's colour order is the options'; the state's tables use the same
        assert list(t.colours) == encoder.colours and t.flip_min == encoder.flip_min

    def key(self, seat: int) -> tuple[int, ...]:
        """The one-hot zones (phase, to_act, roles) and the trick count."""
        st = self.th
        return (st.phase, st.turn, st.dealer, st.leader, st.picker, st.next_leader,
                st.tricks_done)

    def trick_flags(self, seat: int) -> list[int]:
        st, enc = self.th, self.enc
        n, k, block = st.num_players, TWHIST_BASE, enc.trick
        out = []
        s = st.leader
        for a in st.trick:
            start = block + (s - seat) % n * (k + 4)
            out.append(start + a)  # a Twhist card's id (TWHIST_BASE + kind) follows the 32
            s = (s + 1) % n
        return out

    def _update(self, seat: int) -> None:
        st, seen = self.th, self.seen[seat]
        if seen is None:
            self._rebuild(seat)
            self.seen[seat] = _TwhistSeen(self, seat)
            return
        enc, view, n = self.enc, self.views[seat], st.num_players
        hand = st.hands[seat]
        if hand != seen.hand:
            _cards(view, enc.hand, _SAME, seen.hand, hand)
            seen.hand = list(hand)
        key = self.key(seat)
        if key != seen.key:
            self._rewrite_key(view, seat, seen.key, key)
            seen.key = key
        trick = self.trick_flags(seat)
        if trick != seen.trick:
            _swap(view, seen.trick, trick)
            seen.trick = trick
        if st.lead_colour != seen.lead:
            if seen.lead >= 0:
                view[enc.lead + seen.lead] = 0.0
            if st.lead_colour >= 0:
                view[enc.lead + st.lead_colour] = 1.0
            seen.lead = st.lead_colour
        if st.picked != seen.picked:
            _cards(view, enc.picked, _SAME, seen.picked, st.picked)
            seen.picked = list(st.picked)
        if st.pool != seen.pool:
            _cards(view, enc.pool, _SAME, seen.pool, st.pool)
            seen.pool = list(st.pool)
        if len(st.discard) != seen.discard:
            for c in st.discard[seen.discard:]:
                view[enc.discard + c] = 1.0
            seen.discard = len(st.discard)
        if st.twhist != seen.twhist or st.flips != seen.flips or st.voids != seen.voids:
            self._rewrite_players(view, seat, seen)
        sizes = [len(h) for h in st.hands]
        if sizes != seen.sizes:
            for s in range(n):
                if sizes[s] != seen.sizes[s]:
                    view[enc.players[(s - seat) % n][3]] = sizes[s] / 10
            seen.sizes = sizes

    def _rewrite_key(self, view: Elements, seat: int, old: tuple[int, ...],
                     new: tuple[int, ...]) -> None:
        enc = self.enc
        _swap(view, self._key_flags(seat, old), self._key_flags(seat, new))
        view[enc.numbers] = new[6] / self.th.tricks_total

    def _key_flags(self, seat: int, key: tuple[int, ...]) -> list[int]:
        enc, n = self.enc, self.th.num_players
        phase, turn, *roles = key[:6]
        out = [enc.phase + phase]
        if phase != 2:  # over: nobody acts
            out.append(enc.to_act + ((roles[2] if phase == 1 else turn) - seat) % n)
        out.extend(enc.roles + i * n + (s - seat) % n for i, s in enumerate(roles) if s >= 0)
        return out

    def _rewrite_players(self, view: Elements, seat: int, seen: _TwhistSeen) -> None:
        st, enc, n = self.th, self.enc, self.th.num_players
        visible = st.t.twhist_visible
        for s in range(n):
            tw, flips, voids = st.twhist[s], st.flips[s], st.voids[s]
            if (tw, flips, voids) == (seen.twhist[s], seen.flips[s], seen.voids[s]):
                continue
            twhist, star, void, counts = enc.players[(s - seat) % n]
            if visible or s == seat:
                _swap(view, _bits(seen.twhist[s], twhist), _bits(tw, twhist))
            if s == seat:
                _swap(view, _bits(seen.twhist[s], enc.twhist_hand), _bits(tw, enc.twhist_hand))
            _swap(view, _bits(seen.flips[s], star), _bits(flips, star))
            _swap(view, _bits(seen.voids[s], void), _bits(voids, void))
            view[counts + 1] = tw.bit_count() / 4
            view[counts + 2] = st.stars[s] / 10
            view[counts + 3] = flips.bit_count() / 10
        seen.twhist, seen.flips, seen.voids = list(st.twhist), list(st.flips), list(st.voids)


def live_tensors(encoder: Encoder, state: State) -> LiveTensors:
    """The ``LiveTensors`` of ``state`` for its game (``encoder`` is the game's)."""
    makers: dict[str, Callable[[Any, Any], LiveTensors]] = {
        "twisted": TwistedLive, "twhist": TwhistLive}
    make = makers.get(state.game_id, LiveTensors)
    return make(encoder, state)
