"""The contract: per-game messages mirror the engine dicts exactly, the generated
code matches the .proto files, and every field is documented."""

from __future__ import annotations

import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from twistarena import engine, wire
from twistarena.v1 import observations_pb2 as opb

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "proto" / "twistarena" / "v1"
CASES = [(g, n) for g in engine.GAME_IDS
         for n in range(engine.game(g).min_players, engine.game(g).max_players + 1)]


def _to_dict(msg: Any) -> dict[str, Any]:
    return json_format.MessageToDict(msg, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


#: The schema's own parser (slow, pure Python) checks every this many steps; the
#: round trip through the server's fast path checks every step.
PARSE_EVERY = 8


def _json(data: Any) -> str:
    """Strict text of a dict: ``1`` and ``true`` differ, as they do on the wire."""
    return json.dumps(data, sort_keys=True)


@pytest.mark.parametrize(("game_id", "n"), CASES)
def test_messages_mirror_engine_dicts(game_id: str, n: int) -> None:
    obs_cls = wire.OBSERVATION_CLASSES[game_id]
    pub_cls = wire.PUBLIC_VIEW_CLASSES[game_id]
    checked = 0
    for seed in range(3):
        rng = random.Random(seed * 7 + n)
        state = engine.make(game_id, n, seed)
        for step in range(5000):
            views = [(obs_cls, state.observation(s)) for s in range(n)]
            views.append((pub_cls, state.public_view()))
            for cls, data in views:
                # The server's fast path builds a message that says exactly the dict.
                msg = wire.game_message(cls, data)
                assert _json(_to_dict(msg)) == _json(data)
                if step % PARSE_EVERY == 0 or state.is_terminal():
                    # ... and the same message as the schema's parser.
                    assert json_format.ParseDict(data, cls()) == msg
                checked += 1
            if state.is_terminal():
                break
            seat = rng.choice(state.to_act())
            state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
        assert state.is_terminal()
    assert checked > 10


def test_oneof_fields_are_named_after_game_ids() -> None:
    assert set(wire.OBSERVATION_CLASSES) == set(engine.GAME_IDS)
    assert set(wire.PUBLIC_VIEW_CLASSES) == set(engine.GAME_IDS)
    obs = wire.observation("twisted", engine.make("twisted", 2, 1).observation(0))
    assert obs.WhichOneof("game") == "twisted"
    assert isinstance(obs, opb.Observation)


def test_generated_code_matches_proto_files() -> None:
    gen = load_script("proto/generate.py")
    with tempfile.TemporaryDirectory() as tmp:
        files = gen.generate(Path(tmp))
        assert files, "nothing generated"
        committed = gen.generated_files(ROOT / "proto")
        assert sorted(map(str, files)) == sorted(map(str, committed)), \
            "generated file set differs: run .venv/bin/python proto/generate.py"
        for rel in files:
            fresh = (Path(tmp) / rel).read_bytes()
            current = (ROOT / "proto" / rel).read_bytes()
            assert fresh == current, f"{rel} is stale: run .venv/bin/python proto/generate.py"


def test_every_field_and_message_is_documented() -> None:
    """The .proto comments are the protocol documentation."""
    undocumented: list[str] = []
    field_re = re.compile(r"^\s*(repeated\s+|optional\s+)?[\w.]+\s+\w+\s*=\s*\d+;")
    for path in sorted(PROTO_DIR.glob("*.proto")):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            stripped = line.strip()
            is_decl = stripped.startswith(("message ", "service ", "enum ", "rpc "))
            if not (is_decl or field_re.match(line)) or "//" in line:
                continue
            # A comment directly above, or a group comment above a run of fields.
            j = i - 1
            while j >= 0 and field_re.match(lines[j]) and "//" not in lines[j]:
                j -= 1
            above = lines[j].strip() if j >= 0 else ""
            if not above.startswith("//"):
                undocumented.append(f"{path.name}:{i + 1}: {stripped}")
    assert not undocumented, "undocumented:\n" + "\n".join(undocumented)


def test_metadata_keys_are_spelled_once_and_documented() -> None:
    """Servers and clients read the contract's metadata keys from ``twistarena.wire``:
    no other module of ours spells one, and the docs name each as it is spelled."""
    from twistarena.wire import metadata

    spelled = {value for name, value in vars(metadata).items() if name.endswith("_KEY")}
    assert spelled >= {"twistarena-reason", "twistarena-owner", "twistarena-retry-after-ms",
                       "twistarena-runner-session"}
    documented = (ROOT / "docs" / "protocol.md").read_text() + \
        (PROTO_DIR / "runners.proto").read_text()
    assert all(key in documented for key in spelled if key.startswith("twistarena-"))
    home = Path(metadata.__file__).resolve()
    again = []
    for top in ("engine", "proto", "server", "clients"):
        for path in (ROOT / top / "twistarena").rglob("*.py"):
            if path.resolve() == home or path.name.endswith("_pb2.py"):
                continue
            source = path.read_text()
            again += [(path.name, key) for key in spelled
                      if f'"{key}"' in source or f"'{key}'" in source]
    assert not again
