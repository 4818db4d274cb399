"""``engine.sample_state``: from one seat's observation, states it cannot tell apart
from the real one, uniform over what it cannot see (TT-4.3, TH-3.3: shown voids hold).

The conformance playouts (conformance.check_sample) check, at random points of
every game, that a sample shows the seat exactly its observation; here many
samples of one position must put every unseen card in every place it could be.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from collections.abc import Callable

import pytest
from twistarena import engine
from twistarena.engine import InvalidObservation, State
from twistarena.engine.dealing import deal_hidden
from twistarena.engine.tricky_twist.cards import FAMILY_OF
from twistarena.engine.tricky_twist.state import TrickyTwistState
from twistarena.engine.twhist.state import TwhistState

CASES = [("tricky_twist", 3, {}), ("tricky_twist", 4, {}), ("twisted", 2, {"expert": True}),
         ("twisted", 4, {}), ("twhist", 3, {}), ("twhist", 5, {})]


def _hidden_places(state: State, seat: int) -> tuple[dict[str, tuple[list[int], int]],
                                                     Callable[[int], int]]:
    """zone -> (the cards of it hidden from ``seat``, void mask), and the suit of a card."""
    others = [s for s in range(state.num_players) if s != seat]
    if isinstance(state, TrickyTwistState):
        places = {"box": (list(state.box), 0)}
        for s in others:
            places[f"hand_{s}"] = ([c for c in state.hands[s] if c not in state.known[s]],
                                   state.voids[s])
            places[f"reserve_{s}"] = (list(state.reserves[s]), 0)
        return places, FAMILY_OF.__getitem__
    if isinstance(state, TwhistState):
        colour = state.t.colour_of
        return ({f"hand_{s}": (list(state.hands[s]), state.voids[s]) for s in others},
                colour.__getitem__)
    zones = state.card_zones()
    places = {"draw_pile": (zones["draw_pile"], 0)}
    places.update({f"hand_{s}": (zones[f"hand_{s}"], 0) for s in others})
    places.update({f"face_down_{s}": (zones[f"face_down_{s}"], 0)
                   for s in range(state.num_players)})
    return places, lambda card: 0


def _positions(game_id: str, players: int, options: dict) -> list[tuple[State, int]]:
    out = []
    for seed, steps in ((1, 12), (2, 40), (3, 90)):
        state = engine.make(game_id, players, seed, options)
        rng = random.Random(seed)
        for _ in range(steps):
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
        if not state.is_terminal():
            out.append((state, state.to_act()[0]))
    return out


@pytest.mark.parametrize(("game_id", "players", "options"), CASES)
def test_every_unseen_card_appears_in_every_place_it_could_be(game_id: str, players: int,
                                                              options: dict) -> None:
    checked = 0
    for state, seat in _positions(game_id, players, options):
        observation = json.loads(json.dumps(state.observation(seat)))
        truth, suit = _hidden_places(state, seat)
        could: dict[int, set[str]] = {}
        for cards, _ in truth.values():
            for card in cards:
                could[card] = {z for z, (held, void) in truth.items()
                               if held and not void >> suit(card) & 1}
        seen: dict[int, set[str]] = {card: set() for card in could}
        rng = random.Random(7)
        for _ in range(300):
            sample = engine.sample_state(game_id, observation, rng, options)
            assert sample.observation(seat) == observation
            for zone, (cards, _) in _hidden_places(sample, seat)[0].items():
                for card in cards:
                    seen[card].add(zone)
        assert seen == could
        checked += 1
    assert checked >= 2


def test_voids_shown_in_the_observation_hold_in_every_sample() -> None:
    """TT-4.3: a seat that did not follow is never dealt the led family, and the
    observation says so to every seat (players[].void)."""
    rng = random.Random(3)
    for seed in range(30):
        state = engine.make("tricky_twist", 4, seed)
        assert isinstance(state, TrickyTwistState)
        play = random.Random(seed)
        while not state.is_terminal() and not any(state.voids):
            seat = state.to_act()[0]
            state.apply(seat, play.choice(list(state.legal_action_ids(seat))))
        if state.is_terminal():
            continue
        void_seat = next(s for s in range(4) if state.voids[s])
        observer = (void_seat + 1) % 4
        observation = state.observation(observer)
        assert observation["players"][void_seat]["void"]
        for _ in range(20):
            sample = engine.sample_state("tricky_twist", observation, rng)
            assert isinstance(sample, TrickyTwistState)
            hidden = [c for c in sample.hands[void_seat] if c not in sample.known[void_seat]]
            assert not any(state.voids[void_seat] >> FAMILY_OF[c] & 1 for c in hidden)
        return
    raise AssertionError("no seat ever failed to follow")


def test_the_exact_deal_is_uniform_when_voids_are_tight() -> None:
    """With no rejection tries left, the counting sampler draws every consistent deal
    equally often (and only those)."""
    pool, suit_of = [0, 1, 2, 3, 4], [0, 0, 1, 1, 2]
    places = [(2, 0b001), (2, 0b010), (1, 0)]  # first place lacks suit 0, second suit 1
    consistent = set()
    for order in itertools.permutations(pool):
        deal = (frozenset(order[:2]), frozenset(order[2:4]), frozenset(order[4:]))
        if not any(suit_of[c] == 0 for c in deal[0]) and not any(suit_of[c] == 1
                                                                for c in deal[1]):
            consistent.add(deal)
    rng = random.Random(5)
    counts: Counter[tuple[frozenset[int], ...]] = Counter()
    draws = 4000
    for _ in range(draws):
        dealt = deal_hidden(pool, places, suit_of, rng, tries=0)
        counts[tuple(frozenset(part) for part in dealt)] += 1
    assert set(counts) == consistent
    expected = draws / len(consistent)
    assert all(abs(n - expected) < 0.25 * expected for n in counts.values())


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_observations_that_no_state_shows_are_refused(game_id: str) -> None:
    info = engine.game(game_id)
    state = engine.make(game_id, info.min_players, 4)
    observation = state.observation(0)
    with pytest.raises(InvalidObservation):
        engine.sample_state("twhist" if game_id != "twhist" else "twisted", observation,
                            random.Random(1))
    broken = dict(observation)
    broken.pop("players" if "players" in broken else "seats")
    with pytest.raises(InvalidObservation):
        engine.sample_state(game_id, broken, random.Random(1))
    with pytest.raises(InvalidObservation):
        engine.sample_state(game_id, {**observation, "hand": []}, random.Random(1))
