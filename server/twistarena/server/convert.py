"""Engine values (JSON-ready dicts) to protobuf messages.

Per-game observation and public-view messages mirror the engine dicts field
for field (see observations.proto), so a dict converts by handing it to the
message constructor: nested dicts and lists become sub-messages. That is
strict (an unknown key raises) and much faster than ``json_format.ParseDict``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.message import Message
from twistarena.engine import Action, GameInfo
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import observations_pb2 as opb
from twistarena.v1 import play_pb2 as ppb


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


def observation(game_id: str, data: Mapping[str, Any]) -> opb.Observation:
    msg: Any = game_message(OBSERVATION_CLASSES[game_id], data)
    return opb.Observation(**{game_id: msg})


def public_view(game_id: str, data: Mapping[str, Any]) -> opb.PublicView:
    msg: Any = game_message(PUBLIC_VIEW_CLASSES[game_id], data)
    return opb.PublicView(**{game_id: msg})


def event(seq: int, view: Mapping[str, Any], info: GameInfo) -> mpb.Event:
    text = info.narrate(view) or ""
    return mpb.Event(seq=seq, kind=str(view.get("kind", "")), data=struct(view), text=text)


class ActionCache:
    """LegalAction messages by (id, label), reused while their payload is unchanged."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, str], tuple[Mapping[str, Any], ppb.LegalAction]] = {}

    def get(self, action: Action) -> ppb.LegalAction:
        key = (action.id, action.label)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == action.payload:
            return hit[1]
        msg = ppb.LegalAction(id=action.id, label=action.label, payload=struct(action.payload))
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = (action.payload, msg)
        return msg


def options_dict(value: Any) -> Any:
    """A Struct-decoded value with integral floats made ints (Struct numbers are doubles)."""
    if isinstance(value, dict):
        return {k: options_dict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [options_dict(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
