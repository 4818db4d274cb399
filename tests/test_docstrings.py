"""Every public function, method and class of the server and the storage layer
says in a docstring what it is for, so that a newcomer can read a module from
its names and docstrings alone (docs/architecture.md points into them).

Exempt: names starting with ``_`` and functions nested in functions. A gRPC
handler says in one line what it does; its contract is in the ``.proto``
comments and the generated protocol reference.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: the node and the storage
PACKAGES = (ROOT / "server" / "twistarena" / "server",
            ROOT / "server" / "twistarena" / "storage")


def _undocumented(path: pathlib.Path, root: pathlib.Path = ROOT) -> list[str]:
    """``file:line name`` of each public definition in ``path`` without a docstring."""
    where = path.relative_to(root)
    missing: list[str] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                name = node.name
                if name.startswith("_"):
                    continue
                if ast.get_docstring(node) is None:
                    missing.append(f"{where}:{node.lineno} {prefix}{name}")
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                if ast.get_docstring(node) is None:
                    missing.append(f"{where}:{node.lineno} class {node.name}")
                visit(node.body, f"{node.name}.")

    visit(ast.parse(path.read_text(), str(path)).body, "")
    return missing


def _modules() -> list[pathlib.Path]:
    return sorted(p for package in PACKAGES for p in package.rglob("*.py")
                  if not p.name.endswith(("_pb2.py", "_pb2_grpc.py")))


def test_the_check_sees_the_modules() -> None:
    names = {p.name for p in _modules()}
    assert {"referee.py", "matchmaking.py", "tournaments.py", "keys.py"} <= names


def test_the_check_finds_a_missing_docstring(tmp_path: pathlib.Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('class A:\n    """Doc."""\n\n    def f(self):\n        return 1\n\n'
                      '    def _g(self):\n        return 2\n\n    def Get(self):\n'
                      '        return 3\n\n\ndef h():\n    def inner():\n        pass\n')
    found = _undocumented(sample, tmp_path)
    assert [m.split(" ", 1)[1] for m in found] == ["A.f", "A.Get", "h"]


def test_public_functions_of_the_server_and_storage_have_docstrings() -> None:
    missing = [m for path in _modules() for m in _undocumented(path)]
    assert missing == [], "public functions without a docstring:\n" + "\n".join(missing)
