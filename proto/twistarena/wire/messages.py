"""Engine values (JSON-ready dicts) to contract messages, and the contract's constants.

Per-game observation and public-view messages mirror the engine dicts field
for field (see observations.proto), so a dict converts by handing it to the
message constructor: nested dicts and lists become sub-messages. That is
strict (an unknown key raises) and much faster than ``json_format.ParseDict``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from google.protobuf import struct_pb2
from google.protobuf.message import Message
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import observations_pb2 as opb
from twistarena.v1 import tournaments_pb2 as tpb

#: Statuses of a match that has ended (its result is final).
MATCH_OVER = frozenset({mpb.MATCH_STATUS_FINISHED, mpb.MATCH_STATUS_CANCELLED})
#: Statuses of a tournament that has ended.
TOURNAMENT_OVER = frozenset({tpb.TOURNAMENT_FINISHED, tpb.TOURNAMENT_CANCELLED})


class LegalActionLike(Protocol):
    """What a legal action offers (``twistarena.engine.Action`` is one)."""

    @property
    def id(self) -> int: ...

    @property
    def label(self) -> str: ...

    @property
    def payload(self) -> Mapping[str, Any]: ...


class Narrator(Protocol):
    """What tells an event as text (``twistarena.engine.GameInfo`` is one)."""

    def narrate(self, view: Mapping[str, Any]) -> str | None: ...


def _oneof_classes(container: type[Message]) -> dict[str, type[Message]]:
    oneof = container.DESCRIPTOR.oneofs_by_name["game"]
    out: dict[str, type[Message]] = {}
    for fd in oneof.fields:
        cls: type[Message] = getattr(fd.message_type, "_concrete_class")  # noqa: B009
        out[fd.name] = cls
    return out


#: game id -> per-game message class (the oneof field is named after the game id).
OBSERVATION_CLASSES = _oneof_classes(opb.Observation)
PUBLIC_VIEW_CLASSES = _oneof_classes(opb.PublicView)

def struct(data: Mapping[str, Any]) -> struct_pb2.Struct:
    """A Struct holding ``data`` (free-form payloads: events, actions, options)."""
    out = struct_pb2.Struct()
    out.update(data)
    return out


def game_message(cls: type[Message], data: Mapping[str, Any]) -> Message:
    """A per-game message from the engine dict (constructor, with a ParseDict fallback)."""
    try:
        return cls(**data)
    except (TypeError, ValueError):
        from google.protobuf import json_format

        return json_format.ParseDict(dict(data), cls())


#: game id -> field number of its member in the Observation oneof.
OBSERVATION_FIELDS = {fd.name: fd.number
                      for fd in opb.Observation.DESCRIPTOR.oneofs_by_name["game"].fields}


def observation(game_id: str, data: Mapping[str, Any]) -> opb.Observation:
    msg: Any = game_message(OBSERVATION_CLASSES[game_id], data)
    return opb.Observation(**{game_id: msg})


def public_view(game_id: str, data: Mapping[str, Any]) -> opb.PublicView:
    msg: Any = game_message(PUBLIC_VIEW_CLASSES[game_id], data)
    return opb.PublicView(**{game_id: msg})


def event(seq: int, view: Mapping[str, Any], info: Narrator) -> mpb.Event:
    text = info.narrate(view) or ""
    return mpb.Event(seq=seq, kind=str(view.get("kind", "")), data=struct(view), text=text)


def passthrough_serializer(message: Message | bytes) -> bytes:
    """Response serializer of the streaming handlers: bytes as they are, messages serialized."""
    if type(message) is bytes:
        return message
    assert isinstance(message, Message)
    return message.SerializeToString()


def options_dict(value: Any) -> Any:
    """A Struct-decoded value with integral floats made ints (Struct numbers are doubles)."""
    if isinstance(value, dict):
        return {k: options_dict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [options_dict(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
