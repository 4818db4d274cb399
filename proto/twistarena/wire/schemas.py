"""The compiled message encoder (``_encode``, csrc/encode.c) and the schemas it writes by.

Built at install where a C compiler is present; without it, or for data a
schema refuses (an unknown key, a wrong type), the protobuf library encodes,
so both give the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from google.protobuf.message import Message

from .messages import game_message

__all__ = ["Encode", "compiled", "compiled_struct", "message_encoder", "native", "schema"]

try:
    from . import _encode as native
except ImportError:  # not built (no C compiler at install): the protobuf library serves
    native = None  # type: ignore[assignment]


def compiled() -> bool:
    """Whether the compiled message encoder was built with this package."""
    return native is not None


#: what a compiled schema gives for a dict: the serialized message
Encode = Callable[[Mapping[str, Any]], bytes]
_SCHEMAS: dict[str, Any] = {}


def _field_kind(fd: Any) -> tuple[int, Any] | None:
    """A field's kind for the compiled encoder and its nested schema, or None if
    the encoder does not write it: another type, a repeated bool, unpacked int32,
    or a proto3 ``optional`` scalar (whose zero is sent when set)."""
    from google.protobuf.descriptor import FieldDescriptor as FD

    assert native is not None
    if fd.type == FD.TYPE_MESSAGE:
        child = schema(fd.message_type)
        if child is None:
            return None
        return (native.REPEATED_MESSAGE if fd.is_repeated else native.MESSAGE), child
    if fd.has_presence and not fd.is_repeated:
        return None
    if fd.type == FD.TYPE_INT32 and (fd.is_packed or not fd.is_repeated):
        return (native.REPEATED_INT32 if fd.is_repeated else native.INT32), None
    if fd.type == FD.TYPE_STRING:
        return (native.REPEATED_STRING if fd.is_repeated else native.STRING), None
    if fd.type == FD.TYPE_BOOL and not fd.is_repeated:
        return native.BOOL, None
    return None


def schema(descriptor: Any) -> Any:
    """The compiled schema of one message type (``native.Schema``), or None when a
    field is of a kind it does not write (then the library serves that type)."""
    name = descriptor.full_name
    if name not in _SCHEMAS:
        assert native is not None
        fields = []
        for fd in sorted(descriptor.fields, key=lambda f: f.number):
            kind = _field_kind(fd)
            if kind is None:
                _SCHEMAS[name] = None
                return None
            fields.append((fd.name, fd.number, *kind))
        _SCHEMAS[name] = native.Schema(tuple(fields))
    return _SCHEMAS[name]


def message_encoder(cls: type[Message]) -> Encode:
    """``game_message(cls, data).SerializeToString()`` for dicts ``data``: written by
    the compiled schema where it was built and knows every field of ``cls``, which
    falls back to the library for data it refuses (an unknown key, a wrong type)."""
    def by_library(data: Mapping[str, Any]) -> bytes:
        return game_message(cls, data).SerializeToString()

    found = schema(cls.DESCRIPTOR) if native is not None else None
    if found is None:
        return by_library
    compiled: Encode = found.encode

    def encode(data: Mapping[str, Any]) -> bytes:
        try:
            return compiled(data)
        except (TypeError, ValueError):
            return by_library(data)
    return encode


def compiled_struct(data: Mapping[str, Any]) -> bytes | None:
    """``struct(data)`` serialized by the compiled encoder (its entries in the dict's
    order; a map's order is not part of the wire format); None where it was not
    built or refuses the data (the library serves then)."""
    if native is None:
        return None
    try:
        return native.struct_bytes(data)
    except (TypeError, ValueError, OverflowError):
        return None

