"""The protocol documents document the whole twistarena.v1 contract.

docs/protocol-reference.md, generated from the .proto comments, is what
proto/reference.py makes of the committed .proto files; in it every message,
enum and service of proto/twistarena/v1/*.proto has its own section (a
heading "#### `Name`"), and that section names every field (and oneof),
every enum value or every RPC. The guide, docs/protocol.md, documents the
action payload kinds and event kinds the engine produces.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FileDescriptor, ServiceDescriptor
from twistarena import engine
from twistarena.v1 import (
    arenas_pb2,
    hosting_pb2,
    match_pb2,
    matchmaking_pb2,
    observations_pb2,
    play_pb2,
    runners_pb2,
    tournaments_pb2,
)

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
REFERENCE = ROOT / "docs" / "protocol-reference.md"
FILES: list[FileDescriptor] = [match_pb2.DESCRIPTOR, play_pb2.DESCRIPTOR,
                               observations_pb2.DESCRIPTOR, matchmaking_pb2.DESCRIPTOR,
                               tournaments_pb2.DESCRIPTOR, hosting_pb2.DESCRIPTOR,
                               runners_pb2.DESCRIPTOR, arenas_pb2.DESCRIPTOR]
HEADING = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)
NAMED = re.compile(r"^`(\w+)`$")


def sections() -> dict[str, str]:
    """'#### `Name`' heading of the reference -> the text up to the next heading."""
    text = REFERENCE.read_text(encoding="utf-8")
    heads = list(HEADING.finditer(text))
    out: dict[str, str] = {}
    for i, head in enumerate(heads):
        named = NAMED.match(head.group(2).strip())
        if not named:
            continue
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        assert named.group(1) not in out, f"two sections for {named.group(1)}"
        out[named.group(1)] = text[head.end():end]
    return out


def messages() -> list[Descriptor]:
    out: list[Descriptor] = []

    def walk(desc: Descriptor) -> None:
        out.append(desc)
        for nested in desc.nested_types:
            walk(nested)

    for f in FILES:
        for desc in f.message_types_by_name.values():
            walk(desc)
    return out


def enums() -> list[EnumDescriptor]:
    out = [e for f in FILES for e in f.enum_types_by_name.values()]
    out += [e for m in messages() for e in m.enum_types]
    return out


def services() -> list[ServiceDescriptor]:
    return [s for f in FILES for s in f.services_by_name.values()]


def _names(section: str) -> set[str]:
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", section))


def test_the_reference_is_generated_from_the_proto_files() -> None:
    reference = load_script("proto/reference.py")
    fresh = reference.render(reference.descriptors())
    assert REFERENCE.read_text(encoding="utf-8") == fresh, \
        "docs/protocol-reference.md is stale: run make reference"


def test_the_guide_leaves_the_field_tables_to_the_reference() -> None:
    """One place per fact: the guide has no "#### `Message`" sections of its own."""
    guide = DOC.read_text(encoding="utf-8")
    known = {d.name for d in messages()} | {e.name for e in enums()}
    repeated = sorted(name for name in known if f"#### `{name}`" in guide)
    assert not repeated, f"docs/protocol.md restates reference sections: {repeated}"


def test_the_contract_is_not_empty() -> None:
    assert len(messages()) > 40 and len(enums()) == 7 and len(services()) == 8


@pytest.mark.parametrize("desc", messages(), ids=lambda d: d.name)
def test_every_message_and_field_is_documented(desc: Descriptor) -> None:
    found = sections()
    assert desc.name in found, f"docs/protocol.md has no section '#### `{desc.name}`'"
    named = _names(found[desc.name])
    missing = [f.name for f in desc.fields if f.name not in named]
    assert not missing, f"{desc.name}: fields not documented in its section: {missing}"
    oneofs = [o.name for o in desc.oneofs if not o.name.startswith("_")]
    missing = [o for o in oneofs if o not in named]
    assert not missing, f"{desc.name}: oneof not documented in its section: {missing}"


@pytest.mark.parametrize("desc", enums(), ids=lambda d: d.name)
def test_every_enum_value_is_documented(desc: EnumDescriptor) -> None:
    found = sections()
    assert desc.name in found, f"docs/protocol.md has no section '#### `{desc.name}`'"
    named = _names(found[desc.name])
    missing = [v.name for v in desc.values if v.name not in named]
    assert not missing, f"{desc.name}: values not documented in its section: {missing}"


@pytest.mark.parametrize("desc", services(), ids=lambda d: d.name)
def test_every_service_and_rpc_is_documented(desc: ServiceDescriptor) -> None:
    found = sections()
    assert desc.name in found, f"docs/protocol.md has no section '#### `{desc.name}`'"
    named = _names(found[desc.name])
    for method in desc.methods:
        assert method.name in named, f"{desc.name}.{method.name} is not documented"
        assert method.input_type.name in named, f"{desc.name}.{method.name}: input type"
        assert method.output_type.name in named, f"{desc.name}.{method.name}: output type"


def test_no_section_documents_a_name_the_contract_lacks() -> None:
    known = {d.name for d in messages()} | {e.name for e in enums()} | {
        s.name for s in services()}
    stale = sorted(set(sections()) - known)
    assert not stale, f"docs/protocol.md documents names that are not in the .proto files: {stale}"


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_payload_and_event_kinds_of_a_playout_are_documented(game_id: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    info = engine.game(game_id)
    state = engine.make(game_id, info.max_players, 3)
    rng = random.Random(3)
    payload_kinds: set[str] = set()
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        payload_kinds.update(str(a.payload["kind"]) for a in legal)
        state.apply(seat, rng.choice(legal).id)
    missing = sorted(k for k in payload_kinds if f'"kind": "{k}"' not in text)
    assert not missing, f"{game_id}: payload kinds not in section 12: {missing}"
    event_kinds = {ev.kind for ev in state.events}
    missing = sorted(k for k in event_kinds if f"`{k}`" not in text)
    assert not missing, f"{game_id}: event kinds not in section 10: {missing}"
