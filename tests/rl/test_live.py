"""The environments' tensors against the dict path (``Encoder.encode``).

Two paths write them: the compiled writers (twistarena.rl.native), which fill a
seat's tensor from scratch straight from the state, and, where those were not
built, ``LiveTensors`` (twistarena.rl.live), which reads the state and rewrites
only what changed. The dict path is the definition of a tensor. Both are held
to it here: random matches of every game, player count and
the options that change what is shown are played, and at every decision a random
subset of the seats, in random order (a seat may go several decisions without
asking; in every other match one seat asks only now and then, across tricks and
rounds), compares its live tensor with ``encode(state.observation(seat))``.
The differential hidden-card test is run once more with the live tensor as what
a seat receives.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from twistarena import engine
from twistarena.engine import State
from twistarena.rl import Encoder, aec_env, encoder, native
from twistarena.rl.live import LiveTensors, live_tensors, python_live_tensors
from twistarena.rl.native import SeatTensors, native_tensors

from tests.engine import test_leak_differential as leak
from tests.rl.cases import CASES
from tests.rl.test_spaces import check_no_leak

#: CASES, the default (longer) matches, and the options that change what a seat sees
LIVE_CASES: list[tuple[str, int, dict[str, Any], int]] = [
    *[(g, n, o, 12) for g, n, o in CASES],
    ("twisted", 2, {}, 4),
    ("twisted", 3, {"expert": True, "rounds": 2}, 6),
    ("twhist", 3, {"twhist_visible": False}, 8),
    ("twhist", 4, {"twhist_visible": False}, 8),
    ("tricky_twist", 3, {}, 3),
    ("tricky_twist", 4, {}, 2),
]

#: what the full Tricky Twist matches must pass through: the live tensors write a
#: player's tricks on top of the old within a round and rebuild them when a round
#: starts or an end-of-round bonus is used (which may flip a trick away)
TT_PHASES = {"reserve", "reserve_window", "play", "bonus_pick", "take_back", "end_bonus",
             "over"}


def _first_difference(live: np.ndarray[Any, Any], expected: np.ndarray[Any, Any],
                      game_id: str, players: int, options: dict[str, Any]) -> str:
    at = int(np.flatnonzero(live != expected)[0])
    enc = encoder(game_id, players, options)
    segment = next(s for s in enc.segments if s.start <= at < s.start + s.length)
    return f"{segment.name}[{at - segment.start}]: live {live[at]}, dict path {expected[at]}"


Maker = Callable[[Encoder, State], LiveTensors | SeatTensors]


def compiled_tensors(enc: Encoder, state: State) -> SeatTensors:
    """The compiled writer of the state's game (this build must have it)."""
    tensors = native_tensors(enc, state)
    assert tensors is not None, f"no compiled tensor writer for {state.game_id} in this build"
    return tensors


#: the two ways the environments get their tensors
PATHS: dict[str, Maker] = {"compiled": compiled_tensors, "python": python_live_tensors}


def test_this_build_has_the_compiled_writers_and_the_environments_use_them() -> None:
    """`make` builds the extension (a C compiler is part of the set-up), so a build
    without it would measure and test only the slower path."""
    assert native.available()
    for game_id in engine.GAME_IDS:
        players = engine.game(game_id).min_players
        state = engine.make(game_id, players, 1)
        assert not isinstance(live_tensors(encoder(game_id, players), state), LiveTensors)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("game_id", "players", "options", "matches"), LIVE_CASES,
                         ids=[f"{g}-{n}-{'-'.join(o) or 'default'}" for g, n, o, _ in LIVE_CASES])
def test_tensors_equal_the_dict_path_at_every_decision(
        game_id: str, players: int, options: dict[str, Any], matches: int, path: str) -> None:
    seen = _compare(game_id, players, options, matches, PATHS[path])
    if game_id == "tricky_twist" and not options:
        assert {phase for phase, _ in seen} == TT_PHASES
        assert len({round_ for _, round_ in seen}) > 1


@pytest.mark.parametrize("game_id", ["tricky_twist", "twhist"])
def test_the_generic_live_tensors_reuse_observation_parts_exactly(game_id: str) -> None:
    """The base class (for a game without its own): parts kept by their versions."""
    players, options = leak.SETUPS[game_id][0]
    _compare(game_id, players, options, 2, LiveTensors)


def _compare(game_id: str, players: int, options: dict[str, Any], matches: int,
             make: Maker) -> set[tuple[str, int]]:
    """Compare as the module docstring says; the (phase, round) pairs compared."""
    enc = encoder(game_id, players, options)
    compared = 0
    seen = set()
    for seed in range(matches):
        state = engine.make(game_id, players, seed, options)
        live = make(enc, state)
        rng = random.Random(seed)
        rare = seed % players if seed % 2 else -1  # a seat that asks seldom: long catch-ups
        while True:
            seats = [s for s in rng.sample(range(players), rng.randint(1, players))
                     if s != rare or rng.random() < 0.02]
            for seat in seats:
                observation = state.observation(seat)
                got, expected = live.tensor(seat), enc.encode(observation)
                seen.add((observation["phase"], observation.get("round", 0)))
                assert np.array_equal(got, expected), (
                    f"seed {seed}, decision {len(state.history)}, seat {seat}: "
                    + _first_difference(got, expected, game_id, players, options))
                compared += 1
            if state.is_terminal():
                break
            seat = rng.choice(state.to_act())
            state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    assert compared > matches * 20
    return seen


@pytest.mark.parametrize("path", PATHS)
def test_a_tensor_is_a_copy_the_caller_may_keep(path: str) -> None:
    state = engine.make("twisted", 2, 1, {"rounds": 1})
    enc = encoder("twisted", 2)
    live = PATHS[path](enc, state)
    kept = live.tensor(0)
    before = kept.copy()
    seat = state.to_act()[0]
    state.apply(seat, state.legal_action_ids(seat)[0])
    assert not np.array_equal(live.tensor(0), before)  # the state moved on ...
    assert np.array_equal(kept, before)  # ... and the tensor handed out did not


_LIVE: dict[int, tuple[State, LiveTensors | SeatTensors]] = {}


def _tensor_received(make: Maker) -> Callable[[State, int | None, int], Iterator[bytes]]:
    """What a seat's policy is given in the environments: its tensor, by ``make``."""
    def received(state: State, observer: int | None, first_event: int) -> Iterator[bytes]:
        if observer is None:
            return
        kept = _LIVE.get(id(state))
        if kept is None or kept[0] is not state:
            kept = _LIVE[id(state)] = (state, make(
                encoder(state.game_id, state.num_players, state.options), state))
        yield kept[1].tensor(observer).tobytes()
    return received


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_no_tensor_depends_on_a_hidden_card(game_id: str, path: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leak, "_received", _tensor_received(PATHS[path]))
    try:
        check_no_leak(game_id, 12)
    finally:
        _LIVE.clear()


def test_a_copied_or_pickled_environment_follows_its_own_match() -> None:
    """A copy's live tensors follow the copy's state (not the original's)."""
    env = aec_env("twhist", 3)
    env.reset(seed=3)
    for _ in range(7):
        obs = env.last()[0]
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    copies = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for _ in range(30):
        mine = env.last()[0]
        for other in copies:
            theirs = other.last()[0]
            assert all(np.array_equal(mine[k], theirs[k]) for k in mine)
        action = int(np.flatnonzero(mine["action_mask"])[-1])
        for e in (env, *copies):
            e.step(action)
    copies[0].step(int(np.flatnonzero(copies[0].last()[0]["action_mask"])[0]))
    seat = copies[0].agent_selection
    state = copies[0].turns.state
    assert np.array_equal(copies[0].observe(seat)["observation"],
                          copies[0].encoder.encode(state.observation(copies[0]._seat[seat])))
