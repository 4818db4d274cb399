"""Only twistarena.storage talks to Redis: no other module imports a Redis client,
reaches for one (``.redis``), or carries Lua (what storage may import is held by
tests/test_layers.py)."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
STORAGE = ROOT / "server" / "twistarena" / "storage"
#: The service's code. (The clients' soak tool reads the store's memory figures
#: from outside, as an operator's probe would; it is not part of the service.)
SOURCES = ("engine", "proto", "server")
DRIVERS = {"redis", "hiredis"}
#: Text that only a Lua script or a raw script call would contain.
LUA_MARKERS = ("redis.call(", "redis.pcall(", "EVALSHA", "SCRIPT LOAD")


def _modules_outside_storage() -> list[pathlib.Path]:
    files = []
    for top in SOURCES:
        for path in sorted((ROOT / top / "twistarena").rglob("*.py")):
            if STORAGE not in path.parents and "_pb2" not in path.name:
                files.append(path)
    return files


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def test_no_module_outside_storage_touches_a_redis_client_or_lua() -> None:
    files = _modules_outside_storage()
    assert len(files) > 40
    offenders = []
    for path in files:
        where = path.relative_to(ROOT)
        tree = ast.parse(path.read_text(), str(path))
        for line, name in _imports(tree):
            if name.split(".")[0] in DRIVERS:
                offenders.append(f"{where}:{line} imports {name}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "redis":
                offenders.append(f"{where}:{node.lineno} uses .redis")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(
                    marker in node.value for marker in LUA_MARKERS):
                offenders.append(f"{where}:{node.lineno} carries a script")
    assert offenders == []


def test_every_lua_script_is_a_file_the_store_registers() -> None:
    from twistarena.storage.scripts import Scripts

    registered = {s.name for s in Scripts().all()}
    on_disk = {p.stem for p in (STORAGE / "lua").glob("*.lua")}
    assert registered == on_disk


def test_a_scripts_shared_fragments_are_in_the_text_the_store_sends() -> None:
    """A script's ``--#include`` lines are replaced by their fragment before its SHA1
    is taken: the server runs (and EVALSHA names) the whole text, fence included."""
    import hashlib

    from twistarena.storage.scripts import INCLUDE, Scripts

    scripts = Scripts()
    for script in scripts.all():
        assert not any(line.startswith(INCLUDE) for line in script.source.splitlines())
        assert script.sha == hashlib.sha1(script.source.encode()).hexdigest()
    for fenced in (scripts.fenced_hset, scripts.finish):
        assert "local function lease_held(" in fenced.source
