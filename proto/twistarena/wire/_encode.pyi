"""Types of the compiled message encoder (csrc/encode.c); ``wire.message_encoder`` uses it."""

from collections.abc import Mapping
from typing import Any

INT32: int
BOOL: int
STRING: int
MESSAGE: int
REPEATED_INT32: int
REPEATED_STRING: int
REPEATED_MESSAGE: int

class Schema:
    """One message type's fields: (name, number, kind, child Schema or None) by number."""

    def __init__(self, fields: tuple[tuple[str, int, int, Schema | None], ...]) -> None: ...
    def encode(self, data: Mapping[str, Any], /) -> bytes: ...

def struct_bytes(data: Mapping[str, Any], /) -> bytes: ...
