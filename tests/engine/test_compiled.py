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
