import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from twistarena.v1 import match_pb2 as _match_pb2
from twistarena.v1 import observations_pb2 as _observations_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    STALE_DECISION: _ClassVar[ErrorReason]
    DUPLICATE_ANSWER: _ClassVar[ErrorReason]
    LATE_ANSWER: _ClassVar[ErrorReason]
    ILLEGAL_ACTION: _ClassVar[ErrorReason]
    UNKNOWN_DECISION: _ClassVar[ErrorReason]
    BAD_TOKEN: _ClassVar[ErrorReason]
    UNKNOWN_MATCH: _ClassVar[ErrorReason]
    MALFORMED_MESSAGE: _ClassVar[ErrorReason]
    MATCH_OVER: _ClassVar[ErrorReason]
    TAKEN_OVER: _ClassVar[ErrorReason]
    TOO_MANY_STREAMS: _ClassVar[ErrorReason]
    JOIN_TIMEOUT: _ClassVar[ErrorReason]
    NOT_OWNER: _ClassVar[ErrorReason]
    INVALID_OPTIONS: _ClassVar[ErrorReason]
    PERMISSION_DENIED_ADMIN: _ClassVar[ErrorReason]
    DRAINING: _ClassVar[ErrorReason]
    INTERNAL_ERROR: _ClassVar[ErrorReason]
    REPLAY_CLOSED: _ClassVar[ErrorReason]
ERROR_REASON_UNSPECIFIED: ErrorReason
STALE_DECISION: ErrorReason
DUPLICATE_ANSWER: ErrorReason
LATE_ANSWER: ErrorReason
ILLEGAL_ACTION: ErrorReason
UNKNOWN_DECISION: ErrorReason
BAD_TOKEN: ErrorReason
UNKNOWN_MATCH: ErrorReason
MALFORMED_MESSAGE: ErrorReason
MATCH_OVER: ErrorReason
TAKEN_OVER: ErrorReason
TOO_MANY_STREAMS: ErrorReason
JOIN_TIMEOUT: ErrorReason
NOT_OWNER: ErrorReason
INVALID_OPTIONS: ErrorReason
PERMISSION_DENIED_ADMIN: ErrorReason
DRAINING: ErrorReason
INTERNAL_ERROR: ErrorReason
REPLAY_CLOSED: ErrorReason

class AgentMessage(_message.Message):
    __slots__ = ("join", "answer")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    join: Join
    answer: Answer
    def __init__(self, join: _Optional[_Union[Join, _Mapping]] = ..., answer: _Optional[_Union[Answer, _Mapping]] = ...) -> None: ...

class Join(_message.Message):
    __slots__ = ("match_id", "seat_token", "resume_from_seq", "no_events", "batched", "keep_open", "handout")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESUME_FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    NO_EVENTS_FIELD_NUMBER: _ClassVar[int]
    BATCHED_FIELD_NUMBER: _ClassVar[int]
    KEEP_OPEN_FIELD_NUMBER: _ClassVar[int]
    HANDOUT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat_token: str
    resume_from_seq: int
    no_events: bool
    batched: bool
    keep_open: bool
    handout: int
    def __init__(self, match_id: _Optional[str] = ..., seat_token: _Optional[str] = ..., resume_from_seq: _Optional[int] = ..., no_events: _Optional[bool] = ..., batched: _Optional[bool] = ..., keep_open: _Optional[bool] = ..., handout: _Optional[int] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("decision_id", "action_id", "fallback")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    decision_id: int
    action_id: int
    fallback: bool
    def __init__(self, decision_id: _Optional[int] = ..., action_id: _Optional[int] = ..., fallback: _Optional[bool] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("joined", "decision", "accepted", "rejected", "event", "match_over", "rewound", "batch")
    JOINED_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    MATCH_OVER_FIELD_NUMBER: _ClassVar[int]
    REWOUND_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    joined: Joined
    decision: DecisionRequest
    accepted: AnswerAccepted
    rejected: AnswerRejected
    event: _match_pb2.Event
    match_over: MatchOver
    rewound: Rewound
    batch: SeatBatch
    def __init__(self, joined: _Optional[_Union[Joined, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., accepted: _Optional[_Union[AnswerAccepted, _Mapping]] = ..., rejected: _Optional[_Union[AnswerRejected, _Mapping]] = ..., event: _Optional[_Union[_match_pb2.Event, _Mapping]] = ..., match_over: _Optional[_Union[MatchOver, _Mapping]] = ..., rewound: _Optional[_Union[Rewound, _Mapping]] = ..., batch: _Optional[_Union[SeatBatch, _Mapping]] = ...) -> None: ...

class SeatBatch(_message.Message):
    __slots__ = ("accepted", "events")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    accepted: AnswerAccepted
    events: _containers.RepeatedCompositeFieldContainer[_match_pb2.Event]
    def __init__(self, accepted: _Optional[_Union[AnswerAccepted, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_match_pb2.Event, _Mapping]]] = ...) -> None: ...

class Rewound(_message.Message):
    __slots__ = ("to_seq", "actions", "lost_actions", "reason")
    TO_SEQ_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    LOST_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    to_seq: int
    actions: int
    lost_actions: int
    reason: str
    def __init__(self, to_seq: _Optional[int] = ..., actions: _Optional[int] = ..., lost_actions: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Joined(_message.Message):
    __slots__ = ("match_id", "seat", "game_id", "num_players", "game_options", "time_control")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    GAME_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    game_id: str
    num_players: int
    game_options: _struct_pb2.Struct
    time_control: _match_pb2.TimeControl
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., game_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., time_control: _Optional[_Union[_match_pb2.TimeControl, _Mapping]] = ...) -> None: ...

class LegalAction(_message.Message):
    __slots__ = ("id", "label", "payload")
    ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    id: int
    label: str
    payload: _struct_pb2.Struct
    def __init__(self, id: _Optional[int] = ..., label: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("match_id", "decision_id", "seat", "observation", "legal_actions", "deadline", "time_left_ms", "accepted", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    decision_id: int
    seat: int
    observation: _observations_pb2.Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[LegalAction]
    deadline: _timestamp_pb2.Timestamp
    time_left_ms: int
    accepted: AnswerAccepted
    events: _containers.RepeatedCompositeFieldContainer[_match_pb2.Event]
    def __init__(self, match_id: _Optional[str] = ..., decision_id: _Optional[int] = ..., seat: _Optional[int] = ..., observation: _Optional[_Union[_observations_pb2.Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[LegalAction, _Mapping]]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_left_ms: _Optional[int] = ..., accepted: _Optional[_Union[AnswerAccepted, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_match_pb2.Event, _Mapping]]] = ...) -> None: ...

class AnswerAccepted(_message.Message):
    __slots__ = ("decision_id", "action_id")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    decision_id: int
    action_id: int
    def __init__(self, decision_id: _Optional[int] = ..., action_id: _Optional[int] = ...) -> None: ...

class AnswerRejected(_message.Message):
    __slots__ = ("decision_id", "action_id", "reason", "message", "may_retry")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MAY_RETRY_FIELD_NUMBER: _ClassVar[int]
    decision_id: int
    action_id: int
    reason: ErrorReason
    message: str
    may_retry: bool
    def __init__(self, decision_id: _Optional[int] = ..., action_id: _Optional[int] = ..., reason: _Optional[_Union[ErrorReason, str]] = ..., message: _Optional[str] = ..., may_retry: _Optional[bool] = ...) -> None: ...

class MatchOver(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: _match_pb2.MatchResult
    def __init__(self, result: _Optional[_Union[_match_pb2.MatchResult, _Mapping]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("match_id", "from_seq", "batched")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    BATCHED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    from_seq: int
    batched: bool
    def __init__(self, match_id: _Optional[str] = ..., from_seq: _Optional[int] = ..., batched: _Optional[bool] = ...) -> None: ...

class WatchBatch(_message.Message):
    __slots__ = ("events", "view")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_match_pb2.Event]
    view: _observations_pb2.PublicView
    def __init__(self, events: _Optional[_Iterable[_Union[_match_pb2.Event, _Mapping]]] = ..., view: _Optional[_Union[_observations_pb2.PublicView, _Mapping]] = ...) -> None: ...

class WatchMessage(_message.Message):
    __slots__ = ("view", "event", "match_over", "rewound", "batch")
    VIEW_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    MATCH_OVER_FIELD_NUMBER: _ClassVar[int]
    REWOUND_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    view: _observations_pb2.PublicView
    event: _match_pb2.Event
    match_over: MatchOver
    rewound: Rewound
    batch: WatchBatch
    def __init__(self, view: _Optional[_Union[_observations_pb2.PublicView, _Mapping]] = ..., event: _Optional[_Union[_match_pb2.Event, _Mapping]] = ..., match_over: _Optional[_Union[MatchOver, _Mapping]] = ..., rewound: _Optional[_Union[Rewound, _Mapping]] = ..., batch: _Optional[_Union[WatchBatch, _Mapping]] = ...) -> None: ...
