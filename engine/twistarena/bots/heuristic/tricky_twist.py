"""A rule-based Tricky Twist bot: balance tricks and false tricks (TT-7.2), make
voids for false tricks, and take every end-of-round choice that scores best now."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from twistarena.engine import Action
from twistarena.engine.tricky_twist import scoring
from twistarena.engine.tricky_twist.cards import FAMILIES
from twistarena.engine.tricky_twist.data import DEFAULTS

from .. import Bot

#: bonus preference when a 7 earns a pick (TT-5.4); Take back is handled apart
_PICK_ORDER = ("blank", "plus", "flip", "any", "modifier", "odd", "even", "symbol")
_FAM = {name: i for i, name in enumerate(FAMILIES)}


def _false_pairs(player: Mapping[str, Any]) -> list[tuple[int, int]]:
    return [(_FAM.get(f["family"], -1), f["value"]) for f in player["false_tricks"]]


def _estimate(obs: Mapping[str, Any], tricks: int, false: list[tuple[int, int]],
              plus: bool) -> int:
    """This seat's round stars if the round were scored with these tricks/false tricks."""
    stars = scoring.base_stars(tricks, len(false)) + (tricks if plus else 0)
    card = obs["scoring_card"]
    if card in scoring.RANKED:
        counts = [len(p["false_tricks"]) for p in obs["players"]]
        counts[obs["seat"]] = len(false)
        places = scoring.place_stars(counts, card == "most_false_tricks",
                                     DEFAULTS["place_stars"])
        return stars + places[int(obs["seat"])]
    return stars + scoring.table_stars(DEFAULTS["star_tables"][card],
                                       scoring.card_count(card, false))


class TrickyTwistBot:
    """``(observation, legal_actions) -> action id``; see the module docstring."""

    def __init__(self, seed: int | None) -> None:
        self.rng = random.Random(seed)

    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        obs, legal = observation, legal_actions
        kind = obs["decision"]["kind"] or obs["phase"]
        me = obs["players"][obs["seat"]]
        tricks, false = len(me["tricks"]), _false_pairs(me)
        plus = any(b["bonus"] == "plus" for b in me["bonuses"])
        by_kind: dict[str, list[Action]] = {}
        for a in legal:
            by_kind.setdefault(a.payload["kind"], []).append(a)
        if kind == "reserve":
            return self._reserve(obs, legal)
        if kind == "reserve_window":
            take = obs["players"][obs["seat"]]["hand_count"] <= 1
            return next(a.id for a in legal if (a.payload["kind"] == "take_reserve") == take)
        if kind == "play":
            return self._play(obs, legal, tricks, len(false))
        if kind == "bonus_pick":
            faces = {a.payload["face"]: a.id for a in by_kind.get("bonus", [])}
            for face in _PICK_ORDER:
                for name, aid in faces.items():
                    if name.split("_")[0] == face:
                        return aid
            if "take_back" in faces and len(false) > tricks + 1:
                return faces["take_back"]
            return by_kind["decline"][0].id
        if kind == "take_back":
            if len(false) > tricks and "take_back" in by_kind:
                return by_kind["take_back"][0].id
            return by_kind["decline"][0].id
        # End of round (TT-6.5): greedy on the estimated round score.
        best, best_id = -1, legal[0].id
        for a in legal:
            for t, f in self._after(obs, a.payload, me, tricks, false):
                value = _estimate(obs, t, f, plus)
                if value > best:
                    best, best_id = value, a.id
        return best_id

    @staticmethod
    def _after(obs: Mapping[str, Any], p: Mapping[str, Any], me: Mapping[str, Any], tricks: int,
               false: list[tuple[int, int]]) -> list[tuple[int, list[tuple[int, int]]]]:
        """Possible (tricks, false tricks) after the end-of-round choice ``p``; a choice
        with a sub-decision lists every outcome of it."""
        k = p["kind"]
        if k == "flip_trick":
            cards = me["tricks"][p["trick"]]["cards"]
            return [(tricks - 1, [*false, (_FAM[c["family"]], c["value"])]) for c in cards]
        if k == "flip_top":
            return [(tricks - 1, [*false, (_FAM[p["card"]["family"]], p["card"]["value"])])]
        if k == "flip_false_trick":
            rest = list(false)
            rest.remove((_FAM[p["card"]["family"]], p["card"]["value"]))
            return [(tricks + 1, rest)]
        if k == "blank":
            if p["as"] == "trick":
                return [(tricks + 1, false)]
            return [(tricks, [*false, (-1, -1)])]
        if k == "symbol":
            return [(tricks, [*false, (_FAM[p["family"]], -1)])]
        if k == "value":
            return [(tricks, [*false, (-1, p["value"])])]
        if k in ("modify", "modify_delta"):
            i = p["false_trick"] if k == "modify" else obs["decision"]["index"]
            deltas = (-1, 1) if k == "modify" else (p["delta"],)
            out = []
            for d in deltas:
                fam, value = false[i]
                if 1 <= value + d <= 12:
                    changed = list(false)
                    changed[i] = (fam, value + d)
                    out.append((tricks, changed))
            return out
        return [(tricks, false)]

    @staticmethod
    def _reserve(obs: Mapping[str, Any], legal: Sequence[Action]) -> int:
        """Lay aside the shortest families first: voids turn plays into false tricks."""
        counts = [0, 0, 0, 0]
        for c in obs["hand"]:
            counts[_FAM[c["family"]]] += 1
        return min(legal, key=lambda a: (counts[_FAM[a.payload["card"]["family"]]],
                                         a.payload["card"]["value"])).id

    @staticmethod
    def _play(obs: Mapping[str, Any], legal: Sequence[Action], tricks: int, false: int) -> int:
        cards = [(a.payload["card"], a.id) for a in legal]
        trick = obs["trick"]
        want_trick = tricks <= false
        if not trick:  # leading: a high card to win, a low one to pass the lead on
            pick = max if want_trick else min
            return pick(cards, key=lambda x: x[0]["value"])[1]
        led = obs["led_family"]
        if cards[0][0]["family"] != led:  # void: the card becomes a false trick
            return min(cards, key=lambda x: x[0]["value"])[1]
        best = max(t["card"]["value"] for t in trick if t["card"]["family"] == led)
        high = max(cards, key=lambda x: x[0]["value"])
        if want_trick and high[0]["value"] > best:
            return high[1]
        return min(cards, key=lambda x: x[0]["value"])[1]


def make(seed: int | None = None) -> Bot:
    return TrickyTwistBot(seed)
