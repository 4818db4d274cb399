"""The fixed action space and the observation tensors of every game (twistarena.rl).

The differential test is the wire's (tests/engine/test_leak_differential.py)
with the tensor as the thing a seat receives: a match is played twice, as
dealt and with one hidden card of a seat swapped for another card hidden from
the observers, and every other seat's tensor must be equal in both worlds for
as long as the rules keep both cards hidden from it.
"""

from __future__ import annotations

import pathlib
import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from twistarena import engine
from twistarena.engine import State
from twistarena.rl import action_space, encoder, num_distinct_actions

from tests.engine import test_leak_differential as leak
from tests.rl.cases import CASES, IDS

#: the space sizes docs/rl.md states
SIZES = {"tricky_twist": 370, "twisted": 152, "twhist": 69}


def _playout(game_id: str, players: int, seed: int, options: dict[str, Any]) -> Iterator[State]:
    state = engine.make(game_id, players, seed, options)
    rng = random.Random(seed)
    yield state
    while not state.is_terminal():
        seat = rng.choice(state.to_act())
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
        yield state


@pytest.mark.parametrize(("game_id", "players", "options"), CASES, ids=IDS)
def test_every_legal_id_has_one_index_and_the_tensor_a_fixed_shape(
        game_id: str, players: int, options: dict[str, Any]) -> None:
    space = action_space(game_id)
    assert num_distinct_actions(game_id) == space.size == SIZES[game_id]
    enc = encoder(game_id, players, options)
    low, high = enc.bounds()
    seen: set[int] = set()
    for seed in range(3):
        for state in _playout(game_id, players, seed, options):
            for seat in state.to_act():
                legal = list(state.legal_action_ids(seat))
                mask = space.mask(legal)
                assert mask.dtype == np.int8 and mask.shape == (space.size,)
                indices = space.indices(legal)
                assert sorted(np.flatnonzero(mask).tolist()) == sorted(indices)
                assert [space.engine_id(i) for i in indices] == legal
                seen.update(legal)
            seat = seed % players
            tensor = enc.encode(state.observation(seat))
            assert tensor.dtype == np.float32 and tensor.shape == (enc.size,)
            assert np.all(tensor >= low) and np.all(tensor <= high)
    assert len(seen) > 20  # the playouts exercised the mapping, not a few ids
    with pytest.raises(ValueError, match="outside"):
        space.engine_id(space.size)


def _tensor_received(state: State, observer: int | None, first_event: int) -> Iterator[bytes]:
    """What a seat's policy is given: its tensor (spectators get none)."""
    if observer is not None:
        enc = encoder(state.game_id, state.num_players, state.options)
        yield enc.encode(state.observation(observer)).tobytes()


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_no_tensor_depends_on_a_hidden_card(game_id: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leak, "_received", _tensor_received)
    check_no_leak(game_id, 30)


def check_no_leak(game_id: str, matches: int) -> None:
    """The differential test over ``matches`` matches with ``leak._received`` as set."""
    setups = leak.SETUPS[game_id]
    compared = [leak._differential(game_id, setups[seed % len(setups)][0], seed,
                                   setups[seed % len(setups)][1]) for seed in range(matches)]
    assert sum(1 for c in compared if c) >= matches * 0.9
    assert sum(compared) >= matches * 10


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_a_seats_own_hand_changes_its_tensor(game_id: str) -> None:
    """The control of the test above: the same swap seen by the card's holder shows."""
    players, options = leak.SETUPS[game_id][0]
    a = engine.make(game_id, players, 5, options)
    b = engine.make(game_id, players, 5, options)
    st: Any = a
    x, y = st.hands[0][0], st.hands[1][0]
    leak._swap(b, x, y)
    enc = encoder(game_id, players, options)
    assert not np.array_equal(enc.encode(a.observation(0)), enc.encode(b.observation(0)))


def test_docs_state_the_sizes_the_code_has() -> None:
    doc = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "rl.md").read_text()
    names = {"tricky_twist": "Tricky Twist", "twisted": "Twisted", "twhist": "Twhist"}
    for game_id, name in names.items():
        info = engine.game(game_id)
        sizes = ", ".join(f"{n}: {encoder(game_id, n).size}"
                          for n in range(info.min_players, info.max_players + 1))
        assert f"| {name} | {sizes}" in doc
        assert f"| {name} | {num_distinct_actions(game_id)} |" in doc
