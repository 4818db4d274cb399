"""Twisted (docs/rules/twisted.md): extend the row, twist a card out of it, or take it all.

Action ids, fixed per kind so that they are stable and sorted:
- ``12..98``: play that card from hand to the right end of the row (extend,
  TW-3.1; or, right after a take, start the new row with it, TW-3.3);
- ``100 + c`` (``112..198``): twist with hand card ``c``, removing its partner
  from the row (TW-3.2);
- ``200``: take the row (TW-3.3).
"""

from __future__ import annotations

import random
from bisect import insort
from collections.abc import Hashable, Sequence
from typing import Final

from ..core import JSON, Action, InvalidOptions, ObservationSlot, State
from .cards import DECK, IS_TOAD, PARTNER, is_card

TWIST_BASE: Final = 100
TAKE: Final = 200

#: Phases: a normal turn; the taker starting the new row (TW-3.3); the match is over.
PLAY: Final = "play"
START_ROW: Final = "start_row"
OVER: Final = "over"


class TwistedState(State):
    """A whole Twisted match: several rounds (TW-4.4), each dealt from a full reshuffle."""

    game_id = "twisted"

    def __init__(self, num_players: int, seed: int, options: JSON) -> None:
        super().__init__(num_players, seed, options)
        self.hand_size: int = options["hand_size"].get(str(num_players), 0)
        self.distance: int = options["extend_distance"]
        self.plus_point: int = options["plus_point"]
        self.minus_point: int = options["minus_point"]
        self.toad_penalty: int = options["toad_penalty"]
        self.rounds: int = options["rounds"]
        self.expert: bool = options["expert"]
        _check_options(self, num_players)
        self.hands: list[list[int]] = [[] for _ in range(num_players)]  # each kept sorted
        self.row: list[int] = []
        self.pile: list[int] = []  # the draw pile; its top card is the last one
        self.plus: list[list[int]] = [[] for _ in range(num_players)]
        self.minus: list[list[int]] = [[] for _ in range(num_players)]
        #: TW-4.5 expert cards: in the minus pile face-down, seen by nobody (the
        #: taker included) until the round is scored; only their count is public.
        self.face_down: list[list[int]] = [[] for _ in range(num_players)]
        self.totals: list[int] = [0] * num_players  # scores of the finished rounds
        self.round = 0
        self.first_starter = self.rng.randrange(num_players)  # TW-2.2
        self.starter = self.first_starter
        self.turn = self.first_starter
        self.phase = PLAY
        self._legal: tuple[int, ...] | None = None  # cached legal ids of the seat to act
        #: Revision of each seat's public part of a view (``_seat_json`` and its
        #: score), the version of that observation part: a seat's moves on each of
        #: its actions and draws, every seat's when a round starts or ends. Bumped
        #: more often than needed is harmless; never less.
        self._seat_rev = [0] * num_players
        self._start_round()

    # -- flow ----------------------------------------------------------------

    def _start_round(self) -> None:
        """TW-2: full reshuffle, deal, empty row; the start passes left each round."""
        n = self.num_players
        self._changed_all()
        self.round += 1
        deck = list(DECK)
        self.rng.shuffle(deck)
        size = self.hand_size
        self.hands = [sorted(deck[i * size:(i + 1) * size]) for i in range(n)]
        self.pile = deck[n * size:]
        self.row = []
        self.plus = [[] for _ in range(n)]
        self.minus = [[] for _ in range(n)]
        self.face_down = [[] for _ in range(n)]
        self.starter = (self.first_starter + self.round - 1) % n  # TW-2.2
        self.turn = self.starter
        self.phase = PLAY
        self.log(
            "round_start",
            private={s: {"hand": list(self.hands[s])} for s in range(n)},
            round=self.round,
            starter=self.starter,
            draw_pile=len(self.pile),
        )

    def _end_round(self) -> None:
        """TW-4.1/TW-4.3: reveal the face-down expert cards (TW-4.5), score the
        piles, then deal the next round or finish."""
        revealed = self.face_down
        self._changed_all()
        self.face_down = [[] for _ in range(self.num_players)]
        for seat, cards in enumerate(revealed):
            self.minus[seat] += cards
        round_scores = [self._round_score(s) for s in range(self.num_players)]
        self.totals = [t + r for t, r in zip(self.totals, round_scores, strict=True)]
        self.log("round_end", round=self.round, round_scores=round_scores,
                 scores=list(self.totals),
                 face_down_revealed=[{"seat": seat, "cards": cards}
                                     for seat, cards in enumerate(revealed) if cards])
        if self.round < self.rounds:
            self._start_round()
        else:
            self.phase = OVER
            self.log("game_end", scores=list(self.totals), winners=self.winners())

    def _round_score(self, seat: int) -> int:
        """TW-4.3: +1 per plus-pile card, -1 per minus-pile card, toads -5."""
        minus = sum(self.toad_penalty if IS_TOAD[c] else self.minus_point
                    for c in self.minus[seat])
        return len(self.plus[seat]) * self.plus_point - minus

    def _draw_and_pass(self, seat: int) -> None:
        """TW-3.4: draw back to hand size if the pile is not empty; next seat clockwise."""
        if self.pile:
            card = self.pile.pop()
            insort(self.hands[seat], card)
            self._seat_rev[seat] += 1
            self.log("draw", private={seat: {"card": card}}, seat=seat,
                     draw_pile=len(self.pile))
        self.turn = (seat + 1) % self.num_players

    # -- hooks ---------------------------------------------------------------

    def _to_act(self) -> tuple[int, ...]:
        return () if self.phase == OVER else (self.turn,)

    def _legal_ids(self, seat: int) -> Sequence[int]:
        ids = self._legal
        if ids is None:
            ids = self._legal = self._compute_legal()
        return ids

    def _compute_legal(self) -> tuple[int, ...]:
        hand = self.hands[self.turn]
        row = self.row
        if self.phase == START_ROW or not row:
            return tuple(hand)  # any card starts a row (TW-3.1, TW-3.3)
        right = row[-1]
        d = self.distance
        extend = [c for c in hand if -d <= c - right <= d]
        twist = [TWIST_BASE + c for c in hand if PARTNER[c] in row]
        return (*extend, *twist, TAKE)

    def _changed_all(self) -> None:
        """Every seat's part of a view may have changed."""
        self._seat_rev = [r + 1 for r in self._seat_rev]

    def _apply(self, seat: int, action_id: int) -> None:
        self._legal = None
        self._seat_rev[seat] += 1  # every action changes something of the actor's
        if action_id == TAKE:
            self._take(seat)
        elif action_id > TWIST_BASE:
            self._twist(seat, action_id - TWIST_BASE)
        else:
            self._play(seat, action_id)

    def _play(self, seat: int, card: int) -> None:
        """TW-3.1 extend (or start an empty row); TW-3.3 the taker's new row."""
        kind = "start" if self.phase == START_ROW else "extend"
        self.hands[seat].remove(card)
        self.log(kind, seat=seat, card=card, starts_row=not self.row)
        self.row.append(card)
        self.phase = PLAY
        self._draw_and_pass(seat)

    def _twist(self, seat: int, card: int) -> None:
        """TW-3.2: both cards to the plus pile; the row closes the gap."""
        partner = PARTNER[card]
        self.hands[seat].remove(card)
        self.row.remove(partner)
        self.plus[seat] += (partner, card)
        self.log("twist", seat=seat, card=card, partner=partner, row_left=len(self.row))
        if not self.row and not self.pile:
            self._end_round()  # TW-4.1: the last card twisted away with no draw pile
        else:
            self._draw_and_pass(seat)

    def _take(self, seat: int) -> None:
        """TW-3.3 take the row; TW-4.1 ends the round if the pile is empty; TW-4.5
        expert: the top card of the pile goes face-down, unseen, and the event
        says only that one did."""
        taken = self.row
        self.row = []
        self.minus[seat] += taken
        face_down = 0
        if self.pile and self.expert and len(taken) == 1:
            self.face_down[seat].append(self.pile.pop())
            face_down = 1
        ends = not face_down and not self.pile
        self.log("take", seat=seat, cards=taken, face_down=face_down, ends_round=ends)
        if ends:
            self._end_round()  # TW-4.1: the taker does not start a new row
        else:
            self.phase = START_ROW

    def _describe(self, seat: int, action_id: int) -> Action:
        if action_id == TAKE:
            n = len(self.row)
            return Action(TAKE, f"take the row ({n} card{'s' * (n != 1)})",
                          {"kind": "take", "cards": n})
        if action_id > TWIST_BASE and is_card(action_id - TWIST_BASE):
            card = action_id - TWIST_BASE
            partner = PARTNER[card]
            if partner < 0:
                return Action(action_id, f"twist with {card} (a toad: never possible)",
                              {"kind": "twist", "card": card, "partner": -1})
            return Action(action_id, f"twist {partner} out of the row with {card}",
                          {"kind": "twist", "card": card, "partner": partner})
        if is_card(action_id):
            if self.phase == START_ROW:
                return Action(action_id, f"start a new row with {action_id}",
                              {"kind": "start", "card": action_id})
            verb = "extend the row with" if self.row else "start the row with"
            return Action(action_id, f"{verb} {action_id}", {"kind": "extend", "card": action_id})
        return Action(action_id, f"{action_id} is not a Twisted action", {"kind": "none"})

    def _vocabulary_version(self) -> Hashable:
        """Taking names the row's length; a card starts or extends the row."""
        return (self.phase == START_ROW, len(self.row))

    def _why_illegal(self, seat: int, action_id: int) -> str:
        hand = self.hands[seat]
        row = self.row
        if action_id == TAKE:
            if self.phase == START_ROW:
                return "after taking the row you must start a new row with a card (TW-3.3)"
            return "taking is allowed only when the row is not empty (TW-3.3)"
        if action_id > TWIST_BASE and is_card(action_id - TWIST_BASE):
            card = action_id - TWIST_BASE
            partner = PARTNER[card]
            if self.phase == START_ROW:
                return "after taking the row you must start a new row with a card (TW-3.3)"
            if partner < 0:
                return f"{card} is a toad: toads can never be twisted (TW-1.2, TW-3.2)"
            if card not in hand:
                return f"you do not hold {card} (TW-3.2)"
            return f"the twist partner {partner} of {card} is not in the row (TW-3.2)"
        if is_card(action_id):
            if action_id not in hand:
                return f"you do not hold {action_id} (TW-3.1)"
            right = row[-1]
            return (f"{action_id} is more than {self.distance} away from the rightmost card"
                    f" {right} (TW-3.1)")
        return (f"{action_id} is not a Twisted action: 12..98 plays a card, 100+card twists"
                f" with that card, {TAKE} takes the row")

    def _view(self, seat: int) -> JSON:
        """The shared shape of observations and the public view (seat -1, no hand)."""
        return {**self._turn_json(seat), "scores": self._scores(), **self._table_json(seat),
                "seats": [self._seat_json(s) for s in range(self.num_players)]}

    def _turn_json(self, seat: int) -> JSON:
        """Whose view it is and who is to act (the head of a view)."""
        return {"game": self.game_id, "seat": seat, "phase": self.phase,
                "to_act": list(self._to_act())}

    def _table_json(self, seat: int) -> JSON:
        """The round, the row and ``seat``'s hand (the rest of a view but its
        scores and seats)."""
        row = self.row
        low = high = -1
        if row and self.phase == PLAY:
            low, high = row[-1] - self.distance, row[-1] + self.distance
        return {
            "round": self.round,
            "rounds": self.rounds,
            "starter": self.starter,
            "turn": -1 if self.phase == OVER else self.turn,
            "hand": list(self.hands[seat]) if seat >= 0 else [],
            "row": list(row),
            "extend_distance": self.distance,
            "extend_low": low,
            "extend_high": high,
            "draw_pile": len(self.pile),
            "expert": self.expert,
        }

    def _seat_json(self, s: int) -> JSON:
        """What everybody knows about seat ``s`` (see ``_seat_rev``)."""
        return {
            "seat": s,
            "hand_count": len(self.hands[s]),
            "plus_pile": list(self.plus[s]),
            "minus_pile": list(self.minus[s]),
            "minus_face_down": len(self.face_down[s]),
            "round_score": self._round_score(s),
            "total": self.totals[s],
        }

    def _table_part(self, seat: int) -> JSON:
        return {**self._turn_json(seat), **self._table_json(seat)}

    def _seat_part(self, s: int) -> JSON:
        """Seat ``s``'s entry of ``seats`` and of ``scores``: both change only as
        its piles and total do (the parts' ``scores`` are joined in seat order)."""
        return {"scores": [self._score(s)], "seats": [self._seat_json(s)]}

    def _observation(self, seat: int) -> JSON:
        return self._view(seat)

    def _observation_slots(self, seat: int) -> list[ObservationSlot]:
        """The table (the row, the seat's hand: new every action) and one part per
        seat, re-encoded only when its revision moves."""
        slots: list[ObservationSlot] = [("table", None)]
        revisions = self._seat_rev
        for s in range(self.num_players):
            slots.append((s, revisions[s]))
        return slots

    def _observation_part(self, seat: int, slot: Hashable) -> JSON:
        if slot == "table":
            return self._table_part(seat)
        assert isinstance(slot, int)
        return self._seat_part(slot)

    def _public_view(self) -> JSON:
        return self._view(-1)

    def _scores(self) -> list[int]:
        return [self._score(s) for s in range(self.num_players)]

    def _score(self, s: int) -> int:
        """Seat ``s``'s running score: its total, and this round's while the match
        runs (once it is over, the last round is in the totals)."""
        if self.phase == OVER:
            return self.totals[s]
        return self.totals[s] + self._round_score(s)

    def _copy_plain_into(self, new: State) -> None:
        assert isinstance(new, TwistedState)
        new.distance = self.distance
        new.expert = self.expert
        new.first_starter = self.first_starter
        new.hand_size = self.hand_size
        new.plus_point = self.plus_point
        new.minus_point = self.minus_point
        new.toad_penalty = self.toad_penalty
        new.phase = self.phase
        new.round = self.round
        new.rounds = self.rounds
        new.starter = self.starter
        new.turn = self.turn
        new._legal = self._legal

    def _copy_mutable_into(self, new: State) -> None:
        assert isinstance(new, TwistedState)
        new.hands = [h[:] for h in self.hands]
        new.row = self.row[:]
        new.pile = self.pile[:]
        new.plus = [p[:] for p in self.plus]
        new.minus = [m[:] for m in self.minus]
        new.face_down = [f[:] for f in self.face_down]
        new.totals = self.totals[:]
        new._seat_rev = self._seat_rev[:]

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        """Other hands, the draw pile order and every face-down expert card (TW-4.5)
        are all ``seat`` does not know."""
        others = [s for s in range(self.num_players) if s != seat]
        # Only the set of unseen cards is known, not where each one lies.
        pool = sorted(self.pile + [c for s in others for c in self.hands[s]]
                      + [c for cards in self.face_down for c in cards])
        rng.shuffle(pool)
        at = len(self.pile)
        self.pile = pool[:at]
        for s in others:
            size = len(self.hands[s])
            self.hands[s] = sorted(pool[at:at + size])
            at += size
        for s in range(self.num_players):
            size = len(self.face_down[s])
            self.face_down[s] = pool[at:at + size]
            at += size
        self._legal = None

    def _card_zones(self) -> dict[str, list[int]]:
        zones = {"draw_pile": list(self.pile), "row": list(self.row)}
        for s in range(self.num_players):
            zones[f"hand_{s}"] = list(self.hands[s])
            zones[f"plus_{s}"] = list(self.plus[s])
            zones[f"minus_{s}"] = list(self.minus[s])
            zones[f"face_down_{s}"] = list(self.face_down[s])
        return zones


def _check_options(state: TwistedState, num_players: int) -> None:
    """Refuse option values that make the rules meaningless."""
    size = state.hand_size
    if size < 1 or size * num_players > len(DECK):
        raise InvalidOptions(
            f"hand_size for {num_players} players must be 1..{len(DECK) // num_players},"
            f" got {size}"
        )
    if state.distance < 0:
        raise InvalidOptions(f"extend_distance must be >= 0, got {state.distance}")
    if state.rounds < 1:
        raise InvalidOptions(f"rounds must be >= 1, got {state.rounds}")
