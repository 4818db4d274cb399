"""``State.clone`` copies every field of every game: each game lists its own
(``_copy_plain_into``, ``_copy_mutable_into``), so one it forgets would be missing
(compiled) or shared with the original."""

from __future__ import annotations

import random

import pytest
from twistarena import engine


def _fields(state: engine.State) -> set[str]:
    """Every field of ``state``: its ``__dict__`` interpreted, the compiled classes'
    attribute lists compiled (``__mypyc_attrs__``), and both over a Python subclass."""
    names: set[str] = set(getattr(state, "__dict__", {}))
    for cls in type(state).__mro__:
        names.update(getattr(cls, "__mypyc_attrs__", ()))
    return names - {"__dict__", "__weakref__"}


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_a_clone_carries_every_field_and_its_own_random_stream(game_id: str) -> None:
    """``clone`` copies field by field: a field a game adds and forgets to copy would be
    missing (compiled) or shared; the generator is shared until one of them draws."""
    n = engine.game(game_id).min_players
    state = engine.make(game_id, n, 11, {})
    picker = random.Random(2)
    for _ in range(12):
        seat = state.to_act()[0]
        state.apply(seat, picker.choice(state.legal_action_ids(seat)))
    twin = state.clone()
    fields = _fields(state)
    assert {"hands", "history", "_rng"} <= fields
    for name in fields - {"_rng", "_rng_shared"}:
        assert getattr(twin, name) == getattr(state, name), name
    ahead = [state.rng.random() for _ in range(3)]  # the original draws first
    assert [twin.rng.random() for _ in range(3)] == ahead
    assert twin.rng is not state.rng
