"""Turn the wire messages back into the engine's Python values.

The same bot must play in-process and over the network, so a decision request
becomes exactly what the engine would hand it: the seat's observation dict and
a list of ``twistarena.engine.Action``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Struct, Value
from twistarena.engine import Action
from twistarena.v1 import match_pb2, play_pb2

JSON = dict[str, Any]

REASONS = {v: k.removeprefix("END_REASON_") for k, v in match_pb2.EndReason.items()}
STATUSES = {v: k.removeprefix("MATCH_STATUS_") for k, v in match_pb2.MatchStatus.items()}
ERRORS = {v: k for k, v in play_pb2.ErrorReason.items()}


def _value(value: Value) -> Any:
    """One ``google.protobuf.Value`` as plain Python (integral numbers as ints)."""
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        return {k: _value(v) for k, v in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_value(v) for v in value.list_value.values]
    if kind == "bool_value":
        return value.bool_value
    return None


def seed_text(match: match_pb2.Match) -> str:
    """'seed N', or why it is not shown: the server keeps a match's seed (which
    rebuilds every hand) from all but its admin until the match is over."""
    return f"seed {match.seed}" if match.seed else "seed hidden until the match ends"


def struct_to_dict(struct: Struct) -> JSON:
    """A ``google.protobuf.Struct`` as a plain dict, integral numbers as ints.

    (Struct numbers are doubles on the wire; the engine's payloads use ints.)"""
    return {k: _value(v) for k, v in struct.fields.items()}


def dict_to_struct(data: Mapping[str, Any]) -> Struct:
    struct = Struct()
    struct.update(dict(data))
    return struct


def set_seed_and_game_options(spec: Any, seed: int | None,
                              game_options: Mapping[str, Any] | None) -> None:
    """Fill a ``MatchOptions`` or ``TournamentSpec``'s ``seed`` and ``game_options``: both
    are left unset when not given, so that the server picks a seed and the defaults."""
    if seed is not None:
        spec.seed = seed
    if game_options:
        spec.game_options.CopyFrom(dict_to_struct(game_options))


def message_to_dict(msg: Message) -> JSON:
    """A per-game message as the engine's dict (the server guarantees the round trip)."""
    out: JSON = json_format.MessageToDict(
        msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return out


def oneof_to_dict(msg: Message, group: str = "game") -> JSON:
    """The set member of a per-game oneof (Observation, PublicView) as a dict."""
    which = msg.WhichOneof(group)
    if which is None:
        return {}
    inner = getattr(msg, which)
    if isinstance(inner, Struct):
        return struct_to_dict(inner)
    return message_to_dict(inner)


def legal_actions(request: play_pb2.DecisionRequest, lazy: bool = False) -> list[Action]:
    """The request's legal actions; ``lazy``: payloads decoded when first read."""
    if lazy:
        return [Action(a.id, a.label, LazyPayload(a)) for a in request.legal_actions]
    return [Action(a.id, a.label, struct_to_dict(a.payload)) for a in request.legal_actions]


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How a match ended: per-seat scores and places (1 = won)."""

    scores: tuple[int, ...]
    places: tuple[int, ...]
    winners: tuple[int, ...]
    reason: str
    detail: str = ""

    @classmethod
    def from_proto(cls, result: match_pb2.MatchResult) -> MatchResult:
        return cls(tuple(result.scores), tuple(result.places), tuple(result.winners),
                   REASONS.get(result.reason, str(result.reason)), result.detail)

    @classmethod
    def of_engine(cls, scores: Sequence[int], places: Sequence[int]) -> MatchResult:
        """The result of a game played (or replayed) to its end on the engine."""
        return cls(tuple(scores), tuple(places),
                   tuple(seat for seat, place in enumerate(places) if place == 1), "COMPLETED")

    def to_json(self) -> JSON:
        return {"scores": list(self.scores), "places": list(self.places),
                "winners": list(self.winners), "reason": self.reason, "detail": self.detail}


class MatchEvent:
    """One event of the match as this seat (or a spectator) may see it: ``seq``,
    ``kind``, ``data`` (the event's fields, a Mapping) and ``text``. Read-only.

    An agent keeps every event of its match (``Agent.events``), so an event is one
    small object: with ``lazy``, its data stays serialized in it until first read
    (then a read-only Mapping), where a separate lazy mapping per event would double
    the objects the garbage collector walks through for the whole match."""

    __slots__ = ("_data", "_kind", "_seq", "_source", "_text")
    __match_args__ = ("seq", "kind", "data", "text")
    __hash__ = None  # type: ignore[assignment]  # equal events may hold unhashable data

    def __init__(self, seq: int, kind: str, data: Mapping[str, Any] | None = None,
                 text: str = "") -> None:
        self._seq = seq
        self._kind = kind
        self._text = text
        self._data: Mapping[str, Any] | None = {} if data is None else data
        self._source: bytes | None = None

    @classmethod
    def from_proto(cls, event: match_pb2.Event, lazy: bool = False) -> MatchEvent:
        """``lazy``: ``data`` is decoded when first read (the serialized Struct is
        kept, not the message it came in, which may be a whole DecisionRequest)."""
        if not lazy:
            return cls(event.seq, event.kind, struct_to_dict(event.data), event.text)
        # Per event and agent: the slots are set once each, not through __init__.
        new = cls.__new__(cls)
        new._seq, new._kind, new._text = event.seq, event.kind, event.text
        new._data = None
        new._source = event.data.SerializeToString()
        return new

    @property
    def seq(self) -> int:
        return self._seq

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def text(self) -> str:
        return self._text

    @property
    def data(self) -> Mapping[str, Any]:
        data = self._data
        if data is None:
            assert self._source is not None
            data = self._data = MappingProxyType(struct_to_dict(Struct.FromString(self._source)))
            self._source = None
        return data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MatchEvent):
            return NotImplemented
        return (self._seq, self._kind, self._text) == (other._seq, other._kind, other._text) \
            and dict(self.data) == dict(other.data)

    def __repr__(self) -> str:
        return (f"MatchEvent(seq={self._seq!r}, kind={self._kind!r}, data={dict(self.data)!r}, "
                f"text={self._text!r})")


@dataclass(frozen=True, slots=True)
class Rejection:
    """The server refused an answer; ``may_retry`` says the decision is still open."""

    decision_id: int
    action_id: int
    reason: str
    message: str
    may_retry: bool

    @classmethod
    def from_proto(cls, msg: play_pb2.AnswerRejected) -> Rejection:
        return cls(msg.decision_id, msg.action_id, ERRORS.get(msg.reason, str(msg.reason)),
                   msg.message, msg.may_retry)


class _Lazy(Mapping[str, Any]):
    """A read-only mapping decoded on first use (``dict(...)`` copies it), so a bot
    that never reads it skips the cost."""

    __slots__ = ("_data", "_source")

    def __init__(self, source: Any) -> None:
        self._source = source
        self._data: JSON | None = None

    def _decode(self) -> JSON:
        raise NotImplementedError

    def _get(self) -> JSON:
        if self._data is None:
            self._data = self._decode()
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


class LazyPayload(_Lazy):
    """A LegalAction's payload, not even looked up until first read."""

    __slots__ = ()

    def _decode(self) -> JSON:
        return struct_to_dict(self._source.payload)


class LazyObservation(_Lazy):
    """An observation (the per-game message of a oneof), decoded on first use."""

    __slots__ = ()

    def _decode(self) -> JSON:
        return oneof_to_dict(self._source)


@dataclass(slots=True)
class Decision:
    """A decision request in engine terms, kept until it is settled."""

    decision_id: int
    seat: int
    observation: Mapping[str, Any]
    legal_actions: list[Action]
    time_left_ms: int

    @classmethod
    def from_proto(cls, req: play_pb2.DecisionRequest, lazy: bool = False) -> Decision:
        """``lazy``: the observation and the action payloads are decoded when first read."""
        observation = LazyObservation(req.observation) if lazy else oneof_to_dict(
            req.observation)
        return cls(req.decision_id, req.seat, observation,
                   legal_actions(req, lazy), req.time_left_ms)
