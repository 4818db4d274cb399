"""A rule-based Twisted bot (docs/rules/twisted.md): twist when it can, otherwise leave the next
player as few ways out as possible, and keep the cards that can still twist.

It reads only its own observation: cards it has not seen (other hands and the draw
pile) are the ones an opponent might use to extend or twist.
"""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence, Set
from typing import Any

from twistarena.engine import Action
from twistarena.engine.twisted.cards import DECK, IS_TOAD, PARTNER
from twistarena.engine.twisted.state import TAKE, TWIST_BASE, TwistedState

from .. import Bot, SeededBot

#: Weights of the evaluation, in points of the TW-4.3 score.
TWIST_GAIN = 2.0          # the twisted pair lands in the plus pile
ESCAPE_COST = 0.35        # per unseen card that lets the next player extend on ours
KEEP_TWIST_COST = 1.2     # playing a card whose partner may still reach the row
TOAD_DUMP_BONUS = 0.6     # a toad in hand never scores; in the row it hurts the taker
LIVE_PARTNER_IN_ROW = 2.5  # extending with a card that could twist right now


def make(seed: int | None = None) -> Bot:
    """The bot; ``seed`` breaks ties reproducibly."""
    return SeededBot(_choose, seed)


def _choose(obs: Mapping[str, Any], legal: Sequence[Action], rng: random.Random) -> int:
    seen = set(obs["hand"]) | set(obs["row"])
    for info in obs["seats"]:
        seen.update(info["plus_pile"])
        seen.update(info["minus_pile"])
    return choose(obs["row"], seen, obs.get("extend_distance", 10), [a.id for a in legal], rng)


def choose_in_state(state: TwistedState, seat: int, rng: random.Random) -> int:
    """The same choice as the bot given ``seat``'s observation of ``state``, read
    straight from the state: search simulations play thousands of these moves."""
    seen = {*state.hands[seat], *state.row}
    for pile in state.plus:
        seen.update(pile)
    for pile in state.minus:
        seen.update(pile)
    return choose(state.row, seen, state.distance, state.legal_action_ids(seat), rng)


def choose(row: Sequence[int], seen: Set[int], distance: int, legal: Sequence[int],
           rng: random.Random) -> int:
    """The best of the ``legal`` action ids (state.py's numbering) by the weights
    above; ``seen`` holds every card the seat has seen (TW-3.5), the rest are unseen."""
    unseen = [c for c in DECK if c not in seen]  # sorted, as DECK is
    in_row = set(row)
    best_id = legal[0]
    best = float("-inf")
    for action in legal:
        if action == TAKE:
            value = -_penalty(row) - 3.0  # the last resort: the whole row is minus points
        elif action > TWIST_BASE:
            # Twisting now is sure; holding it risks the row being taken first.
            value = TWIST_GAIN + 0.1 * len(row)
        else:  # extend, or start a row
            card = action
            escapes = bisect_right(unseen, card + distance) - bisect_left(unseen, card - distance)
            value = -ESCAPE_COST * escapes
            partner = PARTNER[card]
            if partner in in_row:
                value -= LIVE_PARTNER_IN_ROW
            elif partner >= 0 and partner not in seen:
                value -= KEEP_TWIST_COST
            if IS_TOAD[card]:
                value += TOAD_DUMP_BONUS
        value += rng.random() * 1e-3
        if value > best:
            best, best_id = value, action
    return best_id


def _penalty(cards: Sequence[int]) -> int:
    """TW-4.3 minus points of ``cards``."""
    return sum(5 if IS_TOAD[c] else 1 for c in cards)
