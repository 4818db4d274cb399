"""Write docs/protocol-reference.md, the contract's field reference, from the .proto files.

The comments in ``proto/twistarena/v1/*.proto`` are the documentation of every
service, message, field and enum value; this renders them as Markdown (one
``#### `Name``` section each, with a table), so the reference cannot disagree
with the contract. The hand-written guide, docs/protocol.md, keeps the flow,
the rules of the protocol and the examples. After changing a .proto file run::

    make reference        (or: .venv/bin/python proto/reference.py)

``tests/node/test_protocol_doc.py`` fails when the committed file is stale.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from google.protobuf import descriptor_pb2 as dpb

PROTO_ROOT = Path(__file__).resolve().parent
OUTPUT = PROTO_ROOT.parent / "docs" / "protocol-reference.md"
#: The order of the files in the reference: the lifecycle first, then play.
FILE_ORDER = ("match.proto", "play.proto", "observations.proto", "matchmaking.proto",
              "tournaments.proto", "hosting.proto", "runners.proto", "arenas.proto")

# Field numbers inside descriptor.proto, for SourceCodeInfo paths.
_FILE_MESSAGE, _FILE_ENUM, _FILE_SERVICE, _FILE_SYNTAX = 4, 5, 6, 12
_MESSAGE_FIELD, _MESSAGE_NESTED, _MESSAGE_ENUM, _MESSAGE_ONEOF = 2, 3, 4, 8
_ENUM_VALUE, _SERVICE_METHOD = 2, 2

_SCALARS = {
    dpb.FieldDescriptorProto.TYPE_DOUBLE: "double", dpb.FieldDescriptorProto.TYPE_FLOAT: "float",
    dpb.FieldDescriptorProto.TYPE_INT64: "int64", dpb.FieldDescriptorProto.TYPE_UINT64: "uint64",
    dpb.FieldDescriptorProto.TYPE_INT32: "int32", dpb.FieldDescriptorProto.TYPE_UINT32: "uint32",
    dpb.FieldDescriptorProto.TYPE_BOOL: "bool", dpb.FieldDescriptorProto.TYPE_STRING: "string",
    dpb.FieldDescriptorProto.TYPE_BYTES: "bytes", dpb.FieldDescriptorProto.TYPE_SINT32: "sint32",
    dpb.FieldDescriptorProto.TYPE_SINT64: "sint64",
    dpb.FieldDescriptorProto.TYPE_FIXED32: "fixed32",
    dpb.FieldDescriptorProto.TYPE_FIXED64: "fixed64",
}


def descriptors() -> list[dpb.FileDescriptorProto]:
    """The contract's files as parsed by protoc, comments included, in ``FILE_ORDER``."""
    import grpc_tools
    from grpc_tools import protoc

    well_known = Path(grpc_tools.__file__).resolve().parent / "_proto"
    files = [f"twistarena/v1/{name}" for name in FILE_ORDER]
    found = sorted(p.name for p in (PROTO_ROOT / "twistarena" / "v1").glob("*.proto"))
    if sorted(FILE_ORDER) != found:
        raise RuntimeError(f"FILE_ORDER {FILE_ORDER} does not list the .proto files {found}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "contract.pb"
        code = protoc.main(["grpc_tools.protoc", f"--proto_path={PROTO_ROOT}",
                            f"--proto_path={well_known}", "--include_source_info",
                            f"--descriptor_set_out={out}", *files])
        if code != 0:
            raise RuntimeError(f"protoc failed with exit code {code}")
        parsed = dpb.FileDescriptorSet.FromString(out.read_bytes())
    return list(parsed.file)


class Comments:
    """The comments of one file, by SourceCodeInfo path."""

    def __init__(self, file: dpb.FileDescriptorProto) -> None:
        self._by_path = {tuple(loc.path): loc for loc in file.source_code_info.location}

    def text(self, path: Sequence[int]) -> str:
        """Leading and trailing comment of the element at ``path``, as one paragraph
        per blank-line-separated block."""
        loc = self._by_path.get(tuple(path))
        if loc is None:
            return ""
        parts = [loc.leading_comments, loc.trailing_comments]
        return "\n\n".join(_paragraphs(p) for p in parts if p.strip())

    def file_intro(self) -> str:
        loc = self._by_path.get((_FILE_SYNTAX,))
        if loc is None:
            return ""
        blocks = [*loc.leading_detached_comments, loc.leading_comments]
        return "\n\n".join(_paragraphs(b) for b in blocks if b.strip())


def _paragraphs(comment: str) -> str:
    """Comment lines joined into paragraphs (a blank comment line separates them)."""
    out: list[list[str]] = [[]]
    for line in comment.strip("\n").splitlines():
        line = line.strip()
        if line:
            out[-1].append(line)
        elif out[-1]:
            out.append([])
    return "\n\n".join(" ".join(p) for p in out if p)


def _cell(text: str) -> str:
    return text.replace("\n\n", " ").replace("|", "\\|")


def _type(field: dpb.FieldDescriptorProto, maps: dict[str, dpb.DescriptorProto]) -> str:
    if field.type_name:
        entry = maps.get(field.type_name)
        if entry is not None:
            key, value = entry.field[0], entry.field[1]
            return f"map<{_type(key, maps)}, {_type(value, maps)}>"
        name = field.type_name.rsplit(".", 1)[-1]
        qualified = field.type_name.lstrip(".")
        shown = qualified if qualified.startswith("google.") else name
        kind = "repeated " if field.label == field.LABEL_REPEATED else ""
        return f"{kind}`{shown}`"
    scalar = _SCALARS[field.type]
    if field.label == field.LABEL_REPEATED:
        return f"repeated {scalar}"
    if field.proto3_optional:
        return f"optional {scalar}"
    return scalar


def _map_entries(file: dpb.FileDescriptorProto) -> dict[str, dpb.DescriptorProto]:
    out: dict[str, dpb.DescriptorProto] = {}

    def walk(msg: dpb.DescriptorProto, prefix: str) -> None:
        name = f"{prefix}.{msg.name}"
        for nested in msg.nested_type:
            if nested.options.map_entry:
                out[f"{name}.{nested.name}"] = nested
            else:
                walk(nested, name)

    for msg in file.message_type:
        walk(msg, f".{file.package}")
    return out


def _message(msg: dpb.DescriptorProto, path: list[int], notes: Comments,
             maps: dict[str, dpb.DescriptorProto]) -> Iterator[str]:
    yield f"#### `{msg.name}`"
    yield ""
    intro = notes.text(path)
    if intro:
        yield intro
        yield ""
    oneofs = [(i, o) for i, o in enumerate(msg.oneof_decl) if not o.name.startswith("_")]
    for i, oneof in oneofs:
        members = [f"`{f.name}`" for f in msg.field
                   if f.HasField("oneof_index") and f.oneof_index == i]
        note = notes.text([*path, _MESSAGE_ONEOF, i])
        line = f"Oneof `{oneof.name}`: at most one of {', '.join(members)}."
        yield f"{line} {note}" if note else line
        yield ""
    if msg.field:
        yield "| # | field | type | meaning |"
        yield "|---|---|---|---|"
        for i, field in enumerate(msg.field):
            meaning = _cell(notes.text([*path, _MESSAGE_FIELD, i]))
            yield f"| {field.number} | `{field.name}` | {_type(field, maps)} | {meaning} |"
    else:
        yield "No fields."
    yield ""
    for i, enum in enumerate(msg.enum_type):
        yield from _enum(enum, [*path, _MESSAGE_ENUM, i], notes)
    for i, nested in enumerate(msg.nested_type):
        if not nested.options.map_entry:
            yield from _message(nested, [*path, _MESSAGE_NESTED, i], notes, maps)


def _enum(enum: dpb.EnumDescriptorProto, path: list[int], notes: Comments) -> Iterator[str]:
    yield f"#### `{enum.name}`"
    yield ""
    intro = notes.text(path)
    if intro:
        yield intro
        yield ""
    yield "| # | value | meaning |"
    yield "|---|---|---|"
    for i, value in enumerate(enum.value):
        meaning = _cell(notes.text([*path, _ENUM_VALUE, i]))
        yield f"| {value.number} | `{value.name}` | {meaning} |"
    yield ""


def _service(service: dpb.ServiceDescriptorProto, path: list[int],
             notes: Comments) -> Iterator[str]:
    yield f"#### `{service.name}`"
    yield ""
    intro = notes.text(path)
    if intro:
        yield intro
        yield ""
    yield "| RPC | request | response | meaning |"
    yield "|---|---|---|---|"
    for i, method in enumerate(service.method):
        request = ("stream of " if method.client_streaming else "") + \
            f"`{method.input_type.rsplit('.', 1)[-1]}`"
        response = ("stream of " if method.server_streaming else "") + \
            f"`{method.output_type.rsplit('.', 1)[-1]}`"
        meaning = _cell(notes.text([*path, _SERVICE_METHOD, i]))
        yield f"| `{method.name}` | {request} | {response} | {meaning} |"
    yield ""


def _file(file: dpb.FileDescriptorProto) -> Iterator[str]:
    notes = Comments(file)
    name = Path(file.name).name
    yield f"## {name}"
    yield ""
    yield f"Source: [`proto/{file.name}`](../proto/{file.name})."
    yield ""
    intro = notes.file_intro()
    if intro:
        yield intro
        yield ""
    maps = _map_entries(file)
    # Services, messages and enums in the order the file declares them.
    items: list[tuple[int, Iterator[str]]] = []
    by_path = {tuple(loc.path): loc for loc in file.source_code_info.location}

    def line_of(path: tuple[int, ...]) -> int:
        loc = by_path.get(path)
        return loc.span[0] if loc is not None else 0

    for i, service in enumerate(file.service):
        items.append((line_of((_FILE_SERVICE, i)),
                      _service(service, [_FILE_SERVICE, i], notes)))
    for i, msg in enumerate(file.message_type):
        items.append((line_of((_FILE_MESSAGE, i)),
                      _message(msg, [_FILE_MESSAGE, i], notes, maps)))
    for i, enum in enumerate(file.enum_type):
        items.append((line_of((_FILE_ENUM, i)), _enum(enum, [_FILE_ENUM, i], notes)))
    for _line, lines in sorted(items, key=lambda item: item[0]):
        yield from lines


def render(files: Sequence[dpb.FileDescriptorProto]) -> str:
    """The whole reference as Markdown."""
    lines = [
        "# The twistarena contract, field by field",
        "",
        "<!-- Generated by proto/reference.py from proto/twistarena/v1/*.proto:",
        "     edit the .proto comments, then run `make reference`. -->",
        "",
        "Every service, message, field and enum value of `twistarena.v1`, with the",
        "comments of its `.proto` file. How to use them (the flow of a match, the",
        "rules of the Play stream, examples) is in the guide, [protocol.md](protocol.md).",
        "",
    ]
    for file in files:
        lines.extend(_file(file))
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUTPUT,
                        help="where to write (default docs/protocol-reference.md)")
    args = parser.parse_args(argv)
    args.out.write_text(render(descriptors()), encoding="utf-8")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
