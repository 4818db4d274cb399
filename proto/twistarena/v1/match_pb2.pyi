import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Fallback(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FALLBACK_UNSPECIFIED: _ClassVar[Fallback]
    FALLBACK_RANDOM: _ClassVar[Fallback]
    FALLBACK_FORFEIT: _ClassVar[Fallback]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_CANCELLED: _ClassVar[MatchStatus]

class EndReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_REASON_UNSPECIFIED: _ClassVar[EndReason]
    END_REASON_COMPLETED: _ClassVar[EndReason]
    END_REASON_FORFEIT: _ClassVar[EndReason]
    END_REASON_CANCELLED: _ClassVar[EndReason]
    END_REASON_ABANDONED: _ClassVar[EndReason]
    END_REASON_LENGTH_LIMIT: _ClassVar[EndReason]
    END_REASON_VOIDED: _ClassVar[EndReason]
FALLBACK_UNSPECIFIED: Fallback
FALLBACK_RANDOM: Fallback
FALLBACK_FORFEIT: Fallback
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_CANCELLED: MatchStatus
END_REASON_UNSPECIFIED: EndReason
END_REASON_COMPLETED: EndReason
END_REASON_FORFEIT: EndReason
END_REASON_CANCELLED: EndReason
END_REASON_ABANDONED: EndReason
END_REASON_LENGTH_LIMIT: EndReason
END_REASON_VOIDED: EndReason

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "fallback", "forfeit_after", "reconnect_grace_ms", "join_timeout_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_AFTER_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    JOIN_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    fallback: Fallback
    forfeit_after: int
    reconnect_grace_ms: int
    join_timeout_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., fallback: _Optional[_Union[Fallback, str]] = ..., forfeit_after: _Optional[int] = ..., reconnect_grace_ms: _Optional[int] = ..., join_timeout_ms: _Optional[int] = ...) -> None: ...

class SeatSpec(_message.Message):
    __slots__ = ("name", "house_bot")
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOT_FIELD_NUMBER: _ClassVar[int]
    name: str
    house_bot: str
    def __init__(self, name: _Optional[str] = ..., house_bot: _Optional[str] = ...) -> None: ...

class MatchOptions(_message.Message):
    __slots__ = ("game_id", "num_players", "seed", "game_options", "time_control", "seats")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    GAME_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    num_players: int
    seed: int
    game_options: _struct_pb2.Struct
    time_control: TimeControl
    seats: _containers.RepeatedCompositeFieldContainer[SeatSpec]
    def __init__(self, game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., seed: _Optional[int] = ..., game_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[SeatSpec, _Mapping]]] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("scores", "places", "winners", "reason", "detail")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    reason: EndReason
    detail: str
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., reason: _Optional[_Union[EndReason, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "name", "house_bot", "connected", "timeouts")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOT_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    house_bot: str
    connected: bool
    timeouts: int
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., house_bot: _Optional[str] = ..., connected: _Optional[bool] = ..., timeouts: _Optional[int] = ...) -> None: ...

class Match(_message.Message):
    __slots__ = ("match_id", "options", "seed", "status", "seats", "actions", "created_at", "result")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    options: MatchOptions
    seed: int
    status: MatchStatus
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    actions: int
    created_at: _timestamp_pb2.Timestamp
    result: MatchResult
    def __init__(self, match_id: _Optional[str] = ..., options: _Optional[_Union[MatchOptions, _Mapping]] = ..., seed: _Optional[int] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., actions: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("options",)
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    options: MatchOptions
    def __init__(self, options: _Optional[_Union[MatchOptions, _Mapping]] = ...) -> None: ...

class SeatToken(_message.Message):
    __slots__ = ("seat", "token")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    token: str
    def __init__(self, seat: _Optional[int] = ..., token: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match", "seat_tokens")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    match: Match
    seat_tokens: _containers.RepeatedCompositeFieldContainer[SeatToken]
    def __init__(self, match: _Optional[_Union[Match, _Mapping]] = ..., seat_tokens: _Optional[_Iterable[_Union[SeatToken, _Mapping]]] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("game_id", "statuses", "page_size", "page_token", "agent_id", "arena_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    statuses: _containers.RepeatedScalarFieldContainer[MatchStatus]
    page_size: int
    page_token: str
    agent_id: str
    arena_id: str
    def __init__(self, game_id: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[MatchStatus, str]]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., agent_id: _Optional[str] = ..., arena_id: _Optional[str] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "next_page_token")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[Match]
    next_page_token: str
    def __init__(self, matches: _Optional[_Iterable[_Union[Match, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CancelMatchRequest(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class RecordedAction(_message.Message):
    __slots__ = ("seat", "action_id", "timeout")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action_id: int
    timeout: bool
    def __init__(self, seat: _Optional[int] = ..., action_id: _Optional[int] = ..., timeout: _Optional[bool] = ...) -> None: ...

class Replay(_message.Message):
    __slots__ = ("match", "actions", "events")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match: Match
    actions: _containers.RepeatedCompositeFieldContainer[RecordedAction]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, match: _Optional[_Union[Match, _Mapping]] = ..., actions: _Optional[_Iterable[_Union[RecordedAction, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("seq", "kind", "data", "text")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    seq: int
    kind: str
    data: _struct_pb2.Struct
    text: str
    def __init__(self, seq: _Optional[int] = ..., kind: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., text: _Optional[str] = ...) -> None: ...
