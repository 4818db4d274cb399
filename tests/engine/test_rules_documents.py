"""docs/rules/ keeps the rules in the repository honest:

- every rule id cited anywhere in the code, the contract, the docs and the tests
  (``TT-5.4``, ``TW-3.2``, ``TH-4.6``) is defined in docs/rules/;
- every worked example there (a fenced ```example block of JSON) is played
  through the engine here, and its expectations hold;
- nothing refers to a rules file outside the repository.

An example names a position (per game, below), then steps: each step's
``play`` is a payload (a subset of it is enough) that must match one of the
acting seat's legal actions; ``legal`` / ``not_legal`` list payloads that
must / must not match one; ``expect`` checks the state after the step.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from twistarena import engine

from tests.engine.tricky_twist import helpers as tt
from tests.engine.twhist import helpers as th
from tests.engine.twisted import helpers as tw

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "rules"
DOCUMENTS = {"tricky_twist": "tricky_twist.md", "twisted": "twisted.md", "twhist": "twhist.md"}
CITED = re.compile(r"\b(TT|TW|TH)-(\d+)(?:\.(\d+))?")
#: A rule is defined where a line starts with its id in bold: "- **TT-4.1** ..." or a heading.
DEFINED = re.compile(r"^(?:#+ |- \*\*)((?:TT|TW|TH)-\d+(?:\.\d+)?)\b", re.MULTILINE)
EXAMPLE = re.compile(r"^```example\n(.*?)^```", re.MULTILINE | re.DOTALL)
SEARCHED = ("engine", "server", "clients", "proto", "tests", "docs", "README.md", "deploy")
SUFFIXES = {".py", ".proto", ".md", ".js", ".java", ".c", ".yaml", ".yml", ".txt"}


def _files() -> Iterator[Path]:
    for name in SEARCHED:
        top = ROOT / name
        paths = [top] if top.is_file() else top.rglob("*")
        for path in paths:
            if path.suffix in SUFFIXES and path.is_file() and "node_modules" not in path.parts:
                yield path


def _defined() -> set[str]:
    return {m.group(1) for path in RULES.glob("*.md")
            for m in DEFINED.finditer(path.read_text())}


def test_the_three_rule_documents_exist() -> None:
    assert sorted(p.name for p in RULES.glob("*.md")) == sorted(DOCUMENTS.values())


def test_every_cited_rule_id_is_defined_in_docs_rules() -> None:
    defined = _defined()
    assert {"TT-5.4", "TW-3.2", "TH-4.6"} <= defined
    missing = sorted({f"{path.relative_to(ROOT)}: {m.group(0)}" for path in _files()
                      for m in CITED.finditer(path.read_text(errors="replace"))
                      if m.group(0) not in defined})
    assert not missing, "rule ids cited but not defined in docs/rules/:\n" + "\n".join(missing)


def test_nothing_refers_to_a_rules_file_outside_the_repository() -> None:
    outside = sorted(str(path.relative_to(ROOT)) for path in _files()
                     if "RULES.md" in path.read_text(errors="replace")
                     and path != Path(__file__))
    assert not outside


# -- the worked examples ------------------------------------------------------------------


def _examples() -> list[Any]:
    out = []
    for game, name in DOCUMENTS.items():
        path = RULES / name
        text = path.read_text() if path.exists() else ""
        for n, match in enumerate(EXAMPLE.finditer(text), 1):
            line = text[:match.start()].count("\n") + 1
            out.append(pytest.param(game, match.group(1), id=f"{name}:{line}:{n}"))
    return out


def _matches(payload: Any, wanted: Any) -> bool:
    """``wanted`` is ``payload`` or a part of it (dicts compared key by key)."""
    if isinstance(wanted, Mapping):
        return isinstance(payload, Mapping) and all(
            k in payload and _matches(payload[k], v) for k, v in wanted.items())
    return bool(payload == wanted)


def _position(game: str, spec: Mapping[str, Any]) -> engine.State:
    if game == "twisted":
        table = tw.table(spec["hands"], spec.get("row", ()), spec.get("pile"),
                         spec.get("turn", 0), spec.get("options"))
        for pile in ("plus", "minus"):
            for seat, cards in spec.get(pile, {}).items():
                getattr(table, pile)[int(seat)] = list(cards)
                table.pile = [c for c in table.pile if c not in cards]
        return table
    if game == "twhist":
        return th.position(len(spec["hands"]), dict(enumerate(spec["hands"])),
                           spec.get("leader", 0),
                           spec.get("options"),
                           {int(k): v for k, v in spec.get("stars_up", {}).items()})
    state = tt.new(spec["players"], spec.get("seed", 1), spec.get("options"))
    seats = {int(k): v for k, v in spec.get("tricks", {}).items()}
    false = {int(k): tt.cs(*v) for k, v in spec.get("false", {}).items()}
    if spec.get("end"):
        return tt.end_position(state, spec["scoring_card"],
                               tricks={s: [tt.cs(*t) for t in ts] for s, ts in seats.items()},
                               false=false, first_player=spec.get("first_player", 0))
    return tt.play_position(state, [tt.cs(*h) for h in spec["hands"]], spec.get("leader", 0),
                            false=false, scoring_card=spec.get("scoring_card"))


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def _check(state: engine.State, expect: Mapping[str, Any], where: str) -> None:
    for key, wanted in expect.items():
        if key == "scores":
            got: Any = state.scores()
        elif key == "places":
            got = state.places()
        elif key == "to_act":
            got = list(state.to_act())
        elif key == "events":
            log = state.event_log(None)
            for event in wanted:
                assert any(_matches(e, event) for e in log), f"{where}: no event like {event}"
            continue
        elif key in ("observation", "public"):
            view = state.public_view() if key == "public" else state.observation(
                wanted["seat"])
            for path, value in wanted.items():
                if path != "seat":
                    assert _get(view, path) == value, f"{where}: {key} {path}"
            continue
        else:
            raise AssertionError(f"{where}: unknown expectation {key!r}")
        assert got == wanted, f"{where}: {key} is {got}, the example says {wanted}"


@pytest.mark.parametrize(("game", "body"), _examples())
def test_worked_example(game: str, body: str) -> None:
    example = json.loads(body)
    assert example.get("rules"), "an example names the rules it shows"
    assert all(r in _defined() for r in example["rules"])
    spec = example["position"]
    state = engine.make(game, spec["players"], spec.get("seed", 1), spec.get("options")) if (
        spec.get("new")) else _position(game, spec)
    for i, step in enumerate(example.get("steps", []), 1):
        where = f"step {i}"
        seat = step.get("seat", state.to_act()[0])
        assert seat in state.to_act(), f"{where}: seat {seat} is not to act"
        legal = state.legal_actions(seat)
        for wanted in step.get("legal", []):
            assert any(_matches(a.payload, wanted) for a in legal), f"{where}: {wanted} illegal"
        for wanted in step.get("not_legal", []):
            assert not any(_matches(a.payload, wanted) for a in legal), f"{where}: {wanted}"
        if "play" in step:
            chosen = [a for a in legal if _matches(a.payload, step["play"])]
            assert chosen, f"{where}: {step['play']} is not legal; legal: {legal}"
            state.apply(seat, chosen[0].id)
        _check(state, step.get("expect", {}), where)
    _check(state, example.get("expect", {}), "the end")
