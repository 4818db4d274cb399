"""No message of the contract makes generated code collide in any language.

protoc's Java generator derives several accessors from each field: a repeated
``twhist`` gives ``getTwhistList()`` and ``getTwhistCount()``, so a singular
``twhist_count`` beside it gets renamed behind the author's back (Java code
calling ``getTwhistCount()`` silently gets the list's length). Go, C# and
JavaScript camel-case names the same way. The protoc that grpcio-tools ships has
only the Python generators, so this test applies the generators' naming rules
to every field of every message itself.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from twistarena.v1 import match_pb2, matchmaking_pb2, observations_pb2, play_pb2, tournaments_pb2

FILES = (match_pb2, matchmaking_pb2, observations_pb2, play_pb2, tournaments_pb2)


def _pascal(name: str) -> str:
    """protoc's camel-casing: underscores dropped, the next letter (and the first) upper."""
    out, upper = [], True
    for ch in name:
        if ch == "_":
            upper = True
            continue
        out.append(ch.upper() if upper else ch)
        upper = ch.isdigit()
    return "".join(out)


def _messages() -> Iterator[Descriptor]:
    def walk(message: Descriptor) -> Iterator[Descriptor]:
        yield message
        for nested in message.nested_types:
            if not nested.GetOptions().map_entry:
                yield from walk(nested)

    for module in FILES:
        for message in module.DESCRIPTOR.message_types_by_name.values():
            yield from walk(message)


def _generated(field: FieldDescriptor) -> set[str]:
    """The member names Java, Go, C# and JavaScript generate for ``field`` (without get/set)."""
    base = _pascal(field.name)
    names = {base}
    is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
    if is_map:
        names |= {base + "Map", base + "Count", base + "OrDefault", base + "OrThrow"}
    elif field.is_repeated:
        names |= {base + "List", base + "Count"}
        if field.message_type is not None:
            names |= {base + "OrBuilderList", base + "BuilderList", base + "Builder",
                      base + "OrBuilder"}
        if field.enum_type is not None:
            names |= {base + "ValueList", base + "Value"}
    else:
        if field.message_type is not None:
            names |= {base + "Builder", base + "OrBuilder"}
        if field.enum_type is not None:
            names.add(base + "Value")
    return names


def test_pascal_case_follows_protoc() -> None:
    assert _pascal("twhist_count") == "TwhistCount"
    assert _pascal("resume_from_seq") == "ResumeFromSeq"
    assert _pascal("v1_face") == "V1Face"


def _collisions(message: Descriptor) -> list[str]:
    owners: dict[str, set[str]] = defaultdict(set)
    for field in message.fields:
        for name in _generated(field):
            owners[name].add(field.name)
    for oneof in message.oneofs:
        if [f.name for f in oneof.fields] == [oneof.name[1:]]:
            continue  # the hidden oneof of a proto3 `optional` field generates nothing
        owners[_pascal(oneof.name) + "Case"].add(f"oneof {oneof.name}")
        owners[_pascal(oneof.name)].add(f"oneof {oneof.name}")
    # C#: a member may not be named like its enclosing message.
    owners[message.name].add(f"message {message.name}")
    return [f"{message.full_name}: {name} from {sorted(fields)}"
            for name, fields in owners.items() if len(fields) > 1]


def test_the_check_catches_the_old_twhist_fields() -> None:
    """The shape TwhistPlayer had: repeated ``twhist`` beside singular ``twhist_count``."""
    proto = descriptor_pb2.FileDescriptorProto(name="collide.proto", package="collide",
                                               syntax="proto3")
    player = proto.message_type.add(name="Player")
    player.field.add(name="twhist_count", number=3, type=FieldDescriptor.TYPE_INT32,
                     label=FieldDescriptor.LABEL_OPTIONAL)
    player.field.add(name="twhist", number=4, type=FieldDescriptor.TYPE_STRING,
                     label=FieldDescriptor.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    found = _collisions(pool.FindMessageTypeByName("collide.Player"))
    assert found == ["collide.Player: TwhistCount from ['twhist', 'twhist_count']"]


def test_no_generated_member_name_is_produced_by_two_fields() -> None:
    problems = [p for message in _messages() for p in _collisions(message)]
    assert not problems, "generated names collide:\n" + "\n".join(problems)
