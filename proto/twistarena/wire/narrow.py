"""Reading only the ids of a serialized ServerMessage: what a fast bot needs to answer.

A ServerMessage is parsed with message classes that know only a
DecisionRequest's id, its legal action ids and an acceptance's decision id;
every other field stays unknown bytes, so the observation, the labels and
the events are copied, never parsed.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor_pb2 import FieldDescriptorProto
from google.protobuf.message import Message
from twistarena.v1 import play_pb2 as ppb

from .fields import field_number

_DR, _SM = ppb.DecisionRequest, ppb.ServerMessage
_PACKAGE = "twistarena.wire.narrow"
_UINT64, _INT32 = FieldDescriptorProto.TYPE_UINT64, FieldDescriptorProto.TYPE_INT32
#: The narrow messages: message -> field -> (the contract's message that numbers it,
#: its scalar type, or the narrow message it holds: "*" for a repeated one).
_NARROW_MESSAGES: dict[str, dict[str, tuple[type[Message], int | str]]] = {
    "ActionId": {"id": (ppb.LegalAction, _INT32)},
    "AcceptedId": {"decision_id": (ppb.AnswerAccepted, _UINT64)},
    "DecisionIds": {"decision_id": (_DR, _UINT64), "legal_actions": (_DR, "*ActionId"),
                    "accepted": (_DR, "AcceptedId")},
    "BatchIds": {"accepted": (ppb.SeatBatch, "AcceptedId")},
    "ServerMessageIds": {"decision": (_SM, "DecisionIds"), "batch": (_SM, "BatchIds")},
}


def message_kind(message: bytes) -> int:
    """The field number of the one member a serialized ``ServerMessage`` holds (0: none)."""
    return message[0] >> 3 if message else 0


def _narrow_classes() -> type[Message]:
    """A ServerMessage that knows only a DecisionRequest's id and legal action ids,
    and the decision id of an acceptance a DecisionRequest or a SeatBatch carries.

    Built at import in a private descriptor pool (the contract's messages are
    untouched): parsing with it keeps every other field as unknown bytes, so
    the observation and the labels are copied, never parsed."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    file = descriptor_pb2.FileDescriptorProto(
        name="twistarena/wire/narrow.proto", package=_PACKAGE, syntax="proto3")
    field = FieldDescriptorProto
    for name, fields in _NARROW_MESSAGES.items():
        message = file.message_type.add(name=name)
        for field_name, (contract, kind) in fields.items():
            number = field_number(contract, field_name)
            if isinstance(kind, int):
                message.field.add(name=field_name, number=number, type=kind,
                                  label=field.LABEL_OPTIONAL)
            else:
                message.field.add(name=field_name, number=number, type=field.TYPE_MESSAGE,
                                  label=field.LABEL_REPEATED if kind.startswith("*")
                                  else field.LABEL_OPTIONAL,
                                  type_name=f".{_PACKAGE}.{kind.lstrip('*')}")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    cls: type[Message] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName(f"{_PACKAGE}.ServerMessageIds"))
    return cls


_SERVER_MESSAGE_IDS = _narrow_classes()
#: ``message_kind`` of a ServerMessage holding a DecisionRequest, a SeatBatch.
DECISION_KIND = field_number(_SM, "decision")
SEAT_BATCH_KIND = field_number(_SM, "batch")


def narrow_decision(message: bytes) -> Any:
    """The DecisionRequest of a serialized ``ServerMessage`` (see ``message_kind``)
    with only ``decision_id``, ``legal_actions[i].id`` and ``accepted.decision_id``
    parsed: a bot that needs no more than these does not pay for the
    observation, the labels and the events."""
    return _SERVER_MESSAGE_IDS.FromString(message).decision  # type: ignore[attr-defined]


def narrow_batch(message: bytes) -> Any:
    """The SeatBatch of a serialized ``ServerMessage`` with only
    ``accepted.decision_id`` parsed (see ``narrow_decision``)."""
    return _SERVER_MESSAGE_IDS.FromString(message).batch  # type: ignore[attr-defined]
