"""Run the rules from their Python source although the build compiled them.

An install with a C compiler puts the engine's hot modules, compiled by mypyc,
beside their .py files, and Python imports the extension first. ``pytest
--engine=interpreted`` (tests/conftest.py) puts this finder first on
``sys.meta_path`` before anything imports the engine: each compiled module is then
loaded from its .py instead, so the same tests judge the source that mutation
testing mutates and the compiled build that serves.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PACKAGE = "twistarena.engine"


class SourceFirst(importlib.abc.MetaPathFinder):
    """Finds ``names`` as .py source files on the package's path, never as extensions."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names or path is None:
            return None
        leaf = fullname.rpartition(".")[2]
        for entry in path:
            source = Path(entry) / f"{leaf}.py"
            if source.is_file():
                return importlib.util.spec_from_file_location(fullname, source)
        return None


def engine_dir() -> Path:
    """The engine package's folder, found without importing it (``find_spec`` of a
    submodule imports only its parent, here the ``twistarena`` namespace)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{PACKAGE} not found")
    return Path(next(iter(spec.submodule_search_locations)))


def source_and_extension() -> list[tuple[Path, Path]]:
    """Each module of the engine built as an extension beside its .py file."""
    pairs = []
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        for extension in engine_dir().rglob(f"*{suffix}"):
            source = extension.with_name(extension.name[:-len(suffix)] + ".py")
            if source.is_file():
                pairs.append((source, extension))
    return pairs


def compiled_beside_source() -> frozenset[str]:
    """Those modules, dotted and relative to the package (``core``, ``twhist.state``)."""
    root = engine_dir()
    return frozenset(".".join(source.relative_to(root).with_suffix("").parts)
                     for source, _ in source_and_extension())


def use_source() -> None:
    """From now on, import the engine's compiled modules from their source. Must run
    before the engine is imported (a module already loaded stays what it is)."""
    names = frozenset(f"{PACKAGE}.{name}" for name in compiled_beside_source())
    loaded = sorted(names & set(sys.modules))
    if loaded:
        raise RuntimeError(f"already imported, compiled or not: {', '.join(loaded)}")
    if not any(isinstance(finder, SourceFirst) for finder in sys.meta_path):
        sys.meta_path.insert(0, SourceFirst(names))
