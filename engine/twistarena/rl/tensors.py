"""Observation tensors: a seat's observation as one fixed-shape float32 vector.

Each game has an ``Encoder`` built for its player count (and, for Twhist, the
match options that size its cards). ``encode`` reads nothing but the seat's
observation dict (``State.observation(seat)``, or the same dict an agent is sent
over the network), so a tensor can never hold what the seat may not know; the
differential test in tests/rl/ checks it against states that differ only in
hidden cards. Seats are relative: block 0 is the observing seat, block 1 the
next seat clockwise, and so on, so that one policy serves every seat.

A segment is either flags (0 or 1: cards in a zone, a one-hot choice) or numbers
(counts and scores, divided by a fixed scale so that they are mostly within
-1..1). ``Encoder.segments`` lists them in order; docs/rl.md prints them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from twistarena.engine import GAME_IDS, InvalidOptions, game
from twistarena.engine.options import merge_options
from twistarena.engine.tricky_twist import cards as tt_cards
from twistarena.engine.tricky_twist.data import SCORING_CARDS
from twistarena.engine.twhist import cards as th_cards
from twistarena.engine.twisted import cards as tw_cards

Tensor = npt.NDArray[np.float32]

#: Numbers stay within +-this for every option the engine accepts (the largest:
#: a Twisted total of 20 rounds at the largest penalties, /10, is about 2,200).
NUMBER_BOUND = 10_000.0


def per_seat(name: str, r: int) -> str:
    """The name of relative seat ``r``'s segment ``name`` (each seat has its block of
    the same segments; the compiled writers name them without the seat)."""
    return f"{name}_{r}"


@dataclass(frozen=True)
class Segment:
    """One named slice of a tensor: ``start``, ``length``, flags or numbers, what it holds."""

    name: str
    start: int
    length: int
    flags: bool
    what: str


@dataclass
class Layout:
    """Segments appended one after the other."""

    segments: list[Segment] = field(default_factory=list)
    size: int = 0

    def flags(self, name: str, length: int, what: str) -> int:
        return self._add(name, length, True, what)

    def numbers(self, name: str, length: int, what: str) -> int:
        return self._add(name, length, False, what)

    def seat_flags(self, r: int, name: str, length: int, what: str) -> int:
        """Flags of relative seat ``r``'s block (its segment ``name``)."""
        return self._add(per_seat(name, r), length, True, f"relative seat {r}: {what}")

    def seat_numbers(self, r: int, name: str, length: int, what: str) -> int:
        """Numbers of relative seat ``r``'s block (its segment ``name``)."""
        return self._add(per_seat(name, r), length, False, f"relative seat {r}: {what}")

    def _add(self, name: str, length: int, flags: bool, what: str) -> int:
        start = self.size
        self.segments.append(Segment(name, start, length, flags, what))
        self.size += length
        return start


class Encoder:
    """Turns one game's observations (of one player count) into tensors."""

    game_id = ""

    def __init__(self, num_players: int) -> None:
        self.num_players = num_players
        self.layout = Layout()

    @property
    def size(self) -> int:
        return self.layout.size

    @property
    def segments(self) -> list[Segment]:
        return self.layout.segments

    def bounds(self) -> tuple[Tensor, Tensor]:
        """Per element: 0..1 for flags, +-``NUMBER_BOUND`` for numbers (a Box's low and high)."""
        low = np.full(self.size, -NUMBER_BOUND, np.float32)
        high = np.full(self.size, NUMBER_BOUND, np.float32)
        for s in self.segments:
            if s.flags:
                low[s.start:s.start + s.length] = 0.0
                high[s.start:s.start + s.length] = 1.0
        return low, high

    def encode(self, observation: Mapping[str, Any]) -> Tensor:
        """The tensor of ``observation`` (a new array)."""
        out = np.zeros(self.size, np.float32)
        self._fill(out, observation)
        return out

    def encode_into(self, out: Tensor, observation: Mapping[str, Any]) -> None:
        """Write the tensor of ``observation`` into ``out`` (of length ``size``)."""
        out.fill(0.0)
        self._fill(out, observation)

    def _fill(self, out: Tensor, obs: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def _rel(self, seat: int, me: int) -> int:
        """Seat ``seat`` as seen from ``me``: 0 is ``me``, 1 the next seat clockwise."""
        return (seat - me) % self.num_players


def _set(out: Tensor, start: int, indices: Iterable[int]) -> None:
    for i in indices:
        out[start + i] = 1.0


# -- Twisted -----------------------------------------------------------------------

_TW_DECK = tw_cards.DECK
_TW_K = len(_TW_DECK)
#: card number -> its place in the deck (0 .. deck size - 1; -1: not a card)
_TW_INDEX: tuple[int, ...] = tuple(_TW_DECK.index(c) if c in _TW_DECK else -1 for c in range(100))
_TW_PHASES = ("play", "start_row", "over")


class TwistedEncoder(Encoder):
    """Twisted: one flag per card of the deck in each zone."""

    game_id = "twisted"

    def __init__(self, num_players: int) -> None:
        super().__init__(num_players)
        n, k, lay = num_players, _TW_K, self.layout
        self.hand = lay.flags("hand", k, "cards in the seat's hand")
        self.row = lay.flags("row", k, "cards in the row")
        self.right = lay.flags("row_right", k, "the rightmost card of the row")
        self.phase = lay.flags("phase", 3, "play, start_row (after a take), over")
        self.to_act = lay.flags("to_act", n, "the seat to act (relative)")
        self.starter = lay.flags("starter", n, "the round's starting seat (relative)")
        self.numbers = lay.numbers(
            "numbers", 6, "row length/10, draw pile/deck size, round/rounds, rounds/20,"
            " extend distance/86, expert (0 or 1)")
        self.seats = []
        for r in range(n):
            self.seats.append((
                lay.seat_flags(r, "plus_pile", k, "its plus pile"),
                lay.seat_flags(r, "minus_pile", k, "its open minus pile"),
                lay.seat_numbers(r, "counts", 4, "hand count/9, face-down expert cards,"
                                 " round score/10, total/10"),
            ))

    def _fill(self, out: Tensor, obs: Mapping[str, Any]) -> None:
        me = obs["seat"]
        index = _TW_INDEX
        hand, row = self.hand, self.row
        for c in obs["hand"]:
            out[hand + index[c]] = 1.0
        cards = obs["row"]
        for c in cards:
            out[row + index[c]] = 1.0
        if cards:
            out[self.right + index[cards[-1]]] = 1.0
        out[self.phase + _TW_PHASES.index(obs["phase"])] = 1.0
        for s in obs["to_act"]:
            out[self.to_act + self._rel(s, me)] = 1.0
        out[self.starter + self._rel(obs["starter"], me)] = 1.0
        rounds = obs["rounds"]
        out[self.numbers:self.numbers + 6] = (
            len(cards) / 10, obs["draw_pile"] / _TW_K, obs["round"] / rounds, rounds / 20,
            obs["extend_distance"] / 86, float(obs["expert"]))
        for seat in obs["seats"]:
            plus, minus, counts = self.seats[self._rel(seat["seat"], me)]
            for c in seat["plus_pile"]:
                out[plus + index[c]] = 1.0
            for c in seat["minus_pile"]:
                out[minus + index[c]] = 1.0
            out[counts:counts + 4] = (seat["hand_count"] / 9, seat["minus_face_down"],
                                      seat["round_score"] / 10, seat["total"] / 10)


# -- Tricky Twist ------------------------------------------------------------------

_TT_K = tt_cards.DECK_SIZE
_TT_FAMILIES = tt_cards.FAMILIES
_TT_BONUS = tt_cards.BONUS_NAMES
_TT_PHASES = ("reserve", "reserve_window", "play", "bonus_pick", "take_back", "end_bonus",
              "over")
#: what ``decision.kind`` may be ("" once the match is over)
_TT_KINDS = ("reserve", "reserve_window", "play", "bonus_pick", "take_back", "flip", "blank",
             "symbol", "odd", "even", "any", "modifier", "flip_top", "modifier_delta", "")


def _ids(cards: Sequence[Mapping[str, Any]]) -> list[int]:
    return [c["id"] for c in cards]


def _face_kind(face: str) -> int:
    return tt_cards.FACE_KINDS.index("symbol" if face.startswith("symbol") else face)


class TrickyTwistEncoder(Encoder):
    """Tricky Twist: 48 number cards, 8 bonus cards, 9 scoring cards."""

    game_id = "tricky_twist"

    def __init__(self, num_players: int) -> None:
        super().__init__(num_players)
        n, k, lay = num_players, _TT_K, self.layout
        nb, ns = len(_TT_BONUS), len(SCORING_CARDS)
        self.hand = lay.flags("hand", k, "cards in the seat's hand")
        self.reserve = lay.flags("reserve", k, "cards in the seat's reserve")
        self.trick = lay.flags("trick", n * k, "the trick: block r holds relative seat r's card")
        self.led = lay.flags("led_family", len(_TT_FAMILIES), "the led family")
        self.phase = lay.flags("phase", len(_TT_PHASES), ", ".join(_TT_PHASES))
        self.kind = lay.flags("decision_kind", len(_TT_KINDS),
                              "the pending decision's kind (decision.kind)")
        self.decider = lay.flags("decision_seat", n, "the deciding seat (relative; none: all 0)")
        self.bonus = lay.flags("decision_bonus", nb, "the bonus card being decided")
        self.queues = lay.flags("queues", 2 * n, "relative seats waiting to pick a bonus,"
                                                 " then seats in the reserve window")
        self.to_act = lay.flags("to_act", n, "seats to act (relative)")
        self.first = lay.flags("first_player", n, "the round's first player (relative)")
        self.leader = lay.flags("leader", n, "the trick's leader (relative)")
        self.scoring = lay.flags("scoring_card", ns, "this round's scoring card")
        self.past = lay.flags("past_scoring_cards", ns, "earlier rounds' scoring cards")
        self.supply = lay.flags("supply", nb, "bonus cards in the supply")
        self.out_ = lay.flags("bonus_out", nb, "bonus cards out of the round")
        self.faces = lay.flags("faces", 4 * len(tt_cards.FACE_KINDS),
                               "kind of each variable bonus card's face this round (v1..v4)")
        self.numbers = lay.numbers("numbers", 5, "round/rounds, scoring cards left/9,"
                                                 " decision index/16, end choices/8, rounds/4")
        self.players = []
        for r in range(n):
            self.players.append((
                lay.seat_flags(r, "known_in_hand", k, "cards known in its hand"),
                lay.seat_flags(r, "tricks", k, "cards in its tricks"),
                lay.seat_flags(r, "false_tricks", k, "cards in its false tricks"),
                lay.seat_flags(r, "bonuses", nb, "bonus cards it holds"),
                lay.seat_flags(r, "void", len(_TT_FAMILIES), "families it has shown it lacks"),
                lay.seat_numbers(r, "false_values", 12, "false tricks of each value 1..12"),
                lay.seat_numbers(r, "false_families", 4, "false tricks of each family"),
                lay.seat_numbers(r, "counts", 8, "hand/16, reserve/5, tricks/16, blank"
                                 " tricks, false tricks/16, modifier sum, score/50,"
                                 " last round/50"),
            ))

    def _fill(self, out: Tensor, obs: Mapping[str, Any]) -> None:
        me = obs["seat"]
        k = _TT_K
        _set(out, self.hand, _ids(obs["hand"]))
        _set(out, self.reserve, _ids(obs["reserve"]))
        for play in obs["trick"]:
            out[self.trick + self._rel(play["seat"], me) * k + play["card"]["id"]] = 1.0
        if obs["led_family"]:
            out[self.led + _TT_FAMILIES.index(obs["led_family"])] = 1.0
        out[self.phase + _TT_PHASES.index(obs["phase"])] = 1.0
        decision = obs["decision"]
        out[self.kind + _TT_KINDS.index(decision["kind"])] = 1.0
        if decision["seat"] >= 0:
            out[self.decider + self._rel(decision["seat"], me)] = 1.0
        if decision["bonus"]:
            out[self.bonus + _TT_BONUS.index(decision["bonus"])] = 1.0
        n = self.num_players
        _set(out, self.queues, (self._rel(s, me) for s in decision["pick_queue"]))
        _set(out, self.queues + n, (self._rel(s, me) for s in decision["window_queue"]))
        _set(out, self.to_act, (self._rel(s, me) for s in obs["to_act"]))
        out[self.first + self._rel(obs["first_player"], me)] = 1.0
        out[self.leader + self._rel(obs["leader"], me)] = 1.0
        out[self.scoring + SCORING_CARDS.index(obs["scoring_card"])] = 1.0
        _set(out, self.past, (SCORING_CARDS.index(c) for c in obs["past_scoring_cards"]))
        faces = {}
        for entry in obs["supply"]:
            out[self.supply + _TT_BONUS.index(entry["bonus"])] = 1.0
            faces[entry["bonus"]] = entry["face"]
        _set(out, self.out_, (_TT_BONUS.index(b) for b in obs["bonus_out"]))
        for p in obs["players"]:
            for entry in p["bonuses"]:
                faces[entry["bonus"]] = entry["face"]
        for v, name in enumerate(_TT_BONUS[4:]):
            if name in faces:
                out[self.faces + v * len(tt_cards.FACE_KINDS) + _face_kind(faces[name])] = 1.0
        last = {row["seat"]: row["round_total"] for row in obs["last_round"]}
        out[self.numbers:self.numbers + 5] = (
            obs["round"] / obs["rounds"], obs["scoring_cards_left"] / 9,
            (decision["index"] + 1) / 16, len(obs["end_choices"]) / 8, obs["rounds"] / 4)
        for p in obs["players"]:
            s = p["seat"]
            known, tricks, false, bonuses, void, values, families, counts = (
                self.players[self._rel(s, me)])
            _set(out, known, _ids(p["known_in_hand"]))
            blank = 0
            for trick in p["tricks"]:
                blank += trick["blank"]
                _set(out, tricks, _ids(trick["cards"]))
            modifiers = 0
            for f in p["false_tricks"]:
                _set(out, false, _ids(f["cards"]))
                if 1 <= f["value"] <= 12:
                    out[values + f["value"] - 1] += 1.0
                if f["family"]:
                    out[families + _TT_FAMILIES.index(f["family"])] += 1.0
                modifiers += f["modifier"]
            _set(out, bonuses, (_TT_BONUS.index(b["bonus"]) for b in p["bonuses"]))
            _set(out, void, (_TT_FAMILIES.index(f) for f in p["void"]))
            out[counts:counts + 8] = (
                p["hand_count"] / 16, p["reserve_count"] / 5, len(p["tricks"]) / 16, blank,
                len(p["false_tricks"]) / 16, modifiers, p["score"] / 50, last.get(s, 0) / 50)


# -- Twhist ------------------------------------------------------------------------

_TH_K = th_cards.DECK_SIZE
_TH_PHASES = ("play", "pick", "over")
_TH_TWHIST = th_cards.TWHIST_NAMES


class TwhistEncoder(Encoder):
    """Twhist: 32 number cards, four Twhist cards per seat, the FLIP cards.

    The number of colours and of FLIP values are match options, so the encoder
    is built for the match's options (they never change within a match)."""

    game_id = "twhist"

    def __init__(self, num_players: int, options: Mapping[str, Any]) -> None:
        super().__init__(num_players)
        n, k, lay = num_players, _TH_K, self.layout
        self.colours: list[str] = list(options["colours"])
        self.flip_min: int = options["flip_min"]
        flips = options["flip_max"] - self.flip_min + 1
        c = len(self.colours)
        self.hand = lay.flags("hand", k, "cards in the seat's hand")
        self.twhist_hand = lay.flags("twhist_hand", 4, "the seat's Twhist cards still held")
        self.trick = lay.flags("trick", n * (k + 4), "the trick: block r holds relative seat"
                                                     " r's number card (32) or Twhist card (4)")
        self.lead = lay.flags("lead_colour", c, "the lead colour")
        self.picked = lay.flags("picked", k, "cards the picker has picked")
        self.pool = lay.flags("pool", k, "the trick's number cards left to pick")
        self.open = lay.flags("open_cards", k, "the open cards (not dealt)")
        self.discard = lay.flags("discard", k, "cards of finished tricks")
        self.phase = lay.flags("phase", 3, "play, pick, over")
        self.to_act = lay.flags("to_act", n, "the seat to act (relative)")
        self.roles = lay.flags("roles", 4 * n, "relative dealer, leader, picker, next leader")
        self.numbers = lay.numbers("numbers", 2, "tricks done/tricks total, tricks total/14")
        self.players = []
        for r in range(n):
            self.players.append((
                lay.seat_flags(r, "twhist", 4, "its Twhist cards still held (when they lie open)"),
                lay.seat_flags(r, "star_side", flips, "FLIP cards star side up"),
                lay.seat_flags(r, "void", c, "colours it has shown it lacks"),
                lay.seat_numbers(r, "counts", 4, "hand/10, Twhist cards/4, stars/10,"
                                 " star cards/10"),
            ))

    def _fill(self, out: Tensor, obs: Mapping[str, Any]) -> None:
        me = obs["seat"]
        k = _TH_K
        _set(out, self.hand, _ids(obs["hand"]))
        _set(out, self.twhist_hand, (_TH_TWHIST.index(t) for t in obs["twhist_hand"]))
        for play in obs["trick"]:
            block = self.trick + self._rel(play["seat"], me) * (k + 4)
            if play["twhist"]:
                out[block + k + _TH_TWHIST.index(play["twhist"])] = 1.0
            else:
                out[block + play["card"]["id"]] = 1.0
        if obs["lead_colour"]:
            out[self.lead + self.colours.index(obs["lead_colour"])] = 1.0
        _set(out, self.picked, _ids(obs["picked"]))
        _set(out, self.pool, _ids(obs["pool"]))
        _set(out, self.open, _ids(obs["open_cards"]))
        _set(out, self.discard, _ids(obs["discard"]))
        out[self.phase + _TH_PHASES.index(obs["phase"])] = 1.0
        n = self.num_players
        _set(out, self.to_act, (self._rel(s, me) for s in obs["to_act"]))
        for i, key in enumerate(("dealer", "leader", "picker", "next_leader")):
            if obs[key] >= 0:
                out[self.roles + i * n + self._rel(obs[key], me)] = 1.0
        out[self.numbers:self.numbers + 2] = (obs["tricks_done"] / obs["tricks_total"],
                                              obs["tricks_total"] / 14)
        for p in obs["players"]:
            twhist, star, void, counts = self.players[self._rel(p["seat"], me)]
            _set(out, twhist, (_TH_TWHIST.index(t) for t in p["twhist_names"]))
            _set(out, star, (v - self.flip_min for v in p["star_side"]))
            _set(out, void, (self.colours.index(c) for c in p["void"]))
            out[counts:counts + 4] = (p["hand_count"] / 10, p["twhist_count"] / 4,
                                      p["stars"] / 10, p["star_cards"] / 10)


def encoder(game_id: str, num_players: int, options: Mapping[str, Any] | None = None
            ) -> Encoder:
    """The encoder of ``game_id`` for ``num_players`` seats and the match ``options``."""
    info = game(game_id)
    if not info.min_players <= num_players <= info.max_players:
        raise InvalidOptions(f"{game_id} is for {info.min_players}-{info.max_players} players,"
                             f" got {num_players}")
    if game_id == "twisted":
        return TwistedEncoder(num_players)
    if game_id == "tricky_twist":
        return TrickyTwistEncoder(num_players)
    if game_id == "twhist":
        return TwhistEncoder(num_players, merge_options(info.defaults, options))
    raise InvalidOptions(f"unknown game {game_id!r}; games: {', '.join(GAME_IDS)}")


def encoder_for(observation: Mapping[str, Any]) -> Encoder:
    """The encoder that fits an observation as an agent receives it (its game, its
    player count and, for Twhist, the rules it carries)."""
    game_id = observation["game"]
    if game_id == "twisted":
        return encoder(game_id, len(observation["seats"]))
    if game_id == "tricky_twist":
        return encoder(game_id, observation["num_players"])
    if game_id == "twhist":
        return encoder(game_id, len(observation["players"]), observation["rules"])
    raise InvalidOptions(f"unknown game {game_id!r}; games: {', '.join(GAME_IDS)}")
