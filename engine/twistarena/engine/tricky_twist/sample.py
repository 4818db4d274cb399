"""A Tricky Twist state from one seat's observation, the unseen dealt at random.

What a seat does not see: the other hands (except cards everybody saw go back
into them, TT-6.1a), the other reserves (TT-3.3), the undealt cards, the order of
its own reserve, and the scoring cards still face-down (TT-2.2). Every number
card that is not in its hand or reserve, in a trick, a false trick or the
current trick lies in one of the hidden places, never in a hand that has shown
it lacks the card's family since it last took a reserve card (TT-4.3, TT-4.1).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..core import JSON, InvalidObservation
from ..dealing import deal_hidden
from .cards import BONUS_NAMES, DECK_SIZE, FAMILIES, FAMILY_OF
from .state import END_BONUS, GAME_OVER, TrickyTwistState, end_order

_PHASES = ("reserve", "reserve_window", "play", "bonus_pick", "take_back", END_BONUS,
           GAME_OVER)


def sample_state(observation: Mapping[str, Any], options: JSON,
                 rng: random.Random) -> TrickyTwistState:
    """A state whose observation for ``observation["seat"]`` is ``observation``."""
    n = observation["num_players"]
    me = observation["seat"]
    state = TrickyTwistState(n, 0, options)  # every field is set from the observation below
    if observation["phase"] not in _PHASES or not 0 <= me < n:
        raise InvalidObservation(
            f"not a Tricky Twist observation of a seat: {observation['phase']!r}")
    players = observation["players"]
    decision = observation["decision"]

    def ids(cards: Any) -> list[int]:
        return [c["id"] for c in cards]

    family = {name: i for i, name in enumerate(FAMILIES)}
    bonus = {name: i for i, name in enumerate(BONUS_NAMES)}
    state.round_no = observation["round"] - 1
    state.scoring_deck = _scoring_deck(observation, options, rng)
    state.reveal(observation["scoring_card"])
    state.first_player = observation["first_player"]
    state.leader = observation["leader"]
    state.phase = observation["phase"]
    state.acting = tuple(observation["to_act"])
    state.turn = state.acting[0] if state.acting else state.leader
    state.total = list(observation["scores"])
    state.last_round = [dict(row) for row in observation["last_round"]]
    state.end_choices = [dict(choice) for choice in observation["end_choices"]]
    state.supply = [bonus[b["bonus"]] for b in observation["supply"]]
    state.out = [bonus[b] for b in observation["bonus_out"]]
    state.trick = [p["card"]["id"] for p in observation["trick"]]
    state.window = list(decision["window_queue"])
    state.picks = list(decision["pick_queue"])
    state.sub = decision["index"]
    seen = {*ids(observation["hand"]), *ids(observation["reserve"]), *state.trick}
    for s, p in enumerate(players):
        state.held[s] = [bonus[b["bonus"]] for b in p["bonuses"]]
        state.known[s] = ids(p["known_in_hand"])
        state.voids[s] = sum(1 << family[f] for f in p["void"])
        state.tricks[s] = [tuple(ids(t["cards"])) for t in p["tricks"]]
        state.false[s] = [(family[f["family"]] if f["family"] else -1, f["value"],
                           tuple(ids(f["cards"])), f["source"], f["modifier"])
                          for f in p["false_tricks"]]
        seen.update(state.known[s])
        seen.update(c for t in state.tricks[s] for c in t)
        seen.update(c for f in state.false[s] for c in f[2])
    if state.phase == END_BONUS:  # TT-6.5: the steps left, from the one being decided
        steps = end_order(state)
        now = (decision["seat"], bonus[decision["bonus"]])
        state.end_steps = steps[steps.index(now):] if now in steps else []
    others = [s for s in range(n) if s != me]
    box = DECK_SIZE - n * state.hand_size
    places: list[tuple[int, int]] = []
    for s in others:
        places += [(players[s]["hand_count"] - len(state.known[s]), state.voids[s]),
                   (players[s]["reserve_count"], 0)]
    places.append((box, 0))
    try:
        dealt = deal_hidden([c for c in range(DECK_SIZE) if c not in seen], places, FAMILY_OF,
                            rng)
    except ValueError as error:
        raise InvalidObservation(f"no deal fits the observation: {error}") from None
    state.hands[me] = ids(observation["hand"])
    reserve = sorted(ids(observation["reserve"]))
    rng.shuffle(reserve)  # TT-3.3: its owner knows the cards, not their order
    state.reserves[me] = reserve
    for i, s in enumerate(others):
        state.hands[s] = sorted(state.known[s] + dealt[2 * i])
        state.reserves[s] = dealt[2 * i + 1]
    state.box = sorted(dealt[-1])
    state._cache_seat = -1
    state.forget_the_deal(rng)
    return state


def _scoring_deck(observation: Mapping[str, Any], options: JSON,
                  rng: random.Random) -> list[str]:
    """The past and current scoring cards as shown, the face-down ones in random order."""
    shown = [*observation["past_scoring_cards"], observation["scoring_card"]]
    left: Counter[str] = Counter(options["scoring_cards"])
    left.subtract(shown)
    if any(count < 0 for count in left.values()):
        raise InvalidObservation(f"scoring cards {shown} are not all in the options' deck")
    future = sorted(left.elements())
    rng.shuffle(future)
    if len(future) != observation["scoring_cards_left"]:
        raise InvalidObservation("the number of face-down scoring cards does not match")
    return shown + future
