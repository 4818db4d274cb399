from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunnerReport(_message.Message):
    __slots__ = ("hello", "heartbeat", "done")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    hello: RunnerHello
    heartbeat: RunnerHeartbeat
    done: SeatRef
    def __init__(self, hello: _Optional[_Union[RunnerHello, _Mapping]] = ..., heartbeat: _Optional[_Union[RunnerHeartbeat, _Mapping]] = ..., done: _Optional[_Union[SeatRef, _Mapping]] = ...) -> None: ...

class RunnerHello(_message.Message):
    __slots__ = ("slots", "name")
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    slots: int
    name: str
    def __init__(self, slots: _Optional[int] = ..., name: _Optional[str] = ...) -> None: ...

class RunnerHeartbeat(_message.Message):
    __slots__ = ("playing", "cache_bytes", "cache_max_bytes")
    PLAYING_FIELD_NUMBER: _ClassVar[int]
    CACHE_BYTES_FIELD_NUMBER: _ClassVar[int]
    CACHE_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    playing: _containers.RepeatedCompositeFieldContainer[SeatRef]
    cache_bytes: int
    cache_max_bytes: int
    def __init__(self, playing: _Optional[_Iterable[_Union[SeatRef, _Mapping]]] = ..., cache_bytes: _Optional[int] = ..., cache_max_bytes: _Optional[int] = ...) -> None: ...

class SeatRef(_message.Message):
    __slots__ = ("match_id", "seat")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class RunnerCommand(_message.Message):
    __slots__ = ("welcome", "assign", "revoke")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    ASSIGN_FIELD_NUMBER: _ClassVar[int]
    REVOKE_FIELD_NUMBER: _ClassVar[int]
    welcome: RunnerWelcome
    assign: SeatAssignment
    revoke: SeatRef
    def __init__(self, welcome: _Optional[_Union[RunnerWelcome, _Mapping]] = ..., assign: _Optional[_Union[SeatAssignment, _Mapping]] = ..., revoke: _Optional[_Union[SeatRef, _Mapping]] = ...) -> None: ...

class RunnerWelcome(_message.Message):
    __slots__ = ("runner_id", "session_key", "heartbeat_ms", "silent_after_ms")
    RUNNER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_KEY_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_MS_FIELD_NUMBER: _ClassVar[int]
    SILENT_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    runner_id: str
    session_key: str
    heartbeat_ms: int
    silent_after_ms: int
    def __init__(self, runner_id: _Optional[str] = ..., session_key: _Optional[str] = ..., heartbeat_ms: _Optional[int] = ..., silent_after_ms: _Optional[int] = ...) -> None: ...

class SeatAssignment(_message.Message):
    __slots__ = ("match_id", "seat", "seat_token", "server_address", "agent_id", "version_id", "entry", "game_id", "num_players", "decision_ms", "reconnect_grace_ms", "tournament_id", "handoffs", "content_hash")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    RECONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    HANDOFFS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seat_token: str
    server_address: str
    agent_id: str
    version_id: str
    entry: str
    game_id: str
    num_players: int
    decision_ms: int
    reconnect_grace_ms: int
    tournament_id: str
    handoffs: int
    content_hash: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., server_address: _Optional[str] = ..., agent_id: _Optional[str] = ..., version_id: _Optional[str] = ..., entry: _Optional[str] = ..., game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., decision_ms: _Optional[int] = ..., reconnect_grace_ms: _Optional[int] = ..., tournament_id: _Optional[str] = ..., handoffs: _Optional[int] = ..., content_hash: _Optional[str] = ...) -> None: ...

class FetchVersionRequest(_message.Message):
    __slots__ = ("match_id", "seat", "content_hash")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    content_hash: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., content_hash: _Optional[str] = ...) -> None: ...

class VersionChunk(_message.Message):
    __slots__ = ("data", "total_bytes", "sha256")
    DATA_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    total_bytes: int
    sha256: str
    def __init__(self, data: _Optional[bytes] = ..., total_bytes: _Optional[int] = ..., sha256: _Optional[str] = ...) -> None: ...

class SeatStats(_message.Message):
    __slots__ = ("decisions", "crashes", "timeouts", "illegal_outputs", "restarts", "cpu_ms_total", "cpu_ms_max", "stderr_tail", "decision_logs")
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    CRASHES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    CPU_MS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    CPU_MS_MAX_FIELD_NUMBER: _ClassVar[int]
    STDERR_TAIL_FIELD_NUMBER: _ClassVar[int]
    DECISION_LOGS_FIELD_NUMBER: _ClassVar[int]
    decisions: int
    crashes: int
    timeouts: int
    illegal_outputs: int
    restarts: int
    cpu_ms_total: float
    cpu_ms_max: float
    stderr_tail: bytes
    decision_logs: _containers.RepeatedCompositeFieldContainer[DecisionLog]
    def __init__(self, decisions: _Optional[int] = ..., crashes: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal_outputs: _Optional[int] = ..., restarts: _Optional[int] = ..., cpu_ms_total: _Optional[float] = ..., cpu_ms_max: _Optional[float] = ..., stderr_tail: _Optional[bytes] = ..., decision_logs: _Optional[_Iterable[_Union[DecisionLog, _Mapping]]] = ...) -> None: ...

class DecisionLog(_message.Message):
    __slots__ = ("decision_id", "text", "failure", "why")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    decision_id: int
    text: str
    failure: str
    why: str
    def __init__(self, decision_id: _Optional[int] = ..., text: _Optional[str] = ..., failure: _Optional[str] = ..., why: _Optional[str] = ...) -> None: ...

class ReportSeatRequest(_message.Message):
    __slots__ = ("seat", "stats")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    seat: SeatRef
    stats: SeatStats
    def __init__(self, seat: _Optional[_Union[SeatRef, _Mapping]] = ..., stats: _Optional[_Union[SeatStats, _Mapping]] = ...) -> None: ...

class ReportSeatResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MintRunnerTokenRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class MintRunnerTokenResponse(_message.Message):
    __slots__ = ("runner_token",)
    RUNNER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    runner_token: str
    def __init__(self, runner_token: _Optional[str] = ...) -> None: ...
