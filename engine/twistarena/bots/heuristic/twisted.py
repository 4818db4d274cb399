"""A rule-based Twisted bot (docs/rules/twisted.md): twist when it can, otherwise leave the next
player as few ways out as possible, and keep the cards that can still twist.

It reads only its own observation: cards it has not seen (other hands and the draw
pile) are the ones an opponent might use to extend or twist.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from twistarena.engine import Action
from twistarena.engine.twisted.cards import DECK, IS_TOAD, PARTNER

from .. import Bot

#: Weights of the evaluation, in points of the TW-4.3 score.
TWIST_GAIN = 2.0          # the twisted pair lands in the plus pile
ESCAPE_COST = 0.35        # per unseen card that lets the next player extend on ours
KEEP_TWIST_COST = 1.2     # playing a card whose partner may still reach the row
TOAD_DUMP_BONUS = 0.6     # a toad in hand never scores; in the row it hurts the taker
LIVE_PARTNER_IN_ROW = 2.5  # extending with a card that could twist right now


def make(seed: int | None = None) -> Bot:
    """The bot; ``seed`` breaks ties reproducibly."""
    rng = random.Random(seed)

    def act(observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        return _choose(observation, legal_actions, rng)

    return act


def _choose(obs: Mapping[str, Any], legal: Sequence[Action], rng: random.Random) -> int:
    hand: list[int] = list(obs["hand"])
    row: list[int] = list(obs["row"])
    distance: int = obs.get("extend_distance", 10)
    seen = set(hand) | set(row)
    for info in obs["seats"]:
        seen.update(info["plus_pile"])
        seen.update(info["minus_pile"])
    unseen = [c for c in DECK if c not in seen]
    in_row = set(row)

    best_id = legal[0].id
    best = float("-inf")
    for action in legal:
        kind = action.payload.get("kind")
        card = int(action.payload.get("card", -1))
        if kind == "twist":
            # Twisting now is sure; holding it risks the row being taken first.
            value = TWIST_GAIN + 0.1 * len(row)
        elif kind in ("extend", "start"):
            value = -ESCAPE_COST * sum(1 for u in unseen if -distance <= u - card <= distance)
            partner = PARTNER[card]
            if partner in in_row:
                value -= LIVE_PARTNER_IN_ROW
            elif partner >= 0 and partner not in seen:
                value -= KEEP_TWIST_COST
            if IS_TOAD[card]:
                value += TOAD_DUMP_BONUS
        elif kind == "take":
            value = -_penalty(row) - 3.0  # the last resort: the whole row is minus points
        else:
            value = float("-inf")
        value += rng.random() * 1e-3
        if value > best:
            best, best_id = value, action.id
    return best_id


def _penalty(cards: Sequence[int]) -> int:
    """TW-4.3 minus points of ``cards``."""
    return sum(5 if IS_TOAD[c] else 1 for c in cards)

