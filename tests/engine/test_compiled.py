"""The build compiles the engine's hot modules, and ``--engine`` picks what runs.

`make` builds them (a C compiler is part of the set-up, as for the tensor writers
and the wire encoder); ``pytest --engine=interpreted`` runs the same tests on the
.py source, which is what mutation testing mutates.
"""

from __future__ import annotations

import importlib

import pytest
from twistarena import engine

from tests.support.engine_source import compiled_beside_source, source_and_extension


def test_this_build_has_the_compiled_engine_and_it_is_not_older_than_the_source() -> None:
    """An editable install does not rebuild when a .py changes (`make` does): a
    compiled module older than its source would run rules that are no longer there."""
    assert compiled_beside_source() == set(engine.COMPILED_MODULES)
    stale = [f"{source.name} is newer than {extension.name}"
             for source, extension in source_and_extension() if
             source.stat().st_mtime > extension.stat().st_mtime]
    assert stale == [], "rebuild with `make` (or pip install -e .)"


def test_the_engine_runs_as_the_option_asks(request: pytest.FixtureRequest) -> None:
    interpreted = request.config.getoption("--engine") == "interpreted"
    assert engine.compiled() is not interpreted
    for name in engine.COMPILED_MODULES:
        module = importlib.import_module(f"twistarena.engine.{name}")
        assert module.__file__ is not None
        assert module.__file__.endswith(".py") is interpreted, module.__file__


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
    import random

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
