"""The build compiles the engine's hot modules, and ``--engine`` picks what runs.

`make` builds them (a C compiler is part of the set-up, as for the tensor writers
and the wire encoder); ``pytest --engine=interpreted`` runs the same tests on the
.py source, which is what mutation testing mutates.
"""

from __future__ import annotations

import importlib

import pytest
from twistarena import engine

from tests.support.engine_source import compiled_beside_source


def test_this_build_has_the_compiled_engine() -> None:
    assert compiled_beside_source() == set(engine.COMPILED_MODULES)


def test_the_engine_runs_as_the_option_asks(request: pytest.FixtureRequest) -> None:
    interpreted = request.config.getoption("--engine") == "interpreted"
    assert engine.compiled() is not interpreted
    for name in engine.COMPILED_MODULES:
        module = importlib.import_module(f"twistarena.engine.{name}")
        assert module.__file__ is not None
        assert module.__file__.endswith(".py") is interpreted, module.__file__
