"""Hot messages as wire bytes: what every decision sends, assembled from parts.

The messages sent on every decision (DecisionRequest, AnswerAccepted, events,
a batched seat's SeatBatch) are assembled here as serialized
``ServerMessage``/``WatchMessage`` bytes: a protobuf message is the
concatenation of its encoded fields, so the parts that do not change (the
match id, a legal action, an event shared by several streams) are encoded
once and joined, and nothing is copied into a parent message first. The Play
and Watch handlers pass such bytes through unchanged
(``messages.passthrough_serializer``); the wire format is exactly the contract's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from google.protobuf import timestamp_pb2
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import observations_pb2 as opb
from twistarena.v1 import play_pb2 as ppb

from .fields import (
    LEN,
    field_key,
    field_keys,
    field_number,
    length_delimited,
    string_field,
    varint_field,
)
from .messages import (
    OBSERVATION_CLASSES,
    OBSERVATION_FIELDS,
    PUBLIC_VIEW_CLASSES,
    Narrator,
    event,
    struct,
)
from .schemas import compiled_struct, message_encoder, native, schema

_DR, _SM = ppb.DecisionRequest, ppb.ServerMessage
(_MATCH_ID_KEY, _DECISION_ID_KEY, _SEAT_KEY, _OBSERVATION_KEY, _DEADLINE_KEY, _TIME_LEFT_KEY,
 _DR_ACCEPTED_KEY, _DR_EVENTS_KEY) = field_keys(
    _DR, "match_id", "decision_id", "seat", "observation", "deadline", "time_left_ms",
    "accepted", "events")
_BATCH_ACCEPTED_KEY, _SEAT_BATCH_EVENTS_KEY = field_keys(ppb.SeatBatch, "accepted", "events")
_SM_DECISION_KEY, _SM_ACCEPTED_KEY, _SM_EVENT_KEY, _SM_BATCH_KEY, _SM_JOINED_KEY = field_keys(
    _SM, "decision", "accepted", "event", "batch", "joined")
_WM_EVENT_KEY, _WM_VIEW_KEY, _WM_BATCH_KEY = field_keys(ppb.WatchMessage, "event", "view",
                                                        "batch")
_BATCH_EVENTS_KEY, _BATCH_VIEW_KEY = field_keys(ppb.WatchBatch, "events", "view")
_ACCEPTED_DECISION_KEY, _ACCEPTED_ACTION_KEY = field_keys(ppb.AnswerAccepted, "decision_id",
                                                          "action_id")
_TS_SECONDS_KEY, _TS_NANOS_KEY = field_keys(timestamp_pb2.Timestamp, "seconds", "nanos")
_JOINED_SEAT_KEY, _JOINED_OPTIONS_KEY = field_keys(ppb.Joined, "seat", "game_options")
(_AM_ANSWER_KEY,) = field_keys(ppb.AgentMessage, "answer")
_ANSWER_DECISION_KEY, _ANSWER_ACTION_KEY = field_keys(ppb.Answer, "decision_id", "action_id")
#: The compiled writer of a DecisionRequest's frame (None: not built).
_FRAMES = native.DecisionFrames(tuple(
    [field_number(_DR, name) for name in ("decision_id", "seat", "observation", "deadline",
                                          "time_left_ms", "accepted", "events")]
    + [field_number(_SM, "decision"), 1, 2])) if native is not None else None
_OBSERVATION_MEMBER_KEYS = {game: field_key(number, LEN)
                            for game, number in OBSERVATION_FIELDS.items()}
#: game id -> its observation message's encoder (``message_encoder``)
_OBSERVATION_ENCODERS = {game: message_encoder(cls) for game, cls in OBSERVATION_CLASSES.items()}


#: game id -> field number of its member in the PublicView oneof, as a field key
_PUBLIC_VIEW_MEMBER_KEYS = {
    fd.name: field_key(fd.number, LEN)
    for fd in opb.PublicView.DESCRIPTOR.oneofs_by_name["game"].fields}
#: game id -> its public view message's encoder (``message_encoder``)
_PUBLIC_VIEW_ENCODERS = {game: message_encoder(cls) for game, cls in PUBLIC_VIEW_CLASSES.items()}


def public_view_bytes(game_id: str, data: Mapping[str, Any]) -> bytes:
    """A serialized ``PublicView`` (the oneof member for ``game_id``) from the engine
    dict: ``public_view(game_id, data).SerializeToString()``."""
    return length_delimited(_PUBLIC_VIEW_MEMBER_KEYS[game_id], _PUBLIC_VIEW_ENCODERS[game_id](data))


def observation_bytes(game_id: str, data: Mapping[str, Any]) -> bytes:
    """A serialized ``Observation`` (the oneof member for ``game_id``) from the engine dict."""
    inner = _OBSERVATION_ENCODERS[game_id](data)
    return length_delimited(_OBSERVATION_MEMBER_KEYS[game_id], inner)


#: One slice of an observation: (slot, version, build) as the engine's
#: ``State.observation_parts`` gives it (None as version: build it every time).
ObservationPartLike = tuple[Hashable, Hashable, Callable[[], Mapping[str, Any]]]


class ObservationSource(Protocol):
    """What ``ObservationEncoder.encode_seat`` reads: the engine's ``State``."""

    def observation_slots(self, seat: int) -> Sequence[tuple[Hashable, Hashable]]: ...

    def observation_part(self, seat: int, slot: Hashable) -> Mapping[str, Any]: ...


class ObservationEncoder:
    """A match's observations as serialized ``Observation`` bytes, encoded part by part.

    A protobuf message may be sent as the concatenation of separately encoded
    parts: a repeated field's elements are appended in order and every other
    field set in one part only, so decoders see exactly the whole message. Each
    slot keeps the bytes of its latest version; an observation re-encodes only
    the parts whose version changed since (for Tricky Twist: the table, and the
    one or two players who just acted or won a trick)."""

    def __init__(self, game_id: str) -> None:
        self._encode = _OBSERVATION_ENCODERS[game_id]
        self._member_key = _OBSERVATION_MEMBER_KEYS[game_id]
        self._member_number = OBSERVATION_FIELDS[game_id]
        #: The compiled encoder's loop over the parts (None: not built).
        self._compiled: native.Schema | None = (
            schema(OBSERVATION_CLASSES[game_id].DESCRIPTOR) if native is not None else None)
        self._slots: dict[Hashable, tuple[Hashable, bytes]] = {}

    def encode(self, parts: Sequence[ObservationPartLike]) -> bytes:
        """The serialized ``Observation`` made of ``parts`` (their order kept)."""
        if self._compiled is not None:
            try:
                return self._compiled.encode_parts(self._slots, parts, self._member_number)
            except (TypeError, ValueError):
                pass  # a part the compiled schema refuses: the library says what is wrong
        return self._encode_each(parts)

    def encode_seat(self, source: ObservationSource, seat: int) -> bytes:
        """``encode(source.observation_parts(seat))``, with nothing made for a part
        that is kept: ``source.observation_slots(seat)`` gives the parts' slots and
        versions, ``source.observation_part(seat, slot)`` builds one when needed."""
        slots, build = source.observation_slots(seat), source.observation_part
        if self._compiled is not None:
            try:
                return self._compiled.encode_slots(self._slots, slots, build, seat,
                                                   self._member_number)
            except (TypeError, ValueError):
                pass  # a part the compiled schema refuses: the library says what is wrong
        return self._encode_each((slot, version, functools.partial(build, seat, slot))
                                 for slot, version in slots)

    def _encode_each(self, parts: Iterable[ObservationPartLike]) -> bytes:
        """``encode`` part by part in Python (each part by ``message_encoder``)."""
        slots = self._slots
        chunks = []
        for slot, version, build in parts:
            kept = slots.get(slot)
            if version is not None and kept is not None and kept[0] == version:
                chunks.append(kept[1])
                continue
            encoded = self._encode(build())
            if version is not None:
                slots[slot] = (version, encoded)
            chunks.append(encoded)
        return length_delimited(self._member_key, b"".join(chunks))


#: The field numbers of an Event's seq, kind, data and text (``native.event_message``).
_EVENT_NUMBERS = tuple(field_number(mpb.Event, name) for name in ("seq", "kind", "data", "text"))


def event_bytes(seq: int, view: Mapping[str, Any], info: Narrator) -> bytes:
    """``event(seq, view, info).SerializeToString()``: written by the compiled encoder
    where it was built and takes the data (its Struct's entries in the view's order;
    a map's order is not part of the wire format), else by the library."""
    if native is not None:
        try:
            return native.event_message(_EVENT_NUMBERS, seq, str(view.get("kind", "")), view,
                                         info.narrate(view) or "")
        except (TypeError, ValueError, OverflowError):
            pass
    return event(seq, view, info).SerializeToString()


def match_id_field(match_id: str) -> bytes:
    """The ``match_id`` field of a DecisionRequest, encoded once per match."""
    return string_field(_MATCH_ID_KEY, match_id)


def decision_body(match_id_field: bytes, decision_id: int, seat: int, observation: bytes,
                  legal_actions: Sequence[bytes], deadline_ns: int) -> bytes:
    """Every field of a DecisionRequest but ``time_left_ms``, in field order."""
    if _FRAMES is not None:
        return _FRAMES.body(match_id_field, decision_id, seat, observation, legal_actions,
                            deadline_ns)
    return _decision_body(match_id_field, decision_id, seat, observation, legal_actions,
                          deadline_ns)


def _decision_body(match_id_field: bytes, decision_id: int, seat: int, observation: bytes,
                   legal_actions: Sequence[bytes], deadline_ns: int) -> bytes:
    """``decision_body`` written by joining its fields' bytes (no compiled encoder)."""
    seconds, nanos = divmod(deadline_ns, 1_000_000_000)
    deadline = varint_field(_TS_SECONDS_KEY, seconds) + varint_field(_TS_NANOS_KEY, nanos)
    return b"".join((
        match_id_field,
        varint_field(_DECISION_ID_KEY, decision_id),
        varint_field(_SEAT_KEY, seat),
        length_delimited(_OBSERVATION_KEY, observation),
        *legal_actions,
        length_delimited(_DEADLINE_KEY, deadline),
    ))


def decision_message(body: bytes, time_left_ms: int, batched: bytes = b"") -> bytes:
    """A serialized ``ServerMessage(decision=...)`` from ``decision_body``, the time
    left and, on a batched stream, the ``batched_fields`` that ride along."""
    return length_delimited(_SM_DECISION_KEY,
                            body + varint_field(_TIME_LEFT_KEY, time_left_ms) + batched)


def request_message(body: bytes, time_left_ms: int, accepted: bytes = b"",
                    events: Sequence[bytes] = ()) -> bytes:
    """``decision_message(body, time_left_ms, batched_fields(accepted, events))`` in
    one buffer when the compiled encoder is built."""
    if _FRAMES is not None:
        return _FRAMES.message(body, time_left_ms, accepted, events)
    return decision_message(body, time_left_ms, batched_fields(accepted, events))


def batched_fields(accepted: bytes, events: Sequence[bytes]) -> bytes:
    """A DecisionRequest's ``accepted`` and ``events`` fields, from a serialized
    AnswerAccepted (empty: none) and serialized Events."""
    out = length_delimited(_DR_ACCEPTED_KEY, accepted) if accepted else b""
    return out + b"".join([length_delimited(_DR_EVENTS_KEY, e) for e in events])


def seat_batch_message(accepted: bytes, events: Sequence[bytes]) -> bytes:
    """A serialized ``ServerMessage(batch=SeatBatch(...))`` from a serialized
    AnswerAccepted (empty: none) and serialized Events."""
    body = length_delimited(_BATCH_ACCEPTED_KEY, accepted) if accepted else b""
    body += b"".join([length_delimited(_SEAT_BATCH_EVENTS_KEY, e) for e in events])
    return length_delimited(_SM_BATCH_KEY, body)




def joined_without_seat(match_id: str, game_id: str, num_players: int,
                        game_options: Mapping[str, Any],
                        time_control: mpb.TimeControl) -> bytes:
    """A serialized Joined but its seat (see ``joined_message``): its game options, a
    large Struct, written by the compiled encoder where it can, else by the library."""
    options = compiled_struct(game_options)
    if options is None:
        return ppb.Joined(match_id=match_id, game_id=game_id, num_players=num_players,
                          game_options=struct(game_options),
                          time_control=time_control).SerializeToString()
    rest = ppb.Joined(match_id=match_id, game_id=game_id, num_players=num_players,
                      time_control=time_control).SerializeToString()
    return rest + length_delimited(_JOINED_OPTIONS_KEY, options)


def joined_message(joined_without_seat: bytes, seat: int) -> bytes:
    """A serialized ``ServerMessage(joined=...)`` from a serialized Joined without its
    seat (the same for every seat of a match, so encoded once) and the seat."""
    return length_delimited(_SM_JOINED_KEY,
                            joined_without_seat + varint_field(_JOINED_SEAT_KEY, seat))


def accepted(decision_id: int, action_id: int) -> bytes:
    """A serialized ``AnswerAccepted``."""
    return (varint_field(_ACCEPTED_DECISION_KEY, decision_id)
            + varint_field(_ACCEPTED_ACTION_KEY, action_id))


def accepted_message(decision_id: int, action_id: int) -> bytes:
    """A serialized ``ServerMessage(accepted=AnswerAccepted(...))``."""
    return length_delimited(_SM_ACCEPTED_KEY, accepted(decision_id, action_id))


def event_server_message(event_bytes: bytes) -> bytes:
    """A serialized ``ServerMessage(event=...)`` from a serialized Event."""
    return length_delimited(_SM_EVENT_KEY, event_bytes)


def event_watch_message(event_bytes: bytes) -> bytes:
    """A serialized ``WatchMessage(event=...)`` from a serialized Event."""
    return length_delimited(_WM_EVENT_KEY, event_bytes)




def answer_message(decision_id: int, action_id: int) -> bytes:
    """A serialized ``AgentMessage(answer=Answer(...))``."""
    return length_delimited(_AM_ANSWER_KEY, varint_field(_ANSWER_DECISION_KEY, decision_id)
                            + varint_field(_ANSWER_ACTION_KEY, action_id))



def view_watch_message(view_bytes: bytes) -> bytes:
    """A serialized ``WatchMessage(view=...)`` from a serialized PublicView."""
    return length_delimited(_WM_VIEW_KEY, view_bytes)


def batch_watch_message(events: Sequence[bytes], view_bytes: bytes | None) -> bytes:
    """A serialized ``WatchMessage(batch=WatchBatch(events, view))`` from serialized
    Events and a serialized PublicView (None: no view)."""
    body = b"".join(length_delimited(_BATCH_EVENTS_KEY, e) for e in events)
    if view_bytes is not None:
        body += length_delimited(_BATCH_VIEW_KEY, view_bytes)
    return length_delimited(_WM_BATCH_KEY, body)

