"""Reading only the ids of a serialized ServerMessage: what a fast bot needs to answer.

A ServerMessage is parsed with message classes that know only a
DecisionRequest's id, its legal action ids and an acceptance's decision id;
every other field stays unknown bytes, so the observation, the labels and
the events are copied, never parsed.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from twistarena.v1 import play_pb2 as ppb

from .fields import field_number

_DR, _SM = ppb.DecisionRequest, ppb.ServerMessage


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
        name="twistarena/wire/narrow.proto", package="twistarena.wire.narrow", syntax="proto3")
    field = descriptor_pb2.FieldDescriptorProto
    action = file.message_type.add(name="ActionId")
    action.field.add(name="id", number=field_number(ppb.LegalAction, "id"),
                     type=field.TYPE_INT32, label=field.LABEL_OPTIONAL)
    accepted = file.message_type.add(name="AcceptedId")
    accepted.field.add(name="decision_id", number=field_number(ppb.AnswerAccepted, "decision_id"),
                       type=field.TYPE_UINT64, label=field.LABEL_OPTIONAL)
    decision = file.message_type.add(name="DecisionIds")
    decision.field.add(name="decision_id", number=field_number(_DR, "decision_id"),
                       type=field.TYPE_UINT64, label=field.LABEL_OPTIONAL)
    decision.field.add(name="legal_actions", number=field_number(_DR, "legal_actions"),
                       type=field.TYPE_MESSAGE, label=field.LABEL_REPEATED,
                       type_name=".twistarena.wire.narrow.ActionId")
    decision.field.add(name="accepted", number=field_number(_DR, "accepted"),
                       type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                       type_name=".twistarena.wire.narrow.AcceptedId")
    batch = file.message_type.add(name="BatchIds")
    batch.field.add(name="accepted", number=field_number(ppb.SeatBatch, "accepted"),
                    type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                    type_name=".twistarena.wire.narrow.AcceptedId")
    server = file.message_type.add(name="ServerMessageIds")
    server.field.add(name="decision", number=field_number(_SM, "decision"),
                     type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                     type_name=".twistarena.wire.narrow.DecisionIds")
    server.field.add(name="batch", number=field_number(_SM, "batch"),
                     type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                     type_name=".twistarena.wire.narrow.BatchIds")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    cls: type[Message] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("twistarena.wire.narrow.ServerMessageIds"))
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
