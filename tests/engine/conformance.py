"""The contract every game of the engine must keep, checked on random playouts.

Game-agnostic: it speaks only the public engine API, so a new game passes it
or is not done. Used by test_conformance.py for every game and player count.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from twistarena import engine
from twistarena.engine import IllegalAction, State

#: No game of docs/rules/ needs more decisions than this; a run past it is a loop.
MAX_DECISIONS = 5000


def _snapshot(state: State) -> tuple[str, list[str], tuple[int, ...], int, int]:
    """Everything visible from outside, to prove that a refused action changed nothing."""
    views = [json.dumps(state.observation(s), sort_keys=True) for s in range(state.num_players)]
    return (
        json.dumps(state.public_view(), sort_keys=True),
        views,
        state.to_act(),
        len(state.history),
        len(state.events),
    )


def _wire_friendly(value: object) -> bool:
    """``check_wire_friendly`` without the paths it names: it runs on every view of
    every step of every playout, so it builds no text until something is wrong
    (then the slow check walks the value again and names the place)."""
    kind = type(value)
    if kind is dict:
        for key, item in value.items():  # type: ignore[attr-defined]
            kind = type(item)
            if type(key) is not str or not (kind is str or kind is int or kind is bool
                                            or _wire_friendly(item)):
                return False
        return True
    if kind is list:
        for item in value:  # type: ignore[attr-defined]
            kind = type(item)
            if not (kind is str or kind is int or kind is bool or
                    (kind is dict and _wire_friendly(item))):
                return False
        return True
    return kind is str or kind is int or kind is bool


def check_wire_friendly(value: object, where: str = "") -> None:
    """Views are mirrored into protobuf messages: no None, no list of lists, str keys."""
    if _wire_friendly(value):
        return
    assert value is not None, f"None at {where}"
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), f"non-text key {key!r} at {where}"
            check_wire_friendly(item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            assert not isinstance(item, list | tuple), f"list of lists at {where}[{i}]"
            check_wire_friendly(item, f"{where}[{i}]")
    else:
        assert isinstance(value, int | str), f"{type(value).__name__} at {where}"


def _cards(state: State) -> Counter[int]:
    return Counter(c for zone in state.card_zones().values() for c in zone)


def check_step(state: State, rng: random.Random, deck: Counter[int],
               ) -> tuple[list[str], list[str]]:
    """All per-step invariants; raises AssertionError with context on failure.
    Returns the fields of seat 0's observation and of the public view (each view
    is built once a step: building them is most of a playout's time)."""
    acting = state.to_act()
    assert acting, "a running match must have a seat to act"
    assert len(set(acting)) == len(acting) and all(0 <= s < state.num_players for s in acting)
    for seat in acting:
        ids = list(state.legal_action_ids(seat))
        assert ids, f"seat {seat} is to act but has no legal action"
        assert ids == sorted(set(ids)), f"legal ids not sorted/unique: {ids}"
        actions = state.legal_actions(seat)
        assert [a.id for a in actions] == ids
        for a in actions:
            assert isinstance(a.label, str) and a.label
            json.dumps(a.to_json())
    idle = [s for s in range(state.num_players) if s not in acting]
    for seat in idle:
        assert list(state.legal_action_ids(seat)) == []
    assert _cards(state) == deck, "cards were created or lost"
    public = state.public_view()
    check_wire_friendly(public, "public_view")
    views = [state.observation(seat) for seat in range(state.num_players)]
    for seat, view in enumerate(views):
        check_wire_friendly(view, f"observation({seat})")
    # Illegal input: refused with a typed error, nothing changes.
    if rng.random() < 0.3:
        before = _snapshot(state)
        seat = acting[0]
        ids = list(state.legal_action_ids(seat))
        bad = [max(ids) + 1, -1, min(ids) - 1 if min(ids) > 0 else 10**9]
        for action_id in bad:
            with pytest.raises(IllegalAction) as err:
                state.apply(seat, action_id)
            assert err.value.reason == IllegalAction.ILLEGAL
            _check_agrees(state, seat, action_id, err.value)
        if idle:
            with pytest.raises(IllegalAction) as err:
                state.apply(idle[0], ids[0])
            assert err.value.reason == IllegalAction.NOT_TO_ACT
            _check_agrees(state, idle[0], ids[0], err.value)
        assert all(state.check(seat, a) is None for a in ids)
        assert _snapshot(state) == before
    return sorted(views[0]), sorted(public)


def _check_agrees(state: State, seat: int, action_id: int, raised: IllegalAction) -> None:
    """``check`` judges as ``apply`` does, without playing anything."""
    found = state.check(seat, action_id)
    assert found is not None
    assert (found.reason, found.message) == (raised.reason, raised.message)


def check_sample(state: State, seat: int, rng: random.Random, options: dict | None,
                 deck: Counter[int]) -> None:
    """``engine.sample_state`` rebuilds, from the seat's observation alone, a state
    that shows the seat that very observation, holds every card once, and plays on."""
    seen = state.observation(seat)
    sample = engine.sample_state(state.game_id, json.loads(json.dumps(seen)), rng, options)
    assert sample.observation(seat) == seen, "the sampled state shows the seat something else"
    assert sample.public_view() == state.public_view()
    assert _cards(sample) == deck
    assert sample.history == [] and sample.events == [] and sample.seed == -1
    assert sample.to_act() == state.to_act()
    assert list(sample.legal_action_ids(seat)) == list(state.legal_action_ids(seat))
    steps = 0
    while not sample.is_terminal() and steps < 40:
        acting = sample.to_act()[0]
        sample.apply(acting, rng.choice(list(sample.legal_action_ids(acting))))
        steps += 1


def playout(game_id: str, num_players: int, seed: int, options: dict | None = None) -> State:
    """Play a random match to its end, checking every invariant along the way."""
    rng = random.Random(seed ^ 0x5EED)
    state = engine.make(game_id, num_players, seed, options)
    deck = _cards(state)
    info = engine.game(game_id)
    assert sum(deck.values()) == info.deck_size
    fork_at = rng.randrange(1, 60)
    fork: tuple[State, str] | None = None
    redealt_differs = False
    steps = 0
    keys = sorted(state.observation(0)), sorted(state.public_view())
    while not state.is_terminal():
        assert check_step(state, rng, deck) == keys, (
            "the observation's fields must be the same in every phase"
        )
        if rng.random() < 0.1:
            seat = rng.randrange(num_players)
            other = state.determinize(seat, rng)
            assert other.observation(seat) == state.observation(seat), (
                f"seat {seat}'s observation depends on what it may not know"
            )
            assert other.public_view() == state.public_view()
            assert _cards(other) == deck
            redealt_differs |= other.card_zones() != state.card_zones()
            # Only what the seat knows may shape the re-deal: from a state that
            # differs in hidden cards, the same generator deals the same cards.
            k = rng.randrange(2**32)
            same = state.determinize(seat, random.Random(k)).card_zones()
            assert other.determinize(seat, random.Random(k)).card_zones() == same
            assert other.history == [] and other.events == []
            check_sample(state, seat, rng, options, deck)
        seat = rng.choice(state.to_act())
        action = rng.choice(list(state.legal_action_ids(seat)))
        if steps == fork_at:
            fork = (state.clone(), json.dumps(state.public_view(), sort_keys=True))
        state.apply(seat, action)
        steps += 1
        assert steps <= MAX_DECISIONS, "the match does not end"
    assert state.to_act() == ()
    assert (sorted(state.observation(0)), sorted(state.public_view())) == keys
    for seat in (None, *range(num_players)):
        for event in state.event_log(seat):
            check_wire_friendly(event, "event")
    with pytest.raises(IllegalAction) as err:
        state.apply(0, 0)
    assert err.value.reason == IllegalAction.GAME_OVER
    _check_agrees(state, 0, 0, err.value)
    scores = state.scores()
    assert len(scores) == num_players and all(isinstance(x, int) for x in scores)
    places = state.places()
    assert min(places) == 1 and state.winners()
    assert all(places[a] <= places[b] for a in range(num_players) for b in range(num_players)
               if scores[a] > scores[b])
    # Replay determinism: the log rebuilds the match exactly.
    again = engine.replay(game_id, num_players, seed, options, state.history)
    assert again.event_log(None) == state.event_log(None)
    for seat in range(num_players):
        assert again.event_log(seat) == state.event_log(seat)
    assert again.scores() == scores and again.is_terminal()
    # Clone independence: the fork did not move while the original played on,
    # and replaying the rest of the log on it reaches the same end.
    if fork is not None:
        clone, view = fork
        assert json.dumps(clone.public_view(), sort_keys=True) == view
        for seat, action in state.history[len(clone.history):]:
            clone.apply(seat, action)
        assert clone.scores() == scores and clone.event_log(None) == state.event_log(None)
    if steps > 100:
        assert redealt_differs, "determinize never changed hidden cards"
    return state
