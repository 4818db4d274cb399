"""The rules of Twhist (docs/rules/twhist.md, TH-1 .. TH-6) on the engine API.

Hot-path state is plain ints and lists: hands are sorted lists of card ids,
Twhist cards and FLIP cards are bitmasks per seat (bit = kind, bit = FLIP value
- flip_min, set = star side up), the trick is the list of action ids played.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from typing import Any, Final

from ..core import JSON, Action, ObservationSlot, State, set_bits
from ..dealing import deal_hidden
from .cards import (
    ALL_TWHIST,
    DECK_SIZE,
    PICK_BASE,
    STOP,
    TWHIST_BASE,
    TWHIST_LABELS,
    TWHIST_NAMES,
    Tables,
    resolve_trick,
    tables,
)

PLAY: Final = 0
PICK: Final = 1
OVER: Final = 2
PHASES: Final = ("play", "pick", "over")
_TWHIST_IDS: Final = tuple(range(TWHIST_BASE, TWHIST_BASE + 4))


def twhist_names(mask: int) -> list[str]:
    return [TWHIST_NAMES[k] for k in set_bits(mask)]


class TwhistState(State):
    """A match of Twhist: one deal, ``hand size + 4`` tricks (TH-3.4), then scoring."""

    game_id = "twhist"

    def __init__(self, num_players: int, seed: int, options: JSON) -> None:
        super().__init__(num_players, seed, options)
        self.t: Tables = tables(options)
        n = num_players
        deck = list(range(DECK_SIZE))
        self.rng.shuffle(deck)
        per = DECK_SIZE // n  # TH-2.1: 10 / 8 / 6 each
        self.hands: list[list[int]] = [sorted(deck[s * per:(s + 1) * per]) for s in range(n)]
        self.open_cards: tuple[int, ...] = tuple(sorted(deck[n * per:]))  # 31st and 32nd
        self.twhist: list[int] = [ALL_TWHIST] * n  # TH-1.2
        self.flips: list[int] = [0] * n  # TH-1.1: all number side up
        self.stars: list[int] = [0] * n
        self.voids: list[int] = [0] * n  # colours a seat has shown it lacks (public)
        self.discard: list[int] = []
        self.tricks_total = per + 4  # TH-3.4: every card of every hand is played
        self.tricks_done = 0
        self.dealer = self.rng.randrange(n)  # TH-2.3
        self.leader = (self.dealer + 1) % n
        self.turn = self.leader
        self.trick: list[int] = []
        self.lead_colour = -1
        self.phase = PLAY
        self.picker = -1
        self.next_leader = -1
        self.sit_out = 0
        self.pool: list[int] = []  # the trick's number cards not yet picked
        self.picked: list[int] = []
        #: Revision of each seat's entry of ``players`` (``_player_json``), the
        #: version of that observation part: a seat's moves when it plays (its
        #: hand, its Twhist cards, its voids) and when one of its FLIP cards turns
        #: (its star sides, its stars). Bumped more often than needed is harmless;
        #: never less.
        self._player_rev = [0] * n
        #: The legal ids of the seat to act, kept until the next action (or re-deal).
        self._legal: Sequence[int] | None = None
        self.log(
            "deal",
            private={s: {"hand": self.t.cards_json(self.hands[s])} for s in range(n)},
            dealer=self.dealer,
            leader=self.leader,
            open_cards=self.t.cards_json(self.open_cards),
            hand_size=per,
        )

    # -- turn structure -----------------------------------------------------

    def _to_act(self) -> tuple[int, ...]:
        if self.phase == PLAY:
            return (self.turn,)
        if self.phase == PICK:
            return (self.picker,)
        return ()

    def _legal_ids(self, seat: int) -> Sequence[int]:
        # One seat acts at a time (``_to_act``), and the core asks only for it.
        ids = self._legal
        if ids is None:
            ids = self._legal = self._compute_legal(seat)
        return ids

    def _compute_legal(self, seat: int) -> Sequence[int]:
        if self.phase == PICK:
            ids = [PICK_BASE + c for c in self.pool]
            if self.picked:
                ids.append(STOP)  # TH-5.1: a second card is optional
            return ids
        hand = self.hands[seat]
        lead = self.lead_colour
        if lead >= 0:
            colour_of = self.t.colour_of
            ids = [c for c in hand if colour_of[c] == lead] or list(hand)  # TH-3.3
        else:
            ids = list(hand)
        mask = self.twhist[seat]
        if mask:
            ids.extend(a for a in _TWHIST_IDS if mask >> (a - TWHIST_BASE) & 1)
        return ids

    def _why_illegal(self, seat: int, action_id: int) -> str:
        t = self.t
        if self.phase == PICK:
            if action_id == STOP:
                return "you must pick at least one number card of the trick (TH-5.1)"
            if PICK_BASE <= action_id < STOP:
                return (f"{t.card_text(action_id - PICK_BASE)} is not among the trick's "
                        "number cards left to pick (TH-5.1)")
            return "pick a number card of the trick or stop picking (TH-5.1)"
        if 0 <= action_id < DECK_SIZE:
            card = action_id
            if card not in self.hands[seat]:
                return f"you do not hold {t.card_text(card)} (TH-3.1)"
            lead = t.colours[self.lead_colour]
            return (f"you hold a {lead} card and must follow the lead colour or play a "
                    "Twhist card (TH-3.3)")
        if TWHIST_BASE <= action_id < PICK_BASE:
            return (f"you no longer hold your {TWHIST_LABELS[action_id - TWHIST_BASE]} card; "
                    "each Twhist card is played once (TH-1.2)")
        if PICK_BASE <= action_id <= STOP:
            return "cards are picked only after a trick is complete (TH-5.1)"
        return f"unknown action id {action_id}; play a card of your hand (TH-3.1)"

    def _describe(self, seat: int, action_id: int) -> Action:
        t = self.t
        if 0 <= action_id < DECK_SIZE:
            return Action(action_id, f"play {t.card_text(action_id)}",
                          {"kind": "play", "card": t.card_json(action_id)})
        if TWHIST_BASE <= action_id < PICK_BASE:
            k = action_id - TWHIST_BASE
            return Action(action_id, f"play {TWHIST_LABELS[k]}",
                          {"kind": "twhist", "twhist": TWHIST_NAMES[k]})
        if PICK_BASE <= action_id < STOP:
            card = action_id - PICK_BASE
            return Action(action_id, f"pick {t.card_text(card)}",
                          {"kind": "pick", "card": t.card_json(card)})
        if action_id == STOP:
            return Action(action_id, "stop picking", {"kind": "stop"})
        return Action(action_id, f"unknown action {action_id}", {"kind": "unknown"})

    def _vocabulary_version(self) -> Hashable:
        """Labels depend on the match's options only, fixed for the whole match."""
        return 0

    # -- playing ------------------------------------------------------------

    def _apply(self, seat: int, action_id: int) -> None:
        self._legal = None
        if self.phase == PICK:
            if action_id == STOP:
                self._score_trick()
            else:
                self._pick(action_id - PICK_BASE)
            return
        t = self.t
        self._player_rev[seat] += 1  # a card leaves its hand or its Twhist cards
        if action_id < TWHIST_BASE:
            self.hands[seat].remove(action_id)
            colour = t.colour_of[action_id]
            if self.lead_colour < 0:
                self.lead_colour = colour  # TH-3.2
            elif colour != self.lead_colour:
                self.voids[seat] |= 1 << self.lead_colour  # TH-3.3: shown to everyone
            self.log("play", seat=seat, card=t.card_json(action_id), twhist="",
                     lead_colour=t.colours[self.lead_colour])
        else:
            kind = action_id - TWHIST_BASE
            self.twhist[seat] &= ~(1 << kind)
            self.log("play", seat=seat, card=dict(_NO_CARD), twhist=TWHIST_NAMES[kind],
                     lead_colour=t.colours[self.lead_colour] if self.lead_colour >= 0 else "")
        self.trick.append(action_id)
        if len(self.trick) < self.num_players:
            self.turn = (seat + 1) % self.num_players
            return
        self._resolve()

    def _resolve(self) -> None:
        """The trick is complete: find picker and next leader (TH-4), then pick."""
        picker, self.next_leader, self.sit_out, natural = resolve_trick(
            self.trick, self.leader, self.num_players, self.t)
        self.picker = picker
        self.pool = sorted(a for a in self.trick if a < TWHIST_BASE)
        self.picked = []
        n = self.num_players
        self.log("resolve", trick=self.tricks_done + 1, natural_winner=natural, picker=picker,
                 next_leader=self.next_leader,
                 sitting_out=[s for s in range(n) if self.sit_out >> s & 1],
                 number_cards=len(self.pool))
        if not self.pool:
            self._score_trick()  # nothing to pick: nobody flips (TH-5.2)
        elif len(self.pool) == 1:
            self._pick(self.pool[0])  # TH-5.1: 1 if only one is there, no choice to make
        else:
            self.phase = PICK

    def _pick(self, card: int) -> None:
        self.pool.remove(card)
        self.picked.append(card)
        self.log("pick", seat=self.picker, card=self.t.card_json(card))
        if len(self.picked) == 2 or not self.pool:
            self._score_trick()
        else:
            self.phase = PICK

    def _score_trick(self) -> None:
        """Flip FLIP cards (TH-5), discard the trick, move on (TH-5.5, TH-6.1)."""
        t = self.t
        if self.picked:
            self._flip(self.picker, sum(t.value_of[c] for c in self.picked))  # TH-5.1
        if self.pool:
            rest = sum(t.value_of[c] for c in self.pool)
            for seat in range(self.num_players):  # TH-5.2
                if seat != self.picker and not self.sit_out >> seat & 1:
                    self._flip(seat, rest)
        self.discard.extend(self.picked)
        self.discard.extend(self.pool)
        self.pool = []
        self.picked = []
        self.trick = []
        self.lead_colour = -1
        self.tricks_done += 1
        self.leader = self.turn = self.next_leader
        self.picker = self.next_leader = -1
        self.sit_out = 0
        if self.tricks_done == self.tricks_total:  # TH-6.1
            self.phase = OVER
            self.log("game_over", scores=list(self.stars), places=self.places())
        else:
            self.phase = PLAY

    def _flip(self, seat: int, total: int) -> None:
        t = self.t
        bit = t.flip_index(total)  # TH-5.3
        self.flips[seat] ^= 1 << bit  # TH-5.4: a star side goes back to its number side
        self._player_rev[seat] += 1
        star_side = bool(self.flips[seat] >> bit & 1)
        self.stars[seat] += t.stars[bit] if star_side else -t.stars[bit]
        self.log("flip", seat=seat, sum=total, value=bit + t.flip_min, star_side=star_side,
                 stars=self.stars[seat])

    # -- views --------------------------------------------------------------

    def _players(self, viewer: int) -> list[JSON]:
        return [self._player_json(s, self._shows_twhist(s, viewer))
                for s in range(self.num_players)]

    def _shows_twhist(self, s: int, viewer: int) -> bool:
        """Whether ``viewer`` sees which Twhist cards seat ``s`` still holds."""
        return self.t.twhist_visible or s == viewer

    def _player_json(self, s: int, shows_twhist: bool) -> JSON:
        """Seat ``s``'s entry of ``players`` (its Twhist card names only if
        ``shows_twhist``; see ``_player_rev``)."""
        t = self.t
        lo = t.flip_min
        flips = self.flips[s]
        return {
            "seat": s,
            "hand_count": len(self.hands[s]),
            "twhist_count": self.twhist[s].bit_count(),
            "twhist_names": twhist_names(self.twhist[s]) if shows_twhist else [],
            "star_side": [b + lo for b in set_bits(flips)],
            "stars": self.stars[s],
            "star_cards": flips.bit_count(),
            "void": [t.colours[c] for c in set_bits(self.voids[s])],
        }

    def _view(self, viewer: int) -> JSON:
        return {**self._table_json(), **self._open_cards_json(), "players": self._players(viewer),
                **self._discard_json(), **self._rules_json()}

    def _table_json(self) -> JSON:
        """The part of a view that changes with every action (the players' entries
        apart: see ``_player_json``)."""
        t = self.t
        seat = self.leader
        trick = []
        for a in self.trick:
            if a < TWHIST_BASE:
                trick.append({"seat": seat, "card": t.card_json(a), "twhist": ""})
            else:
                trick.append({"seat": seat, "card": dict(_NO_CARD),
                              "twhist": TWHIST_NAMES[a - TWHIST_BASE]})
            seat = (seat + 1) % self.num_players
        return {
            "game": self.game_id,
            "phase": PHASES[self.phase],
            "to_act": list(self._to_act()),
            "scores": list(self.stars),
            "dealer": self.dealer,
            "leader": self.leader,
            "tricks_done": self.tricks_done,
            "tricks_total": self.tricks_total,
            "lead_colour": t.colours[self.lead_colour] if self.lead_colour >= 0 else "",
            "trick": trick,
            "picker": self.picker,
            "next_leader": self.next_leader,
            "picked": t.cards_json(self.picked),
            "pool": t.cards_json(self.pool),
        }

    def _open_cards_json(self) -> JSON:
        return {"open_cards": self.t.cards_json(self.open_cards)}

    def _discard_json(self) -> JSON:
        return {"discard": self.t.cards_json(self.discard)}

    def _rules_json(self) -> JSON:
        return {"rules": {k: (list(v) if isinstance(v, list) else v)
                          for k, v in self.options.items()}}

    def _own_json(self, seat: int) -> JSON:
        """What only ``seat`` sees: its hand and its Twhist cards."""
        return {"seat": seat, "hand": self.t.cards_json(self.hands[seat]),
                "twhist_hand": twhist_names(self.twhist[seat])}

    def _seat_json(self, seat: int) -> JSON:
        """The table part of ``seat``'s observation: the table and its own cards."""
        return {**self._table_json(), **self._own_json(seat)}

    def _observation(self, seat: int) -> JSON:
        return {**self._table_json(), **self._open_cards_json(), "players": self._players(seat),
                **self._own_json(seat), **self._discard_json(), **self._rules_json()}

    def _observation_slots(self, seat: int) -> list[ObservationSlot]:
        """The table, one part per player (re-encoded only when its revision
        moves), the discard pile (it only grows: its length is its version) and
        what never changes in a match (the open cards, TH-2.1, and the rules).

        A player's slot says whether its Twhist card names are shown, so that
        what one seat may see is never reused for a seat that may not."""
        slots: list[ObservationSlot] = [("table", None)]
        revisions = self._player_rev
        for s in range(self.num_players):
            slots.append((("player", s, self._shows_twhist(s, seat)), revisions[s]))
        slots += [("discard", len(self.discard)), ("fixed", 0)]
        return slots

    def _observation_part(self, seat: int, slot: Hashable) -> JSON:
        if slot == "table":
            return self._seat_json(seat)
        if slot == "discard":
            return self._discard_json()
        if slot == "fixed":
            return self._fixed_json()
        assert isinstance(slot, tuple)
        return self._players_part(slot[1], slot[2])

    def _fixed_json(self) -> JSON:
        return {**self._open_cards_json(), **self._rules_json()}

    def _players_part(self, s: int, shows_twhist: bool) -> JSON:
        return {"players": [self._player_json(s, shows_twhist)]}

    def _public_view(self) -> JSON:
        return self._view(-1)

    def _scores(self) -> list[int]:
        return list(self.stars)

    def _rank_key(self, seat: int) -> tuple[int, ...]:
        return (self.stars[seat], self.flips[seat].bit_count())  # TH-6.1

    # -- search support -----------------------------------------------------

    def _copy_plain_into(self, new: State) -> None:
        assert isinstance(new, TwhistState)
        new.t = self.t
        new.dealer = self.dealer
        new.lead_colour = self.lead_colour
        new.leader = self.leader
        new.next_leader = self.next_leader
        new.open_cards = self.open_cards
        new.phase = self.phase
        new.picker = self.picker
        new.sit_out = self.sit_out
        new.tricks_done = self.tricks_done
        new.tricks_total = self.tricks_total
        new.turn = self.turn
        new._legal = self._legal

    def _copy_mutable_into(self, new: State) -> None:
        assert isinstance(new, TwhistState)
        new.hands = [list(h) for h in self.hands]
        new.twhist = list(self.twhist)
        new.flips = list(self.flips)
        new.stars = list(self.stars)
        new.voids = list(self.voids)
        new.discard = list(self.discard)
        new.trick = list(self.trick)
        new.pool = list(self.pool)
        new.picked = list(self.picked)
        new._player_rev = list(self._player_rev)

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        """Re-deal the other hands' number cards, keeping counts and shown voids.

        Twhist cards are not re-dealt: each player holds one of each kind and
        every played one is seen, so the ones still held are known (TH-1.2).
        """
        others = [s for s in range(self.num_players) if s != seat]
        hands = deal_hidden([c for s in others for c in self.hands[s]],
                            [(len(self.hands[s]), self.voids[s]) for s in others],
                            self.t.colour_of, rng)
        for s, hand in zip(others, hands, strict=True):
            self.hands[s] = sorted(hand)
        self._legal = None

    def _card_zones(self) -> dict[str, list[int]]:
        zones = {f"hand_{s}": list(h) for s, h in enumerate(self.hands)}
        zones["open"] = list(self.open_cards)
        zones["trick"] = [a for a in self.trick if a < TWHIST_BASE] if self.phase == PLAY else (
            self.picked + self.pool)
        zones["discard"] = list(self.discard)
        return zones


_NO_CARD: Final[dict[str, Any]] = {"id": -1, "colour": "", "value": 0}  # a Twhist card in a trick
