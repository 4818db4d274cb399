"""Protobuf wire encoding by hand: varints, field keys and length-delimited fields.

A protobuf message is the concatenation of its encoded fields, so the hot
messages (``frames``) are joined from parts encoded once, and these are the
parts' building blocks.
"""

from __future__ import annotations

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

#: Wire types of the fields written by hand.
VARINT, LEN = 0, 2
#: Field types written length-delimited.
_DELIMITED = frozenset({FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_STRING,
                        FieldDescriptor.TYPE_BYTES})


def varint(value: int) -> bytes:
    """A protobuf varint; negative numbers as 64-bit two's complement (int32/int64)."""
    if value < 0:
        value &= 0xFFFF_FFFF_FFFF_FFFF
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes((i,)) for i in range(0x80)]


def field_key(number: int, wire_type: int) -> bytes:
    """The key of field ``number`` with ``wire_type`` (``VARINT``, ``LEN``)."""
    return varint(number << 3 | wire_type)


def length_delimited(key: bytes, payload: bytes) -> bytes:
    """One length-delimited field (sub-message, string, bytes): key, length, payload."""
    return key + varint(len(payload)) + payload


def varint_field(key: bytes, value: int) -> bytes:
    """One varint field; empty for 0 (proto3 leaves default scalars out)."""
    return key + varint(value) if value else b""



def field_number(message: type[Message], name: str) -> int:
    """The contract's number of field ``name`` of ``message``."""
    number: int = message.DESCRIPTOR.fields_by_name[name].number
    return number


def field_keys(message: type[Message], *names: str) -> tuple[bytes, ...]:
    """The keys of fields ``names`` of ``message``, each with the wire type its kind
    takes: length-delimited for a message, a string, bytes or a packed repeated
    scalar, varint for a single integer or bool."""
    by_name = message.DESCRIPTOR.fields_by_name
    return tuple(field_key(by_name[name].number,
                           LEN if by_name[name].type in _DELIMITED or by_name[name].is_repeated
                           else VARINT)
                 for name in names)


def string_field(key: bytes, text: str) -> bytes:
    """One string field; empty for "" (proto3 leaves it out)."""
    return length_delimited(key, text.encode()) if text else b""
