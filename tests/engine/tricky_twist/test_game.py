"""Whole matches: rounds and rotation (TT-2), hidden information (RULES conventions,
TT-3.3, TT-4.1), the generic engine contract, narration."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from twistarena import engine
from twistarena.engine import InvalidOptions
from twistarena.engine.tricky_twist import GAME
from twistarena.engine.tricky_twist import state as st

from ..conformance import playout
from .helpers import finish_reserves, new


def random_game(n: int, seed: int, stop: int = 10**6) -> st.TrickyTwistState:
    state = new(n, seed)
    rng = random.Random(seed)
    steps = 0
    while not state.is_terminal() and steps < stop:
        seat = rng.choice(state.to_act())
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
        steps += 1
    return state


@pytest.mark.parametrize("n", [3, 4])
def test_generic_contract_over_many_seeds(n: int) -> None:
    """The engine contract (tests/engine/conformance.py) for 3 and 4 players."""
    for seed in range(25):
        playout("tricky_twist", n, seed * 7919 + n)


@pytest.mark.parametrize("n", [3, 4])
def test_rounds_equal_players_and_first_player_rotates(n: int) -> None:
    """TT-2.1: as many rounds as players; TT-2.3: the first player moves one seat
    left each round, and leads (opens the reserve window of) the first trick."""
    state = random_game(n, seed=11 + n)
    starts = [e.public for e in state.events if e.kind == "round_start"]
    assert [e["round"] for e in starts] == list(range(1, n + 1))
    firsts = [e["first_player"] for e in starts]
    assert firsts == [(firsts[0] + k) % n for k in range(n)]
    assert len([e for e in state.events if e.kind == "round_scored"]) == n
    cards = [e["scoring_card"] for e in starts]
    assert len(set(cards)) == n  # drawn without replacement from the deck (TT-2.2)
    for seed in range(3):
        fresh = new(n, seed)
        finish_reserves(fresh)
        assert fresh.to_act() == (fresh.first_player,)


def test_final_ranking_shares_the_victory() -> None:
    """TT-2.4: most stars wins; tied players share the victory."""
    state = random_game(4, seed=3)
    assert state.is_terminal()
    best = max(state.scores())
    assert state.winners() == [s for s in range(4) if state.scores()[s] == best]
    state.total = [30, 41, 41, 12]
    assert state.winners() == [1, 2] and state.places() == [3, 1, 1, 4]


def _card_ids(obj: Any) -> set[int]:
    """Every card id inside a JSON value (cards are dicts with id/family/value)."""
    found: set[int] = set()
    if isinstance(obj, dict):
        if {"id", "family", "value"} <= obj.keys() and obj["id"] >= 0:
            found.add(obj["id"])
        for v in obj.values():
            found |= _card_ids(v)
    elif isinstance(obj, list):
        for v in obj:
            found |= _card_ids(v)
    return found


def this_round(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events since the last deal (cards of earlier rounds are dealt again)."""
    start = max(i for i, e in enumerate(events) if e["kind"] == "round_start")
    return events[start:]


@pytest.mark.parametrize(("n", "stop"), [(3, 3), (4, 25), (4, 60), (3, 120), (4, 200)])
def test_observation_and_events_never_show_what_a_seat_may_not_know(n: int, stop: int) -> None:
    """RULES conventions, TT-3.3, TT-4.1: no other hand, no other reserve, no undealt card."""
    for seed in range(8):
        state = random_game(n, seed, stop)
        for seat in range(n):
            secret = set(state.box)
            for other in range(n):
                if other != seat:
                    secret |= set(state.reserves[other])
                    secret |= set(state.hands[other]) - set(state.known[other])
            assert not _card_ids(state.observation(seat)) & secret
            assert not _card_ids(this_round(state.event_log(seat))) & secret
        hidden = {x for s in range(n) for x in state.hands[s] + state.reserves[s]} | set(
            state.box)
        hidden -= {x for k in state.known for x in k}
        assert not _card_ids(state.public_view()) & hidden
        assert not _card_ids(this_round(state.event_log(None))) & hidden


def _swap_hidden(state: st.TrickyTwistState, seat: int) -> st.TrickyTwistState:
    """A copy differing only in what ``seat`` may not know: the others' unknown hand
    cards and reserve cards dealt anew among them (same counts), its own reserve
    order reversed, the future scoring cards reversed."""
    other = state.clone()
    assert isinstance(other, st.TrickyTwistState)
    others = [s for s in range(state.num_players) if s != seat]
    unknown = {s: [x for x in other.hands[s] if x not in other.known[s]] for s in others}
    pool = sorted(x for s in others for x in unknown[s] + other.reserves[s])
    random.Random(1).shuffle(pool)
    for s in others:
        k = len(unknown[s])
        other.hands[s] = sorted(other.known[s] + pool[:k])
        r = len(other.reserves[s])
        other.reserves[s] = pool[k:k + r]
        pool = pool[k + r:]
    other.reserves[seat] = other.reserves[seat][::-1]
    other.scoring_deck[other.round_no + 1:] = other.scoring_deck[other.round_no + 1:][::-1]
    other._cache_seat = -1
    return other


@pytest.mark.parametrize("stop", [0, 40, 90])
def test_states_differing_only_in_hidden_cards_look_the_same(stop: int) -> None:
    """RULES conventions: seat 0's observation depends on nothing it may not know
    (others' hands and reserves, its own reserve order, future scoring cards)."""
    state = random_game(4, seed=21, stop=stop)
    if stop == 0:
        finish_reserves(state)
    other = _swap_hidden(state, 0)
    assert other.hands != state.hands
    assert other.observation(0) == state.observation(0)
    assert other.public_view() == state.public_view()
    assert other.observation(1) != state.observation(1)  # the check can fail
    future = state.scoring_deck[state.round_no + 1:]
    text = json.dumps(state.observation(0)) + json.dumps(state.public_view())
    assert not [name for name in future if f'"{name}"' in text]


def test_observation_keys_are_the_same_in_every_phase_and_proto_friendly() -> None:
    """Observations keep one fixed key set, no None, no list of lists."""
    state = new(3, seed=2)
    keys = set(state.observation(0))
    rng = random.Random(2)

    def check(value: Any) -> None:
        assert value is not None
        if isinstance(value, list):
            assert not any(isinstance(v, list) for v in value)
            for v in value:
                check(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                assert isinstance(k, str)
                check(v)
        else:
            assert isinstance(value, int | str | bool)

    phases = set()
    while not state.is_terminal():
        obs = state.observation(state.to_act()[0])
        phases.add(obs["phase"])
        assert set(obs) == keys and obs["game"] == "tricky_twist"
        check(obs)
        seat = rng.choice(state.to_act())
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    assert {"reserve", "reserve_window", "play", "bonus_pick"} <= phases
    assert set(state.public_view()) == keys


def test_every_event_narrates() -> None:
    """Each event gives one line (or None for the unimportant ones)."""
    state = random_game(4, seed=5)
    kinds = set()
    for seat in (None, 0):
        for event in state.event_log(seat):
            line = GAME.narrate(event)
            assert line is None or (isinstance(line, str) and line)
            kinds.add(event["kind"])
    assert {"round_start", "play", "trick", "round_scored", "game_over"} <= kinds
    line = GAME.narrate({"kind": "trick", "winner": 1, "cards": [
        {"id": 18, "family": "sun", "value": 7}], "false_tricks": [
        {"seat": 2, "card": {"id": 1, "family": "moon", "value": 2}}]})
    assert line == "Seat 1 wins the trick with 7 of sun; seat 2 keeps 2 of moon as a false trick"


@pytest.mark.parametrize("options", [
    {"variable_cards": {"v1": {"plain": "symbol_moon_moon", "framed": "odd"}}},
    {"scoring_cards": ["odd_values", "no_such_card", "even_values", "longest_run"]},
    {"scoring_cards": ["odd_values"]},
    {"reserve_size": 12},
    {"odd_values": [0, 13]},
])
def test_bad_options_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidOptions):
        engine.make("tricky_twist", 4, 1, options)


def test_a_forced_scoring_deck_and_a_smaller_reserve() -> None:
    """TT-2.2 deck and TT-3.3 reserve size are options."""
    state = new(3, options={"scoring_cards": ["most_false_tricks"] * 3, "reserve_size": 2})
    assert state.scoring_card == "most_false_tricks"
    finish_reserves(state)
    assert all(len(r) == 2 for r in state.reserves) and all(len(h) == 14 for h in state.hands)
