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

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol, cast

import numpy as np
from twistarena.engine import State
from twistarena.engine.core import JSON
from twistarena.engine.tricky_twist import cards as tt_cards
from twistarena.engine.tricky_twist.cards import FAMILY_OF
from twistarena.engine.tricky_twist.data import SCORING_CARDS
from twistarena.engine.tricky_twist.state import END_BONUS as TT_END_BONUS
from twistarena.engine.tricky_twist.state import GAME_OVER as TT_OVER
from twistarena.engine.tricky_twist.state import RESERVE as TT_RESERVE
from twistarena.engine.tricky_twist.state import FalseTrick, TrickyTwistState
from twistarena.engine.twhist.cards import DECK_SIZE as TH_DECK_SIZE
from twistarena.engine.twhist.cards import TWHIST_BASE
from twistarena.engine.twhist.state import OVER as TH_OVER
from twistarena.engine.twhist.state import PICK as TH_PICK
from twistarena.engine.twhist.state import TwhistState
from twistarena.engine.twisted.state import OVER as TW_OVER
from twistarena.engine.twisted.state import TwistedState

from .actions import ActionSpace
from .native import Observer, SeatTensors, native_tensors, observer
from .tensors import (
    _TT_BONUS,
    _TT_K,
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
from .turns import Turns


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


def _change(view: Elements, old: Sequence[int], new: Sequence[int]) -> None:
    """``_swap`` writing only the positions that differ (for long lists of flags)."""
    before, after = set(old), set(new)
    for i in before.difference(after):
        view[i] = 0.0
    for i in after.difference(before):
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
    gone = before.difference(new)
    for c in gone:
        view[base + index[c]] = 0.0
    if len(new) != size - len(gone):  # not only fewer (the cards of a zone are distinct)
        for c in set(new).difference(before):
            view[base + index[c]] = 1.0


#: a card's place in a zone of a game whose card ids are 0..deck size - 1 already
_SAME = tuple(range(64))


def _set_bits(view: Elements, base: int, old: int, new: int) -> None:
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

    def _update(self, seat: int) -> None:
        """Bring ``tensors[seat]`` up to date (subclasses rewrite only what changed).

        Here, for a game without a class of its own: the dict path, with the
        observation made of ``State.observation_parts`` and each part rebuilt only
        when its version changed (as the wire's ``ObservationEncoder`` does)."""
        kept = self.parts[seat]
        observation: dict[str, Any] = {}
        for slot, version, build in self.state.observation_parts(seat):
            part = kept.get(slot)
            if version is None or part is None or part[0] != version:
                part = (version, build())
                if version is not None:
                    kept[slot] = part
            for key, value in part[1].items():
                if key in observation:  # parts' lists of the same key are joined
                    value = [*observation[key], *value]
                observation[key] = value
        self.encoder.encode_into(self.tensors[seat], observation)


# -- Twisted -----------------------------------------------------------------------


class _TwistedSeen:
    """What one seat's Twisted tensor shows; within a round piles only grow."""

    __slots__ = ("hand", "phase", "pile", "round", "row", "sizes", "totals", "turn")

    def __init__(self, state: TwistedState) -> None:
        """As an all-zero tensor of ``state``'s round would show it."""
        self.round = state.round
        self.hand: list[int] = []
        self.row: list[int] = []
        self.phase = ""
        self.turn = -1
        self.pile = -1
        self.sizes = [(-1, -1, 0, 0)] * state.num_players
        self.totals = [0] * state.num_players


class TwistedLive(LiveTensors):
    """Twisted: the row, the turn and the mover's hand change every decision; within
    a round only a seat that moved changes its hand and piles. A new round starts
    the tensor from zeros; at the end the face-down cards join the minus piles and
    the totals change."""

    def __init__(self, encoder: TwistedEncoder, state: TwistedState) -> None:
        super().__init__(encoder, state)
        self.enc = encoder
        self.tw = state
        self.round_scores: list[tuple[tuple[int, int, int], int]] = (
            [((-1, -1, -1), 0)] * state.num_players)

    def _update(self, seat: int) -> None:
        st, seen = self.tw, self.seen[seat]
        enc, view, index, n = self.enc, self.views[seat], _TW_INDEX, st.num_players
        if seen is None or seen.round != st.round:
            seen = self.seen[seat] = self._new_round(seat)
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
        turn = -1 if st.phase == TW_OVER else st.turn  # nobody acts at the end
        if turn != seen.turn:
            if seen.turn >= 0:
                view[enc.to_act + (seen.turn - seat) % n] = 0.0
            if turn >= 0:
                view[enc.to_act + (turn - seat) % n] = 1.0
            seen.turn = turn
        if len(st.pile) != seen.pile:
            seen.pile = len(st.pile)
            view[enc.numbers + 1] = seen.pile / _TW_K
        hands, face_down, plus, minus = st.hands, st.face_down, st.plus, st.minus
        sizes, seats = seen.sizes, enc.seats
        for s in range(n):  # within a round only a seat that moved changes these
            new = (len(hands[s]), len(face_down[s]), len(plus[s]), len(minus[s]))
            if new != sizes[s]:
                self._seat_moved(view, seats[(s - seat) % n], s, sizes[s], new)
                sizes[s] = new
        if st.totals != seen.totals:  # at the end (a new round starts anew)
            for s, total in enumerate(st.totals):
                view[seats[(s - seat) % n][2] + 3] = total / 10
            seen.totals = list(st.totals)

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
        seen = _TwistedSeen(st)
        for s in range(n):
            view[enc.seats[(s - seat) % n][2] + 3] = st.totals[s] / 10
        seen.totals = list(st.totals)
        return seen

    def _seat_moved(self, view: Elements, block: tuple[int, int, int], s: int,
                    old: tuple[int, int, int, int], new: tuple[int, int, int, int]) -> None:
        """Rewrite seat ``s``'s hand count and what its piles gained (their sizes
        were ``old``, are ``new``) in its ``block`` of ``enc.seats``."""
        st, index = self.tw, _TW_INDEX
        plus, minus, counts = block
        view[counts] = new[0] / 9
        view[counts + 1] = new[1]
        if old[2] != new[2] or old[3] != new[3]:
            for c in st.plus[s][old[2]:]:
                view[plus + index[c]] = 1.0
            for c in st.minus[s][old[3]:]:
                view[minus + index[c]] = 1.0
            view[counts + 2] = self._round_score(s, new) / 10

    def _round_score(self, s: int, sizes: tuple[int, int, int, int]) -> int:
        """Seat ``s``'s round score, worked out once for all seats while its piles
        keep their sizes (and the round its number)."""
        key = (self.tw.round, sizes[2], sizes[3])
        kept = self.round_scores[s]
        if kept[0] != key:
            kept = self.round_scores[s] = (key, self.tw._round_score(s))
        return kept[1]


# -- Twhist ------------------------------------------------------------------------


class _TwhistSeen:
    """What one seat's Twhist tensor shows: each zone as the state it was written
    from, and for the one-hot zones the element positions it set."""

    __slots__ = ("discard", "done", "flips", "hand", "lead", "picked", "pool", "roles",
                 "sizes", "trick", "trick_flags", "turn", "twhist", "voids")

    def __init__(self, players: int) -> None:
        """As an all-zero tensor shows it (but the match's fixed zones)."""
        self.hand: list[int] = []
        self.turn: tuple[tuple[int, ...], list[int]] = ((), [])
        self.roles: tuple[tuple[int, ...], list[int]] = ((), [])
        self.done = -1
        self.trick: tuple[list[int], int] = ([], -1)
        self.trick_flags: list[int] = []
        self.lead = -1
        self.picked: list[int] = []
        self.pool: list[int] = []
        self.discard = 0
        self.twhist = [0] * players
        self.flips = [0] * players
        self.voids = [0] * players
        self.sizes = [-1] * players


class TwhistLive(LiveTensors):
    """Twhist: the trick, the turn, the pick and the FLIP cards change; the discard
    grows. A trick is written card by card as it grows; a seat's first tensor is
    written from zeros by the same code."""

    def __init__(self, encoder: TwhistEncoder, state: TwhistState) -> None:
        super().__init__(encoder, state)
        self.enc = encoder
        self.th = state
        t = state.t
        #: the encoder's colour order is the options'; the state's tables use the same
        assert list(t.colours) == encoder.colours and t.flip_min == encoder.flip_min

    def turn_key(self) -> tuple[int, int, int]:
        st = self.th
        return (st.phase, st.turn, st.picker)

    def turn_flags(self, seat: int) -> list[int]:
        """The phase and the seat to act (the picker while picking; nobody at the end)."""
        st, enc = self.th, self.enc
        out = [enc.phase + st.phase]
        if st.phase != TH_OVER:
            actor = st.picker if st.phase == TH_PICK else st.turn
            out.append(enc.to_act + (actor - seat) % st.num_players)
        return out

    def roles_key(self) -> tuple[int, int, int, int]:
        st = self.th
        return (st.dealer, st.leader, st.picker, st.next_leader)

    def role_flags(self, seat: int) -> list[int]:
        """Dealer, leader, picker and next leader (relative; unset: no flag)."""
        enc, n = self.enc, self.th.num_players
        return [enc.roles + i * n + (s - seat) % n
                for i, s in enumerate(self.roles_key()) if s >= 0]

    def trick_flags(self, seat: int, start: int, flags: list[int]) -> list[int]:
        """``flags`` (the trick's first ``start`` cards) with the rest of the trick."""
        st, enc = self.th, self.enc
        n, k, block = st.num_players, TWHIST_BASE, enc.trick
        trick, leader = st.trick, st.leader
        for i in range(start, len(trick)):
            # a Twhist card's id (TWHIST_BASE + kind) follows the 32 number cards
            flags.append(block + (leader + i - seat) % n * (k + 4) + trick[i])
        return flags

    def _update(self, seat: int) -> None:
        st, seen, enc, view = self.th, self.seen[seat], self.enc, self.views[seat]
        if seen is None:  # the zones that stay as dealt; the rest from zeros below
            seen = self.seen[seat] = _TwhistSeen(st.num_players)
            self.tensors[seat].fill(0.0)
            for c in st.open_cards:
                view[enc.open + c] = 1.0
            view[enc.numbers + 1] = st.tricks_total / 14
        hand = st.hands[seat]
        if hand != seen.hand:
            _cards(view, enc.hand, _SAME, seen.hand, hand)
            seen.hand = list(hand)
        key: tuple[int, ...] = self.turn_key()
        if key != seen.turn[0]:
            flags = self.turn_flags(seat)
            _swap(view, seen.turn[1], flags)
            seen.turn = (key, flags)
        key = self.roles_key()
        if key != seen.roles[0]:
            flags = self.role_flags(seat)
            _swap(view, seen.roles[1], flags)
            seen.roles = (key, flags)
        if st.tricks_done != seen.done:
            seen.done = st.tricks_done
            view[enc.numbers] = seen.done / st.tricks_total
        trick, (old, leader) = st.trick, seen.trick
        if trick != old or st.leader != leader:
            self._trick(view, seat, seen)
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
        sizes = list(map(len, st.hands))
        if sizes != seen.sizes:
            n = st.num_players
            for s in range(n):
                if sizes[s] != seen.sizes[s]:
                    view[enc.players[(s - seat) % n][3]] = sizes[s] / 10
            seen.sizes = sizes

    def _trick(self, view: Elements, seat: int, seen: _TwhistSeen) -> None:
        """The trick's cards: the new ones where it grew, else anew."""
        trick, leader = self.th.trick, self.th.leader
        old, old_leader = seen.trick
        if leader == old_leader and len(trick) > len(old) and trick[:len(old)] == old:
            flags = seen.trick_flags
            start = len(flags)
            self.trick_flags(seat, start, flags)
            for i in flags[start:]:
                view[i] = 1.0
        else:
            flags = self.trick_flags(seat, 0, [])
            _swap(view, seen.trick_flags, flags)
            seen.trick_flags = flags
        seen.trick = (list(trick), leader)

    def _rewrite_players(self, view: Elements, seat: int, seen: _TwhistSeen) -> None:
        """Each player's Twhist cards, FLIP cards (and so its stars: they change
        together, TH-5.4) and voids, where they changed."""
        st, enc, n = self.th, self.enc, self.th.num_players
        visible = st.t.twhist_visible
        for s in range(n):
            tw, flips, voids = st.twhist[s], st.flips[s], st.voids[s]
            old_tw, old_flips, old_voids = seen.twhist[s], seen.flips[s], seen.voids[s]
            if tw == old_tw and flips == old_flips and voids == old_voids:
                continue
            twhist, star, void, counts = enc.players[(s - seat) % n]
            if tw != old_tw:
                if visible or s == seat:
                    _set_bits(view, twhist, old_tw, tw)
                if s == seat:
                    _set_bits(view, enc.twhist_hand, old_tw, tw)
                view[counts + 1] = tw.bit_count() / 4
            if flips != old_flips:
                _set_bits(view, star, old_flips, flips)
                view[counts + 2] = st.stars[s] / 10
                view[counts + 3] = flips.bit_count() / 10
            if voids != old_voids:
                _set_bits(view, void, old_voids, voids)
        seen.twhist, seen.flips, seen.voids = list(st.twhist), list(st.flips), list(st.voids)


# -- Tricky Twist ------------------------------------------------------------------


class _PlayerSeen:
    """What one seat's tensor shows of one player (a block of ``enc.players``)."""

    __slots__ = ("blank", "block", "false", "false_flags", "family_counts", "hand_count",
                 "held", "held_flags", "known", "modifiers", "reserve_count", "total", "tricks",
                 "value_counts", "voids")

    def __init__(self, block: tuple[int, ...]) -> None:
        self.block = block
        self.hand_count = self.reserve_count = -1
        self.voids = 0
        self.known: list[int] = []
        #: tricks shown (within an epoch tricks are only added to) and blank ones among them
        self.tricks = 0
        self.blank = 0
        #: false tricks shown, their card flags, and what the numbers were counted from
        self.false: list[FalseTrick] = []
        self.false_flags: list[int] = []
        self.value_counts = [0] * 13  # by value 1..12 (0 unused)
        self.family_counts = [0] * 4
        self.modifiers = 0
        self.held: list[int] = []
        self.held_flags: list[int] = []
        self.total = 0


class _TrickyTwistSeen:
    """What one seat's Tricky Twist tensor shows: per group of zones, what it was
    written from and the flag positions it set."""

    __slots__ = ("epoch", "hand", "players", "reserve", "roles", "round", "trick",
                 "trick_flags")

    def __init__(self, blocks: list[tuple[int, ...]]) -> None:
        """As an all-zero tensor shows it; ``blocks``: each player's ``enc.players``
        block, by seat (relative to the observer)."""
        self.hand: list[int] = []
        self.reserve: list[int] = []
        #: the trick's cards and leader; the trick and led family flags
        self.trick: tuple[list[int], int] = ([], -1)
        self.trick_flags: list[int] = []
        self.roles: list[int] = []
        self.round: tuple[object, list[int]] = ((), [])
        self.epoch: tuple[int, bool, int, int] | None = None
        self.players = [_PlayerSeen(block) for block in blocks]


_TT_PHASE_AT = {phase: i for i, phase in enumerate(_TT_PHASES)}
_TT_KIND_AT = {kind: i for i, kind in enumerate(_TT_KINDS)}


class TrickyTwistLive(LiveTensors):
    """Tricky Twist: the seat's hand and reserve, the trick, the roles (phase,
    decision, queues, turn), the round (scoring cards, bonus cards) and each
    player's zones are each rewritten when they changed. Within an epoch (a
    round's play, one end-bonus choice) a player's tricks are only added to, so
    new tricks are written on top of the old; a new epoch rewrites the players."""

    def __init__(self, encoder: TrickyTwistEncoder, state: TrickyTwistState) -> None:
        super().__init__(encoder, state)
        self.enc = encoder
        self.tt = state

    def _update(self, seat: int) -> None:
        st, seen, enc, view = self.tt, self.seen[seat], self.enc, self.views[seat]
        if seen is None:
            n = st.num_players
            seen = self.seen[seat] = _TrickyTwistSeen(
                [enc.players[(s - seat) % n] for s in range(n)])
        hand, reserve = st.hands[seat], st.reserves[seat]
        if hand != seen.hand:
            _cards(view, enc.hand, _SAME, seen.hand, hand)
            seen.hand = list(hand)
        if reserve != seen.reserve:
            _cards(view, enc.reserve, _SAME, seen.reserve, reserve)
            seen.reserve = list(reserve)
        if st.trick != seen.trick[0] or st.leader != seen.trick[1]:
            self._trick(view, seat, seen)
        roles = self._role_flags(seat)
        if roles != seen.roles:
            _swap(view, seen.roles, roles)
            seen.roles = roles
        epoch = (st.round_no, st.phase == TT_OVER, len(st.end_choices), st.sub)
        new_epoch = epoch != seen.epoch
        key = (epoch, len(st.supply), len(st.out))
        if key != seen.round[0]:
            flags = self._round_flags(view)
            _swap(view, seen.round[1], flags)
            seen.round = (key, flags)
        voids, known_cards, tricks, false, held, totals = (
            st.voids, st.known, st.tricks, st.false, st.held, st.total)
        for s, p in enumerate(seen.players):
            block, counts = p.block, p.block[7]
            hand_count, reserve_count = len(st.hands[s]), len(st.reserves[s])
            if hand_count != p.hand_count or reserve_count != p.reserve_count:
                p.hand_count, p.reserve_count = hand_count, reserve_count
                view[counts] = hand_count / 16
                view[counts + 1] = reserve_count / 5
            if voids[s] != p.voids:
                _set_bits(view, block[4], p.voids, voids[s])
                p.voids = voids[s]
            known = known_cards[s]
            if known != p.known:
                _cards(view, block[0], _SAME, p.known, known)
                p.known = list(known)
            if new_epoch or len(tricks[s]) != p.tricks:
                self._tricks(seat, view, block, tricks[s], p, new_epoch)
            if new_epoch or false[s] != p.false:
                self._false(view, block, false[s], p, new_epoch)
            if new_epoch or held[s] != p.held:
                flags = [block[3] + b for b in held[s]]
                _swap(view, p.held_flags, flags)
                p.held, p.held_flags = list(held[s]), flags
            if new_epoch or totals[s] != p.total:
                p.total = totals[s]
                last = next((row["round_total"] for row in st.last_round if row["seat"] == s), 0)
                view[counts + 6] = p.total / 50
                view[counts + 7] = last / 50
        seen.epoch = epoch

    def _trick(self, view: Elements, seat: int, seen: _TrickyTwistSeen) -> None:
        """The trick's cards (block per relative seat) and the led family."""
        st, enc, n = self.tt, self.enc, self.tt.num_players
        trick, leader = st.trick, st.leader
        old, old_leader = seen.trick
        flags = seen.trick_flags
        if leader != old_leader or len(trick) < len(old) or trick[:len(old)] != old:
            for i in flags:
                view[i] = 0.0
            flags, old = [], []
        if not old and trick:
            flags.append(enc.led + FAMILY_OF[trick[0]])
            view[flags[-1]] = 1.0
        for i in range(len(old), len(trick)):  # the trick grew by these plays
            flags.append(enc.trick + (leader + i - seat) % n * _TT_K + trick[i])
            view[flags[-1]] = 1.0
        seen.trick = (list(trick), leader)
        seen.trick_flags = flags

    def _role_flags(self, seat: int) -> list[int]:
        """The phase, the decision and the seats' roles (queues, to act, first, leader)."""
        st, enc, n = self.tt, self.enc, self.tt.num_players
        phase, acting = st.phase, st.acting
        out = [enc.phase + _TT_PHASE_AT[phase]]
        if phase in (TT_END_BONUS, TT_OVER):
            decision = st._decision()
            kind, decider, bonus = decision["kind"], decision["seat"], decision["bonus"]
            out.append(enc.kind + _TT_KIND_AT[kind])
            if bonus:
                out.append(enc.bonus + _TT_BONUS.index(bonus))
        else:
            out.append(enc.kind + _TT_KIND_AT[phase])
            decider = acting[0] if acting and phase != TT_RESERVE else -1
        if decider >= 0:
            out.append(enc.decider + (decider - seat) % n)
        for s in st.picks:
            out.append(enc.queues + (s - seat) % n)
        for s in st.window:
            out.append(enc.queues + n + (s - seat) % n)
        for s in acting:
            out.append(enc.to_act + (s - seat) % n)
        out.append(enc.first + (st.first_player - seat) % n)
        out.append(enc.leader + (st.leader - seat) % n)
        return out

    def _round_flags(self, view: Elements) -> list[int]:
        """Scoring cards and bonus cards as flags; the numbers are written here too."""
        st, enc = self.tt, self.enc
        out = [enc.scoring + SCORING_CARDS.index(st.scoring_card)]
        out.extend(enc.past + SCORING_CARDS.index(c) for c in st.scoring_deck[:st.round_no])
        out.extend(enc.supply + b for b in st.supply)
        out.extend(enc.out_ + b for b in st.out)
        shown = set(st.supply).union(*st.held)
        kinds = len(tt_cards.FACE_KINDS)
        for v, b in enumerate(tt_cards.VARIABLE):
            if b in shown:
                out.append(enc.faces + v * kinds + _face_kind(st.faces[b]))
        numbers = enc.numbers
        view[numbers] = (st.round_no + 1) / st.rounds
        view[numbers + 1] = (len(st.scoring_deck) - st.round_no - 1) / 9
        view[numbers + 2] = (st.sub + 1) / 16
        view[numbers + 3] = len(st.end_choices) / 8
        view[numbers + 4] = st.rounds / 4
        return out

    def _tricks(self, seat: int, view: Elements, block: tuple[int, ...],
                tricks: list[tuple[int, ...]], p: _PlayerSeen, anew: bool) -> None:
        """A player's trick cards and counts: the tricks added since ``p`` (all of
        them, on a cleared zone, when ``anew``)."""
        base, counts = block[1], block[7]
        if anew or len(tricks) < p.tricks:
            self.tensors[seat][base:base + _TT_K] = 0.0
            p.tricks = p.blank = 0
        for t in tricks[p.tricks:]:
            p.blank += not t
            for c in t:
                view[base + c] = 1.0
        p.tricks = len(tricks)
        view[counts + 2] = p.tricks / 16
        view[counts + 3] = p.blank

    @staticmethod
    def _false(view: Elements, block: tuple[int, ...], false: list[FalseTrick],
               p: _PlayerSeen, anew: bool) -> None:
        """A player's false tricks: their cards as flags, values, families and counts.
        Those added since ``p`` are added to what it shows; else (one taken back or
        changed, or ``anew``) the zones are cleared first."""
        _, _, base, _, _, values, families, counts = block
        old = p.false
        if anew or len(false) < len(old) or false[:len(old)] != old:
            for i in p.false_flags:
                view[i] = 0.0
            for value in range(1, 13):
                view[values + value - 1] = 0.0
            for family in range(4):
                view[families + family] = 0.0
            p.false, p.false_flags, p.modifiers = [], [], 0
            p.value_counts, p.family_counts = [0] * 13, [0] * 4
        value_counts, family_counts, flags = p.value_counts, p.family_counts, p.false_flags
        for family, value, cards, _, modifier in false[len(p.false):]:
            for c in cards:
                flags.append(base + c)
                view[base + c] = 1.0
            if 1 <= value <= 12:
                value_counts[value] += 1
                view[values + value - 1] = value_counts[value]
            if family >= 0:
                family_counts[family] += 1
                view[families + family] = family_counts[family]
            p.modifiers += modifier
        view[counts + 4] = len(false) / 16
        view[counts + 5] = p.modifiers
        p.false = list(false)


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
