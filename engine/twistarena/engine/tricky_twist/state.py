"""Tricky Twist rules (docs/rules/tricky_twist.md, TT-2 .. TT-7) as an engine ``State``.

One state machine (reserves and their windows, tricks, bonus picks, take-backs
and the end bonus all read and change the same state), so it stays whole; what
only reads it lives beside it: the action ids and their texts (``actions``), the
views (``views``), and ``cards``, ``data``, ``scoring``, ``narrate``, ``sample``.
"""

from __future__ import annotations

import random
from bisect import bisect_left, insort
from collections.abc import Hashable, Sequence

from ..core import JSON, Action, ObservationSlot, State
from . import scoring
from .actions import (
    BLANK_FALSE,
    BLANK_TRICK,
    BONUS_PICK,
    DECLINE,
    END_BONUS,
    FLIP_FALSE_BASE,
    FLIP_TOP_BASE,
    FLIP_TRICK_BASE,
    GAME_OVER,
    MOD_MINUS,
    MOD_PLUS,
    MOD_TARGET_BASE,
    PICK_BASE,
    PLAY,
    PLAY_BASE,
    RESERVE,
    RESERVE_BASE,
    SYMBOL_BASE,
    TAKE_BACK_BASE,
    TAKE_BACK_PHASE,
    TAKE_RESERVE,
    VALUE_BASE,
    WINDOW,
    FalseTrick,
    describe_action,
    why_illegal,
)
from .cards import (
    BONUS_NAMES,
    DECK_SIZE,
    FAMILIES,
    FAMILY_OF,
    IS_SEVEN,
    NUM_BONUS,
    NUM_VALUES,
    PLUS,
    TAKE_BACK,
    VALUE_OF,
    VARIABLE,
    card_json,
    cards_json,
    no_card_json,
)
from .faces import check_options, end_order, parse_face
from .hidden import card_zones, redeal_hidden
from .views import decision_json, player_json, round_json, table_json, view_json


def _card_false(card: int) -> FalseTrick:
    return (FAMILY_OF[card], VALUE_OF[card], (card,), "card", 0)


class TrickyTwistState(State):
    """One match: ``num_players`` rounds (TT-2.1) of reserve choice, tricks and scoring."""

    game_id = "tricky_twist"

    def __init__(self, num_players: int, seed: int, options: JSON) -> None:
        super().__init__(num_players, seed, options)
        n = num_players
        check_options(options, n)
        self.hand_size: int = options[f"hand_size_{n}p"]
        self.reserve_size: int = options["reserve_size"]
        self.rounds = n  # TT-2.1
        # TT-2.2: scoring deck face-down, random first player.
        deck = list(options["scoring_cards"])
        self.rng.shuffle(deck)
        self.scoring_deck: list[str] = deck
        self.first_player = self.rng.randrange(n)
        self.round_no = -1
        self.total = [0] * n
        self.last_round: list[JSON] = []
        #: Revisions of each seat's public part of a view (``views.player_json``) and
        #: of the round's (``views.round_json``), the versions of those observation
        #: parts (the phase turns GAME_OVER only as the last round is scored):
        #: a seat's moves on each of its actions and when a trick it won or a false
        #: trick of its own is laid down, every seat's when a round starts or is
        #: scored, or hidden cards are re-dealt; the round's when the supply, the
        #: end choices or the scores change. Bumped more often than needed is
        #: harmless; never less.
        self._player_rev = [0] * n
        self._round_rev = 0
        self._start_round()

    # -- round set-up ----------------------------------------------------------

    def _start_round(self) -> None:
        """TT-2.3, TT-3: reveal the scoring card, reset bonuses, deal, choose reserves."""
        n = self.num_players
        self._changed_all()
        self.round_no += 1
        if self.round_no:
            self.first_player = (self.first_player + 1) % n
        self.reveal(self.scoring_deck[self.round_no])
        self.supply: list[int] = list(range(NUM_BONUS))  # TT-3.1
        self.held: list[list[int]] = [[] for _ in range(n)]
        self.out: list[int] = []
        cards = list(range(DECK_SIZE))
        self.rng.shuffle(cards)  # TT-3.2
        h = self.hand_size
        self.hands: list[list[int]] = [sorted(cards[s * h:(s + 1) * h]) for s in range(n)]
        self.box: list[int] = sorted(cards[n * h:])  # undealt when hand sizes are overridden
        self.reserves: list[list[int]] = [[] for _ in range(n)]
        self.known: list[list[int]] = [[] for _ in range(n)]
        #: families a seat has shown it lacks by not following (TT-4.3); a card
        #: taken from the reserve (unseen, TT-4.1) may refill any of them
        self.voids: list[int] = [0] * n
        self.tricks: list[list[tuple[int, ...]]] = [[] for _ in range(n)]
        self.false: list[list[FalseTrick]] = [[] for _ in range(n)]
        self.trick: list[int] = []
        self.leader = self.turn = self.first_player
        self.window: list[int] = []
        self.picks: list[int] = []
        self.end_steps: list[tuple[int, int]] = []
        self.end_choices: list[JSON] = []
        self.sub = -1  # pending sub-decision: trick index (Flip) or false trick index (Modifier)
        self._cache_seat = -1
        self._cache_ids: Sequence[int] = ()
        self.log("round_start", private={s: {"hand": cards_json(self.hands[s])} for s in range(n)},
                 round=self.round_no + 1, scoring_card=self.scoring_card,
                 first_player=self.first_player, faces=list(self.faces[4:]))
        if self.reserve_size:
            self.phase = RESERVE
            self.acting: tuple[int, ...] = tuple(range(n))
        else:
            self._start_trick(self.first_player)

    def reveal(self, scoring_card: str) -> None:
        """TT-2.2/2.3: ``scoring_card`` becomes the round's card; TT-3.1, TT-6.4: the
        variable bonus cards turn to the faces it calls for."""
        o = self.options
        self.scoring_card = scoring_card
        framed = scoring_card in o["framed_scoring_cards"]
        faces = list(BONUS_NAMES[:4])
        kinds = list(BONUS_NAMES[:4])
        symbols: list[tuple[int, ...]] = [(), (), (), ()]
        for b in VARIABLE:
            face = o["variable_cards"][BONUS_NAMES[b]]["framed" if framed else "plain"]
            kind, fams = parse_face(face)
            faces.append(face)
            kinds.append(kind)
            symbols.append(fams)
        # Fixed for the whole round: shared by clones, never mutated.
        self.faces: tuple[str, ...] = tuple(faces)
        self.face_kind: tuple[str, ...] = tuple(kinds)
        self.symbols: tuple[tuple[int, ...], ...] = tuple(symbols)

    def _start_trick(self, leader: int) -> None:
        """TT-4.1: the reserve window opens before the first card, from the leader."""
        n = self.num_players
        self.leader = self.turn = leader
        self.window = [s for s in ((leader + k) % n for k in range(n)) if self.reserves[s]]
        if self.window:
            self.phase = WINDOW
            self.acting = (self.window[0],)
        else:
            self.phase = PLAY
            self.acting = (leader,)

    # -- engine hooks ------------------------------------------------------------

    def _to_act(self) -> tuple[int, ...]:
        return self.acting

    def _legal_ids(self, seat: int) -> Sequence[int]:
        if seat == self._cache_seat:
            return self._cache_ids
        phase = self.phase
        ids: Sequence[int]
        if phase == PLAY:
            hand = self.hands[seat]
            if self.trick:
                lo = FAMILY_OF[self.trick[0]] * NUM_VALUES
                i = bisect_left(hand, lo)
                j = bisect_left(hand, lo + NUM_VALUES, i)
                ids = hand[i:j] if i < j else list(hand)  # TT-4.3
            else:
                ids = list(hand)  # TT-4.2
        elif phase == WINDOW:
            ids = [TAKE_RESERVE, DECLINE]
        elif phase == RESERVE:
            ids = [RESERVE_BASE + c for c in self.hands[seat]]
        elif phase == BONUS_PICK:
            ids = [DECLINE, *(PICK_BASE + b for b in self.supply)]
        elif phase == TAKE_BACK_PHASE:
            ids = [DECLINE, *sorted(TAKE_BACK_BASE + f[2][0] for f in self.false[seat])]
        else:
            ids = self._end_ids(seat)
        self._cache_seat, self._cache_ids = seat, ids
        return ids

    def _end_ids(self, seat: int) -> list[int]:
        """Legal ids of the current end-of-round bonus decision (TT-6.1 b-c, TT-6.3)."""
        _, bonus = self.end_steps[0]
        kind = self.face_kind[bonus]
        if self.sub >= 0:
            if kind == "flip":
                return sorted(FLIP_TOP_BASE + c for c in self.tricks[seat][self.sub])
            value = self.false[seat][self.sub][1]
            return [x for x, ok in ((MOD_MINUS, value > 1), (MOD_PLUS, value < NUM_VALUES)) if ok]
        ids = [DECLINE]
        if kind == "flip":
            ids += [FLIP_TRICK_BASE + i for i, t in enumerate(self.tricks[seat]) if t]
            ids += sorted(FLIP_FALSE_BASE + f[2][0] for f in self.false[seat] if f[3] == "card")
        elif kind == "blank":
            ids += [BLANK_TRICK, BLANK_FALSE]
        elif kind == "symbol":
            ids += [SYMBOL_BASE + f for f in self.symbols[bonus]]
        elif kind == "modifier":
            ids += [MOD_TARGET_BASE + i for i, f in enumerate(self.false[seat]) if f[1] > 0]
        else:  # odd, even, any
            ids += sorted({VALUE_BASE + v for v in self.options[f"{kind}_values"]})
        return ids

    def _changed_all(self) -> None:
        """Every seat's part of a view and the round's may have changed."""
        self._player_rev = [r + 1 for r in self._player_rev]
        self._round_rev += 1

    def _apply(self, seat: int, action_id: int) -> None:
        self._cache_seat = -1
        self._player_rev[seat] += 1  # every action changes something of the actor's
        phase = self.phase
        if phase == PLAY:
            self._play(seat, action_id)
        elif phase == WINDOW:
            self._window(seat, action_id)
        elif phase == RESERVE:
            self._reserve(seat, action_id - RESERVE_BASE)
        elif phase == BONUS_PICK:
            self._pick(seat, action_id)
        elif phase == TAKE_BACK_PHASE:
            self._take_back(seat, action_id)
        else:
            self._end_bonus(seat, action_id)

    # -- TT-3.3 reserve choice ------------------------------------------------------

    def _reserve(self, seat: int, card: int) -> None:
        self.hands[seat].remove(card)
        reserve = self.reserves[seat]
        reserve.append(card)
        self.log("reserve_pick", private={seat: {"card": card_json(card)}}, seat=seat,
                 count=len(reserve))
        if len(reserve) < self.reserve_size:
            return
        self.acting = tuple(s for s in self.acting if s != seat)
        if self.acting:
            return
        for r in self.reserves:  # in seat order, so the rng use does not depend on timing
            self.rng.shuffle(r)
        self.log("reserves_ready")
        self._start_trick(self.first_player)

    # -- TT-4 a trick ---------------------------------------------------------------

    def _window(self, seat: int, action_id: int) -> None:
        if action_id == TAKE_RESERVE:
            card = self.reserves[seat].pop()
            insort(self.hands[seat], card)
            self.voids[seat] = 0
            self.log("reserve_take", private={seat: {"card": card_json(card)}}, seat=seat,
                     reserve_count=len(self.reserves[seat]))
        else:
            self.log("reserve_decline", seat=seat)
        window = self.window
        del window[0]
        if window:
            self.acting = (window[0],)
        else:
            self.phase = PLAY
            self.acting = (self.leader,)

    def _play(self, seat: int, card: int) -> None:
        self.hands[seat].remove(card)
        known = self.known[seat]
        if known and card in known:
            known.remove(card)
        trick = self.trick
        if trick and FAMILY_OF[card] != FAMILY_OF[trick[0]]:
            self.voids[seat] |= 1 << FAMILY_OF[trick[0]]
        trick.append(card)
        self.log("play", seat=seat, card=card_json(card))
        if len(trick) < self.num_players:
            self.turn = (seat + 1) % self.num_players
            self.acting = (self.turn,)
        else:
            self._resolve()

    def _resolve(self) -> None:
        """TT-5.1..5.4: trick to the winner, false tricks back face-up, 7s earn picks."""
        n, leader, trick = self.num_players, self.leader, self.trick
        led = FAMILY_OF[trick[0]]
        best = -1
        winner = leader
        won: list[int] = []
        seven_seats: list[int] = []
        for i, card in enumerate(trick):
            s = (leader + i) % n
            if FAMILY_OF[card] == led:
                won.append(card)
                if card > best:
                    best, winner = card, s
            else:
                self.false[s].append(_card_false(card))  # TT-5.2
                self._player_rev[s] += 1
                if IS_SEVEN[card]:
                    seven_seats.append(s)
        self.tricks[winner].append(tuple(won))  # TT-5.1
        self._player_rev[winner] += 1
        if any(IS_SEVEN[c] for c in won):
            seven_seats.append(winner)
        self.log("trick", winner=winner, cards=cards_json(won),
                 false_tricks=[{"seat": (leader + i) % n, "card": card_json(c)}
                               for i, c in enumerate(trick) if FAMILY_OF[c] != led])
        self.trick = []
        self.leader = winner
        if seven_seats:  # TT-5.4: clockwise from the winner
            self.picks = sorted(seven_seats, key=lambda s: (s - winner) % n)
        self._after_resolution()

    def _after_resolution(self) -> None:
        """Next bonus pick, else the end check TT-5.6, else the next trick."""
        if self.picks and self.supply:
            self.phase = BONUS_PICK
            self.acting = (self.picks[0],)
            return
        self.picks = []
        if any(not h for h in self.hands):  # TT-5.6: reserves do not count
            self._start_end_bonuses()
        else:
            self._start_trick(self.leader)

    def _pick(self, seat: int, action_id: int) -> None:
        del self.picks[0]
        if action_id == DECLINE:
            self.log("bonus_decline", seat=seat)
            self._after_resolution()
            return
        bonus = action_id - PICK_BASE
        self.supply.remove(bonus)
        self._round_rev += 1
        self.log("bonus_take", seat=seat, bonus=BONUS_NAMES[bonus], face=self.faces[bonus])
        if bonus == TAKE_BACK:  # TT-5.5, TT-6.1a: used at once, then out of the round
            self.out.append(bonus)
            if self.false[seat]:
                self.phase = TAKE_BACK_PHASE
                self.acting = (seat,)
                return
        else:
            self.held[seat].append(bonus)
        self._after_resolution()

    def _take_back(self, seat: int, action_id: int) -> None:
        if action_id == DECLINE:
            self.log("take_back", seat=seat, declined=True, card=no_card_json())
        else:
            card = action_id - TAKE_BACK_BASE
            false = self.false[seat]
            false.remove(_card_false(card))
            insort(self.hands[seat], card)
            self.known[seat].append(card)
            self.log("take_back", seat=seat, declined=False, card=card_json(card))
        self._after_resolution()

    # -- TT-6.5 end-of-round bonus choices, TT-7 scoring ---------------------------

    def _start_end_bonuses(self) -> None:
        self.end_steps = end_order(self)
        self.trick = []
        self.window = []
        self._next_end_step()

    def _next_end_step(self) -> None:
        """The next holder's bonus with a real choice; bonuses with none are skipped."""
        self.sub = -1
        while self.end_steps:
            seat, _ = self.end_steps[0]
            self._cache_seat = -1
            if len(self._end_ids(seat)) > 1:
                self.phase = END_BONUS
                self.acting = (seat,)
                self._cache_seat = -1
                return
            del self.end_steps[0]
        self._score_round()

    def _record(self, seat: int, bonus: int, choice: str, family: int = -1, value: int = -1,
                delta: int = 0, cards: Sequence[int] = ()) -> None:
        entry: JSON = {"seat": seat, "bonus": BONUS_NAMES[bonus], "face": self.faces[bonus],
                 "choice": choice, "family": FAMILIES[family] if family >= 0 else "",
                 "value": value, "delta": delta, "cards": cards_json(list(cards))}
        self.end_choices.append(entry)
        self._round_rev += 1
        self.log("bonus_use", **entry)

    def _end_bonus(self, seat: int, action_id: int) -> None:
        _, bonus = self.end_steps[0]
        tricks, false = self.tricks[seat], self.false[seat]
        if action_id == DECLINE:
            self._record(seat, bonus, "decline")
        elif action_id >= MOD_TARGET_BASE:
            if action_id < MOD_MINUS:
                self.sub = action_id - MOD_TARGET_BASE
                self.acting = (seat,)
                return
            i = self.sub
            fam, val, cards, source, _ = false[i]
            delta = -1 if action_id == MOD_MINUS else 1
            false[i] = (fam, val + delta, cards, source, delta)
            self._record(seat, bonus, "modify", fam, val + delta, delta, cards[:1])
        elif action_id >= SYMBOL_BASE:
            if action_id >= VALUE_BASE + 1:
                value = action_id - VALUE_BASE
                false.append((-1, value, (), self.face_kind[bonus], 0))
                self._record(seat, bonus, "value", value=value)
            else:
                fam = action_id - SYMBOL_BASE
                false.append((fam, -1, (), "symbol", 0))
                self._record(seat, bonus, "family", family=fam)
        elif action_id >= BLANK_TRICK:
            if action_id == BLANK_TRICK:
                tricks.append(())
                self._record(seat, bonus, "trick")
            else:
                false.append((-1, -1, (), "blank", 0))
                self._record(seat, bonus, "false_trick")
        elif action_id >= FLIP_TOP_BASE:
            top = action_id - FLIP_TOP_BASE
            self._flip_trick(seat, bonus, self.sub, top)
        elif action_id >= FLIP_FALSE_BASE:
            card = action_id - FLIP_FALSE_BASE
            false.remove(_card_false(card))
            tricks.append((card,))
            self._record(seat, bonus, "false_to_trick", cards=(card,))
        else:
            i = action_id - FLIP_TRICK_BASE
            if len(tricks[i]) > 1:  # TT-6.1b: its owner chooses the top card next
                self.sub = i
                return
            self._flip_trick(seat, bonus, i, tricks[i][0])
        del self.end_steps[0]
        self._next_end_step()

    def _flip_trick(self, seat: int, bonus: int, index: int, top: int) -> None:
        cards = self.tricks[seat].pop(index)
        stack = (top, *(c for c in cards if c != top))
        self.false[seat].append((FAMILY_OF[top], VALUE_OF[top], stack, "flip", 0))
        self._record(seat, bonus, "trick_to_false", FAMILY_OF[top], VALUE_OF[top], cards=stack)

    def round_rows(self) -> list[JSON]:
        """TT-7.2..7.6: the score table of the round as it stands now."""
        o = self.options
        n = self.num_players
        card_stars = scoring.scoring_card_stars(
            self.scoring_card, [[(f[0], f[1]) for f in self.false[s]] for s in range(n)], o)
        rows = []
        for s in range(n):
            t, f = len(self.tricks[s]), len(self.false[s])
            base = scoring.base_stars(t, f, o["pair_stars"], o["balanced_pair_stars"])
            plus = t if PLUS in self.held[s] else 0  # TT-6.1d
            rows.append({"seat": s, "tricks": t, "false_tricks": f, "base": base, "plus": plus,
                         "card": card_stars[s], "round_total": base + plus + card_stars[s],
                         "total": self.total[s] + base + plus + card_stars[s]})
        return rows

    def _score_round(self) -> None:
        rows = self.round_rows()
        for row in rows:
            self.total[row["seat"]] = row["total"]
        self.last_round = rows
        self._changed_all()
        self.log("round_scored", round=self.round_no + 1, scoring_card=self.scoring_card,
                 rows=rows)
        if self.round_no + 1 < self.rounds:
            self._start_round()
        else:
            self.phase = GAME_OVER
            self.acting = ()
            self.log("game_over", scores=list(self.total), winners=self.winners())

    # -- descriptions ---------------------------------------------------------------

    def _describe(self, seat: int, action_id: int) -> Action:
        return describe_action(self.faces, action_id)

    def _vocabulary_version(self) -> Hashable:
        """Only a bonus pick's label depends on the state: on the round's faces."""
        return self.faces

    def _why_illegal(self, seat: int, action_id: int) -> str:
        return why_illegal(self, seat, action_id)

    # -- views (built in ``views``) ------------------------------------------------------

    def _decision(self) -> JSON:
        """Context of the pending decision (``views.decision_json``; the training
        environments' Python writer reads it too)."""
        return decision_json(self)

    def _observation(self, seat: int) -> JSON:
        return view_json(self, seat)

    def _observation_slots(self, seat: int) -> list[ObservationSlot]:
        """The seat's table, the round and one part per player: a player's part
        (its tricks) changes only when that player acts, wins a trick or lays a
        false trick (see ``_player_rev``)."""
        slots: list[ObservationSlot] = [("table", None), ("round", self._round_rev)]
        revisions = self._player_rev
        for s in range(self.num_players):
            slots.append((s, revisions[s]))
        return slots

    def _observation_part(self, seat: int, slot: Hashable) -> JSON:
        if slot == "table":
            return table_json(self, seat)
        if slot == "round":
            return round_json(self)
        assert isinstance(slot, int)
        return self._players_json(slot)

    def _players_json(self, s: int) -> JSON:
        return {"players": [player_json(self, s)]}

    def _public_view(self) -> JSON:
        return view_json(self, -1)

    def _scores(self) -> list[int]:
        return list(self.total)

    # -- cloning, hidden information (``hidden``), conservation --------------------------

    def _copy_plain_into(self, new: State) -> None:
        assert isinstance(new, TrickyTwistState)
        new.hand_size = self.hand_size
        new.reserve_size = self.reserve_size
        new.rounds = self.rounds
        new.first_player = self.first_player
        new.round_no = self.round_no
        new.last_round = self.last_round
        new._round_rev = self._round_rev
        new.faces = self.faces
        new.face_kind = self.face_kind
        new.symbols = self.symbols
        new.scoring_card = self.scoring_card
        new.leader = self.leader
        new.turn = self.turn
        new.sub = self.sub
        new._cache_ids = self._cache_ids
        new.phase = self.phase
        new.acting = self.acting

    def _copy_mutable_into(self, new: State) -> None:
        assert isinstance(new, TrickyTwistState)
        new.scoring_deck = list(self.scoring_deck)
        new.total = list(self.total)
        new.supply = list(self.supply)
        new.held = [list(x) for x in self.held]
        new.out = list(self.out)
        new.hands = [list(x) for x in self.hands]
        new.box = list(self.box)
        new.reserves = [list(x) for x in self.reserves]
        new.known = [list(x) for x in self.known]
        new.voids = list(self.voids)
        new.tricks = [list(x) for x in self.tricks]
        new.false = [list(x) for x in self.false]
        new.trick = list(self.trick)
        new.window = list(self.window)
        new.picks = list(self.picks)
        new.end_steps = list(self.end_steps)
        new.end_choices = list(self.end_choices)
        new._player_rev = list(self._player_rev)
        new._cache_seat = -1

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        redeal_hidden(self, seat, rng)

    def _card_zones(self) -> dict[str, list[int]]:
        return card_zones(self)




#: the action ids and phases (``actions``) are read here too, as the state's vocabulary
__all__ = [
    "BLANK_FALSE", "BLANK_TRICK", "BONUS_PICK", "DECLINE", "END_BONUS", "FLIP_FALSE_BASE",
    "FLIP_TOP_BASE", "FLIP_TRICK_BASE", "GAME_OVER", "MOD_MINUS", "MOD_PLUS", "MOD_TARGET_BASE",
    "PICK_BASE", "PLAY", "PLAY_BASE", "RESERVE", "RESERVE_BASE", "SYMBOL_BASE", "TAKE_BACK_BASE",
    "TAKE_BACK_PHASE", "TAKE_RESERVE", "VALUE_BASE", "WINDOW", "FalseTrick", "TrickyTwistState",
    "end_order", "parse_face"
]
