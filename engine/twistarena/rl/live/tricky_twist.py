"""Tricky Twist's live tensors (``tensors.TrickyTwistEncoder``'s layout, kept up
to date)."""

from __future__ import annotations

from twistarena.engine.tricky_twist import cards as tt_cards
from twistarena.engine.tricky_twist.cards import FAMILY_OF
from twistarena.engine.tricky_twist.data import SCORING_CARDS
from twistarena.engine.tricky_twist.state import END_BONUS as TT_END_BONUS
from twistarena.engine.tricky_twist.state import GAME_OVER as TT_OVER
from twistarena.engine.tricky_twist.state import RESERVE as TT_RESERVE
from twistarena.engine.tricky_twist.state import FalseTrick, TrickyTwistState

from ..tensors import _TT_BONUS, _TT_K, _TT_KINDS, _TT_PHASES, TrickyTwistEncoder, _face_kind
from .base import SAME, Elements, LiveTensors, card_flags, set_bits, swap


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
            card_flags(view, enc.hand, SAME, seen.hand, hand)
            seen.hand = list(hand)
        if reserve != seen.reserve:
            card_flags(view, enc.reserve, SAME, seen.reserve, reserve)
            seen.reserve = list(reserve)
        if st.trick != seen.trick[0] or st.leader != seen.trick[1]:
            self._trick(view, seat, seen)
        roles = self._role_flags(seat)
        if roles != seen.roles:
            swap(view, seen.roles, roles)
            seen.roles = roles
        epoch = (st.round_no, st.phase == TT_OVER, len(st.end_choices), st.sub)
        new_epoch = epoch != seen.epoch
        key = (epoch, len(st.supply), len(st.out))
        if key != seen.round[0]:
            flags = self._round_flags(view)
            swap(view, seen.round[1], flags)
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
                set_bits(view, block[4], p.voids, voids[s])
                p.voids = voids[s]
            known = known_cards[s]
            if known != p.known:
                card_flags(view, block[0], SAME, p.known, known)
                p.known = list(known)
            if new_epoch or len(tricks[s]) != p.tricks:
                self._tricks(seat, view, block, tricks[s], p, new_epoch)
            if new_epoch or false[s] != p.false:
                self._false(view, block, false[s], p, new_epoch)
            if new_epoch or held[s] != p.held:
                flags = [block[3] + b for b in held[s]]
                swap(view, p.held_flags, flags)
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
