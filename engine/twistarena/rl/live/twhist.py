"""Twhist's live tensors (``tensors.TwhistEncoder``'s layout, kept up to date)."""

from __future__ import annotations

from twistarena.engine.twhist.cards import DECK_SIZE as TH_DECK_SIZE
from twistarena.engine.twhist.cards import TWHIST_BASE
from twistarena.engine.twhist.state import OVER as TH_OVER
from twistarena.engine.twhist.state import PICK as TH_PICK
from twistarena.engine.twhist.state import TwhistState

from ..tensors import TwhistEncoder
from .base import SAME, Elements, LiveTensors, card_flags, set_bits, swap

assert TWHIST_BASE == TH_DECK_SIZE  # a trick block: 32 number cards, then the 4 Twhist cards


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
            card_flags(view, enc.hand, SAME, seen.hand, hand)
            seen.hand = list(hand)
        key: tuple[int, ...] = self.turn_key()
        if key != seen.turn[0]:
            flags = self.turn_flags(seat)
            swap(view, seen.turn[1], flags)
            seen.turn = (key, flags)
        key = self.roles_key()
        if key != seen.roles[0]:
            flags = self.role_flags(seat)
            swap(view, seen.roles[1], flags)
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
            card_flags(view, enc.picked, SAME, seen.picked, st.picked)
            seen.picked = list(st.picked)
        if st.pool != seen.pool:
            card_flags(view, enc.pool, SAME, seen.pool, st.pool)
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
            swap(view, seen.trick_flags, flags)
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
                    set_bits(view, twhist, old_tw, tw)
                if s == seat:
                    set_bits(view, enc.twhist_hand, old_tw, tw)
                view[counts + 1] = tw.bit_count() / 4
            if flips != old_flips:
                set_bits(view, star, old_flips, flips)
                view[counts + 2] = st.stars[s] / 10
                view[counts + 3] = flips.bit_count() / 10
            if voids != old_voids:
                set_bits(view, void, old_voids, voids)
        seen.twhist, seen.flips, seen.voids = list(st.twhist), list(st.flips), list(st.voids)
