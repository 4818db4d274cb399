"""Engine values (JSON-ready dicts) to contract messages, and hot messages as wire bytes.

The contract side of the encoding: it imports only ``twistarena.v1``, so the
server and the benchmark's yardstick (``clients/twistarena/tools/pingpong.py``) encode
alike without either importing the other. Engine values arrive as plain data
(dicts, and actions and games by the shape ``LegalActionLike``/``Narrator``).

Per-game observation and public-view messages mirror the engine dicts field
for field (see observations.proto), so a dict converts by handing it to the
message constructor: nested dicts and lists become sub-messages. That is
strict (an unknown key raises) and much faster than ``json_format.ParseDict``.

The messages sent on every decision (DecisionRequest, AnswerAccepted, events,
a batched seat's SeatBatch)
are assembled here as serialized ``ServerMessage``/``WatchMessage`` bytes: a
protobuf message is the concatenation of its encoded fields, so the parts that
do not change (the match id, a legal action, an event shared by several
streams) are encoded once and joined, and nothing is copied into a parent
message first. The Play and Watch handlers pass such bytes through unchanged
(``passthrough_serializer``); the wire format is exactly the contract's.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from google.protobuf import struct_pb2
from google.protobuf.message import Message
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import observations_pb2 as opb
from twistarena.v1 import play_pb2 as ppb
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


try:
    from . import _encode
except ImportError:  # not built (no C compiler at install): the protobuf library serves
    _encode = None  # type: ignore[assignment]

def compiled() -> bool:
    """Whether the compiled message encoder was built with this package."""
    return _encode is not None


#: what a compiled schema gives for a dict: the serialized message
Encode = Callable[[Mapping[str, Any]], bytes]
_SCHEMAS: dict[str, Any] = {}


def _field_kind(fd: Any) -> tuple[int, Any] | None:
    """A field's kind for the compiled encoder and its nested schema, or None if
    the encoder does not write it: another type, a repeated bool, unpacked int32,
    or a proto3 ``optional`` scalar (whose zero is sent when set)."""
    from google.protobuf.descriptor import FieldDescriptor as FD

    assert _encode is not None
    if fd.type == FD.TYPE_MESSAGE:
        child = _schema(fd.message_type)
        if child is None:
            return None
        return (_encode.REPEATED_MESSAGE if fd.is_repeated else _encode.MESSAGE), child
    if fd.has_presence and not fd.is_repeated:
        return None
    if fd.type == FD.TYPE_INT32 and (fd.is_packed or not fd.is_repeated):
        return (_encode.REPEATED_INT32 if fd.is_repeated else _encode.INT32), None
    if fd.type == FD.TYPE_STRING:
        return (_encode.REPEATED_STRING if fd.is_repeated else _encode.STRING), None
    if fd.type == FD.TYPE_BOOL and not fd.is_repeated:
        return _encode.BOOL, None
    return None


def _schema(descriptor: Any) -> Any:
    """The compiled schema of one message type (``_encode.Schema``), or None when a
    field is of a kind it does not write (then the library serves that type)."""
    name = descriptor.full_name
    if name not in _SCHEMAS:
        assert _encode is not None
        fields = []
        for fd in sorted(descriptor.fields, key=lambda f: f.number):
            kind = _field_kind(fd)
            if kind is None:
                _SCHEMAS[name] = None
                return None
            fields.append((fd.name, fd.number, *kind))
        _SCHEMAS[name] = _encode.Schema(tuple(fields))
    return _SCHEMAS[name]


def message_encoder(cls: type[Message]) -> Encode:
    """``game_message(cls, data).SerializeToString()`` for dicts ``data``: written by
    the compiled schema where it was built and knows every field of ``cls``, which
    falls back to the library for data it refuses (an unknown key, a wrong type)."""
    def by_library(data: Mapping[str, Any]) -> bytes:
        return game_message(cls, data).SerializeToString()

    schema = _schema(cls.DESCRIPTOR) if _encode is not None else None
    if schema is None:
        return by_library
    compiled: Encode = schema.encode

    def encode(data: Mapping[str, Any]) -> bytes:
        try:
            return compiled(data)
        except (TypeError, ValueError):
            return by_library(data)
    return encode


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


class ActionCache:
    """LegalAction messages by (id, label), reused while their payload is unchanged.

    ``encoded`` gives the same action as the bytes of one ``legal_actions``
    entry of a DecisionRequest (field key and length included)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[int, str], tuple[Mapping[str, Any], ppb.LegalAction, bytes]] = {}

    def _entry(self, action: LegalActionLike) -> tuple[Mapping[str, Any], ppb.LegalAction, bytes]:
        key = (action.id, action.label)
        hit = self._cache.get(key)
        if hit is not None and hit[0] == action.payload:
            return hit
        msg = ppb.LegalAction(id=action.id, label=action.label, payload=struct(action.payload))
        if len(self._cache) > 4096:
            self._cache.clear()
        entry = (action.payload, msg, length_delimited(_LEGAL_ACTIONS_KEY,
                                                       msg.SerializeToString()))
        self._cache[key] = entry
        return entry

    def get(self, action: LegalActionLike) -> ppb.LegalAction:
        return self._entry(action)[1]

    def encoded(self, action: LegalActionLike) -> bytes:
        return self._entry(action)[2]


_ACTION_CACHES: dict[str, ActionCache] = {}


def action_cache(game_id: str) -> ActionCache:
    """The ActionCache shared by every match of ``game_id`` in this process (an
    action's label and payload recur across matches; each entry is still checked
    against the payload the engine gives)."""
    cache = _ACTION_CACHES.get(game_id)
    if cache is None:
        cache = _ACTION_CACHES[game_id] = ActionCache()
    return cache


class ActionVocabulary:
    """Actions as encoded ``legal_actions`` entries, each encoded once.

    An entry is kept per (vocabulary version, action id): the engine's
    ``State.vocabulary_version`` says when labels change, so a decision's legal
    actions are spliced from kept bytes without describing them again. A
    missing entry comes from the game's process-wide ``ActionCache``. Matches of
    the same game, player count and options share one (``match_vocabulary``):
    a short match would otherwise describe most of its actions afresh."""

    #: Entries kept at most (a match meets a few hundred); past it all go.
    LIMIT = 4096

    def __init__(self, game_id: str) -> None:
        #: vocabulary version -> action id -> its encoded entry
        self._tables: dict[Hashable, dict[int, bytes]] = {}
        self._kept = 0
        self._shared = action_cache(game_id)

    def encoded(self, version: Hashable, ids: Iterable[int],
                describe: Callable[[int, int], LegalActionLike], seat: int) -> list[bytes]:
        """The ``legal_actions`` entries of ``ids``; ``describe(seat, id)`` makes a
        missing one (the engine's ``State.describe``; nothing is made per call
        when every entry is kept)."""
        if version is None:
            return [self._shared.encoded(describe(seat, action_id)) for action_id in ids]
        table = self._tables.get(version)
        if table is None:
            if self._kept >= self.LIMIT:
                self._tables.clear()
                self._kept = 0
            table = self._tables[version] = {}
        try:
            return [table[action_id] for action_id in ids]  # the usual case: all kept
        except KeyError:
            pass
        out = []
        for action_id in ids:
            entry = table.get(action_id)
            if entry is None:
                entry = table[action_id] = self._shared.encoded(describe(seat, action_id))
                self._kept += 1
            out.append(entry)
        return out


#: How many vocabularies (distinct game, player count and options) are kept.
VOCABULARIES_KEPT = 32
_VOCABULARIES: OrderedDict[tuple[str, int, str], ActionVocabulary] = OrderedDict()


def match_vocabulary(game_id: str, num_players: int,
                     options: Mapping[str, Any]) -> ActionVocabulary:
    """The vocabulary shared by the matches of ``game_id`` with this player count
    and these (merged) options in this process: the engine labels an action alike
    in two such matches whenever their vocabulary versions are equal (see
    ``State.vocabulary_version``). The least recently used goes first."""
    key = (game_id, num_players, json.dumps(options, sort_keys=True, default=str))
    vocabulary = _VOCABULARIES.get(key)
    if vocabulary is None:
        if len(_VOCABULARIES) >= VOCABULARIES_KEPT:
            _VOCABULARIES.popitem(last=False)
        vocabulary = _VOCABULARIES[key] = ActionVocabulary(game_id)
    else:
        _VOCABULARIES.move_to_end(key)
    return vocabulary


# -- wire bytes ----------------------------------------------------------------


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


def _key(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def length_delimited(key: bytes, payload: bytes) -> bytes:
    """One length-delimited field (sub-message, string, bytes): key, length, payload."""
    return key + varint(len(payload)) + payload


def varint_field(key: bytes, value: int) -> bytes:
    """One varint field; empty for 0 (proto3 leaves default scalars out)."""
    return key + varint(value) if value else b""


def _number(message: type[Message], name: str) -> int:
    number: int = message.DESCRIPTOR.fields_by_name[name].number
    return number


_VARINT, _LEN = 0, 2
_DR = ppb.DecisionRequest
_MATCH_ID_KEY = _key(_number(_DR, "match_id"), _LEN)
_DECISION_ID_KEY = _key(_number(_DR, "decision_id"), _VARINT)
_SEAT_KEY = _key(_number(_DR, "seat"), _VARINT)
_OBSERVATION_KEY = _key(_number(_DR, "observation"), _LEN)
_LEGAL_ACTIONS_KEY = _key(_number(_DR, "legal_actions"), _LEN)
_DEADLINE_KEY = _key(_number(_DR, "deadline"), _LEN)
_TIME_LEFT_KEY = _key(_number(_DR, "time_left_ms"), _VARINT)
_DR_ACCEPTED_KEY = _key(_number(_DR, "accepted"), _LEN)
_DR_EVENTS_KEY = _key(_number(_DR, "events"), _LEN)
_BATCH_ACCEPTED_KEY = _key(_number(ppb.SeatBatch, "accepted"), _LEN)
_SEAT_BATCH_EVENTS_KEY = _key(_number(ppb.SeatBatch, "events"), _LEN)
_SM = ppb.ServerMessage
_SM_DECISION_KEY = _key(_number(_SM, "decision"), _LEN)
_SM_ACCEPTED_KEY = _key(_number(_SM, "accepted"), _LEN)
_SM_EVENT_KEY = _key(_number(_SM, "event"), _LEN)
_SM_BATCH_KEY = _key(_number(_SM, "batch"), _LEN)
_WM_EVENT_KEY = _key(_number(ppb.WatchMessage, "event"), _LEN)
_WM_VIEW_KEY = _key(_number(ppb.WatchMessage, "view"), _LEN)
_WM_BATCH_KEY = _key(_number(ppb.WatchMessage, "batch"), _LEN)
_BATCH_EVENTS_KEY = _key(_number(ppb.WatchBatch, "events"), _LEN)
_BATCH_VIEW_KEY = _key(_number(ppb.WatchBatch, "view"), _LEN)
_ACCEPTED_DECISION_KEY = _key(_number(ppb.AnswerAccepted, "decision_id"), _VARINT)
_ACCEPTED_ACTION_KEY = _key(_number(ppb.AnswerAccepted, "action_id"), _VARINT)
_TS_SECONDS_KEY = _key(1, _VARINT)
_TS_NANOS_KEY = _key(2, _VARINT)
#: The compiled writer of a DecisionRequest's frame (None: not built).
_FRAMES = _encode.DecisionFrames(tuple(
    [_number(_DR, name) for name in ("decision_id", "seat", "observation", "deadline",
                                     "time_left_ms", "accepted", "events")]
    + [_number(_SM, "decision"), 1, 2])) if _encode is not None else None
_OBSERVATION_MEMBER_KEYS = {game: _key(number, _LEN)
                            for game, number in OBSERVATION_FIELDS.items()}
#: game id -> its observation message's encoder (``message_encoder``)
_OBSERVATION_ENCODERS = {game: message_encoder(cls) for game, cls in OBSERVATION_CLASSES.items()}


#: game id -> field number of its member in the PublicView oneof, as a field key
_PUBLIC_VIEW_MEMBER_KEYS = {
    fd.name: _key(fd.number, _LEN)
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
        self._compiled: _encode.Schema | None = (
            _schema(OBSERVATION_CLASSES[game_id].DESCRIPTOR) if _encode is not None else None)
        self._slots: dict[Hashable, tuple[Hashable, bytes]] = {}

    def encode(self, parts: Sequence[ObservationPartLike]) -> bytes:
        """The serialized ``Observation`` made of ``parts`` (their order kept)."""
        if self._compiled is not None:
            try:
                return self._compiled.encode_parts(self._slots, parts, self._member_number)
            except (TypeError, ValueError):
                pass  # a part the compiled schema refuses: the library says what is wrong
        return self._encode_each(parts)

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


#: The field numbers of an Event's seq, kind, data and text (``_encode.event_message``).
_EVENT_NUMBERS = tuple(_number(mpb.Event, name) for name in ("seq", "kind", "data", "text"))


def _string_field(key: bytes, text: str) -> bytes:
    """One string field; empty for "" (proto3 leaves it out)."""
    return length_delimited(key, text.encode()) if text else b""


def _compiled_struct(data: Mapping[str, Any]) -> bytes | None:
    """``struct(data)`` serialized by the compiled encoder (its entries in the dict's
    order; a map's order is not part of the wire format); None where it was not
    built or refuses the data (the library serves then)."""
    if _encode is None:
        return None
    try:
        return _encode.struct_bytes(data)
    except (TypeError, ValueError, OverflowError):
        return None


def event_bytes(seq: int, view: Mapping[str, Any], info: Narrator) -> bytes:
    """``event(seq, view, info).SerializeToString()``: written by the compiled encoder
    where it was built and takes the data (its Struct's entries in the view's order;
    a map's order is not part of the wire format), else by the library."""
    if _encode is not None:
        try:
            return _encode.event_message(_EVENT_NUMBERS, seq, str(view.get("kind", "")), view,
                                         info.narrate(view) or "")
        except (TypeError, ValueError, OverflowError):
            pass
    return event(seq, view, info).SerializeToString()


def match_id_field(match_id: str) -> bytes:
    """The ``match_id`` field of a DecisionRequest, encoded once per match."""
    return _string_field(_MATCH_ID_KEY, match_id)


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


_SM_JOINED_KEY = _key(_number(_SM, "joined"), _LEN)
_JOINED_SEAT_KEY = _key(_number(ppb.Joined, "seat"), _VARINT)
_JOINED_OPTIONS_KEY = _key(_number(ppb.Joined, "game_options"), _LEN)


def joined_without_seat(match_id: str, game_id: str, num_players: int,
                        game_options: Mapping[str, Any],
                        time_control: mpb.TimeControl) -> bytes:
    """A serialized Joined but its seat (see ``joined_message``): its game options, a
    large Struct, written by the compiled encoder where it can, else by the library."""
    options = _compiled_struct(game_options)
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


_AM_ANSWER_KEY = _key(_number(ppb.AgentMessage, "answer"), _LEN)
_ANSWER_DECISION_KEY = _key(_number(ppb.Answer, "decision_id"), _VARINT)
_ANSWER_ACTION_KEY = _key(_number(ppb.Answer, "action_id"), _VARINT)
_LEGAL_ID_KEY = _key(_number(ppb.LegalAction, "id"), _VARINT)[0]
_DR_DECISION_ID_KEY = _DECISION_ID_KEY[0]
_DR_LEGAL_ACTIONS_KEY = _LEGAL_ACTIONS_KEY[0]


def answer_message(decision_id: int, action_id: int) -> bytes:
    """A serialized ``AgentMessage(answer=Answer(...))``."""
    return length_delimited(_AM_ANSWER_KEY, varint_field(_ANSWER_DECISION_KEY, decision_id)
                            + varint_field(_ANSWER_ACTION_KEY, action_id))


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
    action.field.add(name="id", number=_number(ppb.LegalAction, "id"),
                     type=field.TYPE_INT32, label=field.LABEL_OPTIONAL)
    accepted = file.message_type.add(name="AcceptedId")
    accepted.field.add(name="decision_id", number=_number(ppb.AnswerAccepted, "decision_id"),
                       type=field.TYPE_UINT64, label=field.LABEL_OPTIONAL)
    decision = file.message_type.add(name="DecisionIds")
    decision.field.add(name="decision_id", number=_number(_DR, "decision_id"),
                       type=field.TYPE_UINT64, label=field.LABEL_OPTIONAL)
    decision.field.add(name="legal_actions", number=_number(_DR, "legal_actions"),
                       type=field.TYPE_MESSAGE, label=field.LABEL_REPEATED,
                       type_name=".twistarena.wire.narrow.ActionId")
    decision.field.add(name="accepted", number=_number(_DR, "accepted"),
                       type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                       type_name=".twistarena.wire.narrow.AcceptedId")
    batch = file.message_type.add(name="BatchIds")
    batch.field.add(name="accepted", number=_number(ppb.SeatBatch, "accepted"),
                    type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                    type_name=".twistarena.wire.narrow.AcceptedId")
    server = file.message_type.add(name="ServerMessageIds")
    server.field.add(name="decision", number=_number(_SM, "decision"),
                     type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                     type_name=".twistarena.wire.narrow.DecisionIds")
    server.field.add(name="batch", number=_number(_SM, "batch"),
                     type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                     type_name=".twistarena.wire.narrow.BatchIds")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    cls: type[Message] = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("twistarena.wire.narrow.ServerMessageIds"))
    return cls


_SERVER_MESSAGE_IDS = _narrow_classes()
#: ``message_kind`` of a ServerMessage holding a DecisionRequest, a SeatBatch.
DECISION_KIND = _number(_SM, "decision")
SEAT_BATCH_KIND = _number(_SM, "batch")


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
