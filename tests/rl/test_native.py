"""The compiled writers (twistarena.rl.native) under bad input, and the masks.

Their tensors are held to the dict path in test_live.py. Here: they are C code
reading Python objects and writing into memory, so a wrong layout, a wrong seat
or a state of the wrong shape must raise a Python error and never write outside
the tensor; and the compiled action mask equals the Python one.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from twistarena import engine
from twistarena.rl import aec_env, encoder, native
from twistarena.rl.actions import action_space
from twistarena.rl.live import LiveTensors
from twistarena.rl.native import _native, native_tensors

from tests.rl.test_live import compiled_tensors


def _twisted_layout() -> tuple[Any, tuple[int, ...], tuple[object, ...], int]:
    """What ``native`` gives the Twisted writer for 3 players: fields getter,
    layout, tables, size."""
    enc = encoder("twisted", 3)
    state = engine.make("twisted", 3, 1)
    compiled_tensors(enc, state)  # this build has the writers
    fields, layout, tables = native.writer_arguments(enc, state)
    return fields, layout, tables, enc.size


def test_a_layout_beyond_the_tensor_raises_instead_of_writing_past_it() -> None:
    fields, layout, tables, size = _twisted_layout()
    state = engine.make("twisted", 3, 1)
    for bad in (size, size + 10_000, -10_000):
        wrong = (bad, *layout[1:])  # the hand's zone out of the tensor
        tensors = _native.SeatTensors("twisted", state, fields, size, wrong, tables)
        with pytest.raises(IndexError, match="out of"):
            tensors.tensor(0)
    small = _native.SeatTensors("twisted", state, fields, 10, layout, tables)  # too short
    with pytest.raises(IndexError):
        small.tensor(0)


def test_a_seat_outside_the_match_or_an_unknown_game_is_refused() -> None:
    tensors = native_tensors(encoder("twisted", 3), engine.make("twisted", 3, 1))
    assert tensors is not None
    for seat in (-1, 3, 99):
        with pytest.raises(ValueError, match="no seat"):
            tensors.tensor(seat)
    with pytest.raises(TypeError):
        tensors.tensor("0")  # type: ignore[arg-type]
    fields, layout, tables, size = _twisted_layout()
    with pytest.raises(ValueError, match="no compiled encoder"):
        _native.SeatTensors("chess", engine.make("twisted", 3, 1), fields, size, layout, tables)
    with pytest.raises(TypeError, match="callable"):
        _native.SeatTensors("twisted", engine.make("twisted", 3, 1), None, size, layout, tables)


def test_a_state_or_fields_of_the_wrong_shape_raise() -> None:
    """A Twhist state given to the Twisted writer, fields of the wrong count or
    kind: a Python error, not a crash."""
    fields, layout, tables, size = _twisted_layout()
    twhist = engine.make("twhist", 3, 1)
    tensors = _native.SeatTensors("twisted", twhist, fields, size, layout, tables)
    with pytest.raises(AttributeError):
        tensors.tensor(0)
    twisted = engine.make("twisted", 3, 1)
    for getter, error in ((lambda st: fields(st)[:-1], "reads 11 fields"),
                          (lambda st: list(fields(st)), "must return a tuple"),
                          (lambda st: (7, *fields(st)[1:]), "expected a list or tuple")):
        bad = _native.SeatTensors("twisted", twisted, getter, size, layout, tables)
        with pytest.raises(TypeError, match=error):
            bad.tensor(0)


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_the_compiled_mask_equals_the_python_mask(game_id: str) -> None:
    space = action_space(game_id)
    rng = random.Random(game_id)
    players = engine.game(game_id).min_players
    state = engine.make(game_id, players, 3)
    legal = [list(state.legal_action_ids(s)) for s in state.to_act()]
    for ids in [*legal, [], list(space.ids), *(rng.sample(space.ids, 7) for _ in range(50))]:
        compiled = space.mask(ids)
        assert compiled.dtype == np.int8 and compiled.shape == (space.size,)
        assert np.array_equal(compiled, space.python_mask(ids))
    for bad in (-1, max(space.ids) + 1, 10**6):
        for mask in (space.mask, space.python_mask):
            with pytest.raises(IndexError):
                mask([space.ids[0], bad])


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_without_the_extension_the_environment_observes_the_same(game_id: str) -> None:
    """Where the extension was not built, or is turned off, the Python paths serve:
    the same observations, step by step, as an environment with the compiled
    writers."""
    players = engine.game(game_id).max_players
    compiled = aec_env(game_id, players)
    compiled.reset(seed=11)
    assert native.use_compiled(False) is True
    try:
        assert not native.in_use() and native.compiled_mask is None
        python = aec_env(game_id, players)
        python.reset(seed=11)
    finally:
        native.use_compiled(True)
    assert native.in_use()
    assert isinstance(python.live, LiveTensors) and not isinstance(compiled.live, LiveTensors)
    rng = random.Random(game_id)
    steps = 0
    for agent in compiled.agent_iter():
        assert agent == python.agent_selection
        mine, theirs = compiled.last()[0], python.last()[0]
        assert mine is not None and theirs is not None
        assert np.array_equal(mine["observation"], theirs["observation"])
        assert np.array_equal(mine["action_mask"], theirs["action_mask"])
        assert mine["action_mask"].dtype == theirs["action_mask"].dtype == np.int8
        action = None if compiled.terminations[agent] else int(
            rng.choice(np.flatnonzero(mine["action_mask"])))
        compiled.step(action)
        python.step(action)
        steps += 1
    assert steps > 30 and not python.agents
