"""A Twisted state from one seat's observation, the unseen cards dealt at random.

What a seat does not see is the other hands, the draw pile and the face-down
expert cards (TW-4.5): every card that is in neither its hand, the row, nor the
open part of a plus or minus pile (TW-3.5) lies in one of them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from ..core import JSON, InvalidObservation
from ..dealing import deal_hidden
from .cards import DECK
from .state import OVER, PLAY, START_ROW, TwistedState


def sample_state(observation: Mapping[str, Any], options: JSON,
                 rng: random.Random) -> TwistedState:
    """A state whose observation for ``observation["seat"]`` is ``observation``."""
    seats = observation["seats"]
    n = len(seats)
    me = observation["seat"]
    state = TwistedState(n, 0, options)  # every field is set from the observation below
    if observation["phase"] not in (PLAY, START_ROW, OVER) or not 0 <= me < n:
        raise InvalidObservation(f"not a Twisted observation of a seat: {observation['phase']!r}")
    state.round = observation["round"]
    state.starter = observation["starter"]
    state.first_starter = (state.starter - state.round + 1) % n  # TW-2.2
    state.phase = observation["phase"]
    state.turn = observation["turn"] if state.phase != OVER else state.starter
    state.row = list(observation["row"])
    state.plus = [list(s["plus_pile"]) for s in seats]
    state.minus = [list(s["minus_pile"]) for s in seats]
    state.totals = [s["total"] for s in seats]
    seen = {*observation["hand"], *state.row}
    for s in range(n):
        seen.update(state.plus[s], state.minus[s])
    unseen = [c for c in DECK if c not in seen]
    others = [s for s in range(n) if s != me]
    places = [(observation["draw_pile"], 0)] + [(seats[s]["hand_count"], 0) for s in others]
    places += [(s["minus_face_down"], 0) for s in seats]
    try:
        pile, *rest = deal_hidden(unseen, places, (), rng)
    except ValueError as error:
        raise InvalidObservation(f"the counts do not match the unseen cards: {error}") from None
    state.pile = pile
    state.hands[me] = sorted(observation["hand"])
    for s, hand in zip(others, rest[:len(others)], strict=True):
        state.hands[s] = sorted(hand)
    state.face_down = rest[len(others):]
    state._legal = None
    state.forget_the_deal(rng)
    return state
