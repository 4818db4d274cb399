"""Mutation testing of the engine: do the engine's tests catch a planted bug?

mutmut 3 names a mutated function by its file's path (``engine/twistarena/engine/
core.py`` would be ``engine.twistarena.engine.core``) while the tests import it as
``twistarena.engine.core``, and it runs the tests from a copy of the tree. So this
script lays out a copy in which the path is the import name: ``build/mutation/``
holds the ``twistarena`` package (engine, bots, league, wire, v1), the engine's
tests and the rule documents their worked examples read, and a ``pyproject.toml``
for mutmut and pytest. mutmut runs there (one process, ``nice`` to the machine's
other users) and keeps its results in ``build/mutation/mutants/``, so a second run
re-tests only what changed.

    python tests/mutation.py run [MODULE ...]   mutate these modules (default: all)
    python tests/mutation.py rerun [MODULE ...]  only what survived or was not run, again
    python tests/mutation.py summary [MODULE ...]  killed / survived / timed out per module

MODULE is a dotted name under the engine (``core``, ``twhist.state``). ``make
mutation`` runs both over every module. The last recorded result is docs/mutation.md,
with the equivalent mutants (changes that cannot alter behaviour), which are not
counted as survivors.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / "build" / "mutation"
MUTMUT = Path(sys.executable).with_name("mutmut")
PACKAGE = "twistarena.engine"
#: Where each part of the staged ``twistarena`` package comes from.
PARTS = {"engine": "engine", "bots": "engine", "league": "engine", "wire": "proto", "v1": "proto"}
#: Tests the mutation run leaves out. The random-playout contract checks take most of
#: the suite's time and mutmut runs every test that reaches a function for each mutant
#: of it that survives; what only they would kill counts as survived (the score is a
#: lower bound). test_purity reads the real source tree, which the copy has not got.
LEFT_OUT = (
    "tests/engine/test_purity.py",
    "tests/engine/test_conformance.py::test_random_playouts_keep_the_contract",
    "tests/engine/test_leak_differential.py",
    "tests/engine/tricky_twist/test_game.py::test_generic_contract_over_many_seeds",
    "tests/engine/twisted/test_conformance_twisted.py",
)
#: Test files not even collected: test_compiled checks the compiled build beside the
#: source tree (the copy has neither) with a helper the copy does not carry.
NOT_COLLECTED = ("tests/engine/test_compiled.py",)
#: The modules the goal covers: at least 90% of their non-equivalent mutants killed.
GOAL = ("core", "dealing", "tricky_twist.scoring", "tricky_twist.state", "twisted.state",
        "twhist.state")
#: mutmut's exit-code statuses, gathered into the three the summary counts.
STATUS = {"killed": "killed", "survived": "survived", "timeout": "timed out",
          "no tests": "no tests", "segfault": "killed", "suspicious": "timed out"}
#: Equivalent mutants listed in docs/mutation.md: `- `name`: why` lines.
EQUIVALENT = re.compile(r"^- `(twistarena\.engine\.[\w.]+__mutmut_\d+)`", re.MULTILINE)


def stage() -> None:
    """Refresh build/mutation/ from the working tree (mutmut's results are kept)."""
    for name, root in PARTS.items():
        src = ROOT / root / "twistarena" / name
        staged = STAGE / "twistarena" / name
        shutil.copytree(src, staged, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        # no compiled modules (nor any left from an earlier stage): Python would
        # import a compiled engine module before its mutated .py, and no mutant would run
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            for extension in staged.rglob(f"*{suffix}"):
                extension.unlink()
    tests = STAGE / "tests"
    before = _fingerprint(tests)
    shutil.rmtree(tests, ignore_errors=True)
    shutil.copytree(ROOT / "tests" / "engine", tests / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("__init__.py", "conftest.py", "server/__init__.py", "server/hidden.py"):
        (tests / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "tests" / name, tests / name)
    if _fingerprint(tests) != before:
        # mutmut re-profiles only new tests: a changed one could reach functions it
        # did not reach before, so which tests reach what is measured again.
        (STAGE / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    shutil.copytree(ROOT / "docs" / "rules", STAGE / "docs" / "rules", dirs_exist_ok=True)
    args = ["-q", "-p", "no:cacheprovider", *(f"--deselect={t}" for t in LEFT_OUT),
            *(f"--ignore={t}" for t in NOT_COLLECTED)]
    (STAGE / "pyproject.toml").write_text(
        "# Written by tests/mutation.py: the copy mutmut mutates and tests.\n"
        "[tool.mutmut]\n"
        'source_paths = ["twistarena/engine"]\n'
        'also_copy = ["twistarena/bots", "twistarena/league", "twistarena/wire",'
        ' "twistarena/v1", "docs"]\n'
        'pytest_add_cli_args_test_selection = ["tests/engine"]\n'
        f"pytest_add_cli_args = {json.dumps(args)}\n"
        "use_git_change_detection = false\n\n"
        "[tool.pytest.ini_options]\n"
        "pythonpath = []\n"
    )


def _fingerprint(tests: Path) -> dict[str, bytes]:
    return {str(p.relative_to(tests)): p.read_bytes() for p in sorted(tests.rglob("*.py"))}


def run(modules: list[str], survivors_only: bool = False) -> int:
    """mutmut over ``modules`` (all of the engine when empty), one process, niced;
    ``survivors_only``: just the mutants that survived (or no test reached, or were
    not run) last time, less the known equivalent ones: the check after adding tests."""
    patterns = [f"{PACKAGE}.{m}.*" for m in modules]
    if survivors_only:
        same = equivalent()
        patterns = [name for name, state in results().items()
                    if state in ("survived", "no tests", "not run") and name not in same
                    and (not modules or module_of(name) in modules)]
        if not patterns:
            return 0
    stage()
    command = ["nice", "-n", "19", str(MUTMUT), "run", "--max-children", "1", *patterns]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(command, cwd=STAGE, env=env, check=False).returncode


def results() -> dict[str, str]:
    """Mutant name -> status, from mutmut's result files."""
    out: dict[str, str] = {}
    codes = _exit_codes()
    for meta in sorted((STAGE / "mutants").rglob("*.py.meta")):
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            out[name] = "not run" if code is None else codes.get(code, f"exit {code}")
    return out


def _exit_codes() -> dict[int, str]:
    from mutmut.stats import status_by_exit_code  # installed for the mutation run only

    return {code: STATUS.get(status, status) for code, status in status_by_exit_code.items()}


def equivalent() -> set[str]:
    """Mutants docs/mutation.md lists as equivalent (they cannot change behaviour)."""
    doc = ROOT / "docs" / "mutation.md"
    return set(EQUIVALENT.findall(doc.read_text())) if doc.exists() else set()


def module_of(mutant: str) -> str:
    """``twistarena.engine.twhist.state.x_f__mutmut_3`` -> ``twhist.state``."""
    dotted = mutant.split("__mutmut_")[0].rsplit(".", 1)[0]
    return dotted.removeprefix(PACKAGE + ".")


def summary(modules: list[str]) -> int:
    """Print killed / survived / timed out per module and the survivors; 1 when a
    module of ``GOAL`` kills less than 90%. A timeout counts as killed (the mutant
    changed what the tests saw, by never finishing), a mutant no test reaches as
    survived."""
    status = results()
    same = equivalent()
    counts: dict[str, Counter[str]] = {}
    survivors: list[str] = []
    for name, state in status.items():
        module = module_of(name)
        if modules and module not in modules:
            continue
        if state == "survived" and name in same:
            state = "equivalent"
        counts.setdefault(module, Counter())[state] += 1
        if state in ("survived", "no tests"):
            survivors.append(f"{name}: {state}")
    columns = ("killed", "survived", "timed out", "equivalent", "no tests", "not run")
    print(f"{'module':<24}" + "".join(f"{c:>11}" for c in columns) + f"{'score':>8}")
    short = []
    for module in sorted(counts):
        c = counts[module]
        judged = c["killed"] + c["survived"] + c["timed out"] + c["no tests"]
        score = 100 * (c["killed"] + c["timed out"]) / judged if judged else None
        if module in GOAL and score is not None and score < 90:
            short.append(module)
        shown = "-" if score is None else f"{score:.1f}%"
        print(f"{module:<24}" + "".join(f"{c[k]:>11}" for k in columns) + f"{shown:>8}")
    if survivors:
        print("\nsurviving mutants (`mutmut show NAME` in build/mutation shows one):")
        print("\n".join(f"  {s}" for s in sorted(survivors)))
    if short:
        print(f"\nbelow the goal of 90% killed: {', '.join(short)}")
    return 1 if short else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("run", "rerun", "summary"))
    parser.add_argument("modules", nargs="*", help="e.g. core, twhist.state (default: all)")
    args = parser.parse_args(argv)
    if args.command != "summary":
        return run(args.modules, survivors_only=args.command == "rerun")
    return summary(args.modules)


if __name__ == "__main__":
    sys.exit(main())
