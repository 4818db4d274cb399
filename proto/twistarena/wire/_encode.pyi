"""Types of the compiled message encoder (csrc/encode.c); ``wire.message_encoder`` uses it."""

from collections.abc import Callable, Hashable, Mapping, Sequence
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
    def encode_parts(self, slots: dict[Hashable, tuple[Hashable, bytes]],
                     parts: Sequence[tuple[Hashable, Hashable, Callable[[], Mapping[str, Any]]]],
                     number: int, /) -> bytes:
        """Field ``number`` holding the parts' messages, each encoded again only when
        its version differs from the one kept in ``slots`` (None: every time)."""
    def encode_slots(self, slots: dict[Hashable, tuple[Hashable, bytes]],
                     parts: Sequence[tuple[Hashable, Hashable]],
                     build: Callable[[int, Hashable], Mapping[str, Any]], seat: int,
                     number: int, /) -> bytes:
        """``encode_parts`` of ``(slot, version)`` pairs, a part built by
        ``build(seat, slot)`` only when it is not kept."""

def struct_bytes(data: Mapping[str, Any], /) -> bytes: ...

class DecisionFrames:
    """A DecisionRequest's fields around its observation, and its ServerMessage, in one
    buffer; ``numbers``: the field numbers (decision_id, seat, observation, deadline,
    time_left_ms, accepted, events, ServerMessage.decision, Timestamp seconds, nanos)."""

    def __init__(self, numbers: tuple[int, ...]) -> None: ...
    def body(self, match_id_field: bytes, decision_id: int, seat: int, observation: bytes,
             legal_actions: Sequence[bytes], deadline_ns: int, /) -> bytes: ...
    def message(self, body: bytes, time_left_ms: int, accepted: bytes,
                events: Sequence[bytes], /) -> bytes: ...

def event_message(numbers: tuple[int, ...], seq: int, kind: str, data: Mapping[str, Any],
                  text: str, /) -> bytes: ...
