"""A Twhist state from one seat's observation, the unseen cards dealt at random.

A seat does not see the other hands' number cards; every number card that is
not in its hand, open (TH-2.1), in the trick or discarded (TH-5.5) lies in one of
them, never in a colour that hand has shown it lacks (TH-3.3). Twhist cards are
known: each player has one of each kind and every played one is seen (TH-1.2).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from ..core import JSON, InvalidObservation
from ..dealing import deal_hidden
from .cards import DECK_SIZE, TWHIST_BASE, TWHIST_NAMES, resolve_trick
from .state import PHASES, PICK, PLAY, TwhistState


def sample_state(observation: Mapping[str, Any], options: JSON,
                 rng: random.Random) -> TwhistState:
    """A state whose observation for ``observation["seat"]`` is ``observation``.

    The observation carries the match's rules; they are used over ``options``."""
    players = observation["players"]
    n = len(players)
    me = observation["seat"]
    state = TwhistState(n, 0, dict(observation.get("rules") or options))
    if observation["phase"] not in PHASES or not 0 <= me < n:
        raise InvalidObservation(f"not a Twhist observation of a seat: {observation['phase']!r}")
    t = state.t
    colour = {name: i for i, name in enumerate(t.colours)}

    def ids(cards: Any) -> list[int]:
        return [c["id"] for c in cards]

    state.phase = PHASES.index(observation["phase"])
    state.dealer = observation["dealer"]
    state.leader = observation["leader"]
    state.tricks_done = observation["tricks_done"]
    state.tricks_total = observation["tricks_total"]
    state.open_cards = tuple(ids(observation["open_cards"]))
    state.discard = ids(observation["discard"])
    state.trick = [TWHIST_BASE + TWHIST_NAMES.index(p["twhist"]) if p["twhist"] else p["card"]["id"]
                   for p in observation["trick"]]
    lead = observation["lead_colour"]
    state.lead_colour = colour[lead] if lead else -1
    state.turn = (state.leader + len(state.trick)) % n
    state.picker = observation["picker"]
    state.next_leader = observation["next_leader"]
    state.pool = ids(observation["pool"])
    state.picked = ids(observation["picked"])
    state.sit_out = (resolve_trick(state.trick, state.leader, n, t)[2]
                     if state.phase == PICK else 0)
    for s, p in enumerate(players):
        state.flips[s] = sum(1 << (v - t.flip_min) for v in p["star_side"])
        state.stars[s] = p["stars"]
        state.voids[s] = sum(1 << colour[c] for c in p["void"])
        names = observation["twhist_hand"] if s == me else p["twhist_names"]
        if s == me or t.twhist_visible:
            state.twhist[s] = sum(1 << TWHIST_NAMES.index(k) for k in names)
        else:  # hidden Twhist cards (TH-2.2): only their number is in the observation
            kinds = rng.sample(range(len(TWHIST_NAMES)), p["twhist_count"])
            state.twhist[s] = sum(1 << k for k in kinds)
    hand = ids(observation["hand"])
    in_trick = [a for a in state.trick if a < TWHIST_BASE] if state.phase == PLAY else []
    seen = {*hand, *state.open_cards, *state.discard, *in_trick, *state.pool, *state.picked}
    others = [s for s in range(n) if s != me]
    try:
        hands = deal_hidden([c for c in range(DECK_SIZE) if c not in seen],
                            [(players[s]["hand_count"], state.voids[s]) for s in others],
                            t.colour_of, rng)
    except ValueError as error:
        raise InvalidObservation(f"no deal fits the observation: {error}") from None
    state.hands[me] = sorted(hand)
    for s, cards in zip(others, hands, strict=True):
        state.hands[s] = sorted(cards)
    state.forget_the_deal(rng)
    return state
