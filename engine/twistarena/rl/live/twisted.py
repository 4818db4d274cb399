"""Twisted's live tensors (``tensors.TwistedEncoder``'s layout, kept up to date)."""

from __future__ import annotations

from twistarena.engine.twisted.state import OVER as TW_OVER
from twistarena.engine.twisted.state import TwistedState

from ..tensors import _TW_INDEX, _TW_K, _TW_PHASES, TwistedEncoder
from .base import Elements, LiveTensors, card_flags


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
            card_flags(view, enc.hand, index, seen.hand, hand)
            seen.hand = list(hand)
        row = st.row
        if row != seen.row:
            right, old = enc.right, seen.row
            card_flags(view, enc.row, index, old, row)
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
