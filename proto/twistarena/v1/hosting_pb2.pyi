from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubmitVersionChunk(_message.Message):
    __slots__ = ("manifest", "data")
    MANIFEST_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    manifest: VersionManifest
    data: bytes
    def __init__(self, manifest: _Optional[_Union[VersionManifest, _Mapping]] = ..., data: _Optional[bytes] = ...) -> None: ...

class VersionManifest(_message.Message):
    __slots__ = ("entry", "build", "build_log", "size", "activate")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    BUILD_FIELD_NUMBER: _ClassVar[int]
    BUILD_LOG_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    ACTIVATE_FIELD_NUMBER: _ClassVar[int]
    entry: str
    build: str
    build_log: str
    size: int
    activate: bool
    def __init__(self, entry: _Optional[str] = ..., build: _Optional[str] = ..., build_log: _Optional[str] = ..., size: _Optional[int] = ..., activate: _Optional[bool] = ...) -> None: ...

class SubmitVersionResponse(_message.Message):
    __slots__ = ("version", "created")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    version: VersionInfo
    created: bool
    def __init__(self, version: _Optional[_Union[VersionInfo, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class ListVersionsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListVersionsResponse(_message.Message):
    __slots__ = ("agent_id", "versions")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    versions: _containers.RepeatedCompositeFieldContainer[VersionInfo]
    def __init__(self, agent_id: _Optional[str] = ..., versions: _Optional[_Iterable[_Union[VersionInfo, _Mapping]]] = ...) -> None: ...

class ActivateVersionRequest(_message.Message):
    __slots__ = ("version_id",)
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    def __init__(self, version_id: _Optional[str] = ...) -> None: ...

class ActivateVersionResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: VersionInfo
    def __init__(self, version: _Optional[_Union[VersionInfo, _Mapping]] = ...) -> None: ...

class DeleteVersionRequest(_message.Message):
    __slots__ = ("version_id",)
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    def __init__(self, version_id: _Optional[str] = ...) -> None: ...

class DeleteVersionResponse(_message.Message):
    __slots__ = ("version_id", "size", "archive_freed")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_FREED_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    size: int
    archive_freed: int
    def __init__(self, version_id: _Optional[str] = ..., size: _Optional[int] = ..., archive_freed: _Optional[int] = ...) -> None: ...

class GetAgentDetailsRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class AgentDetails(_message.Message):
    __slots__ = ("agent_id", "name", "mu", "sigma", "matches", "active_version_id", "versions", "owner")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    name: str
    mu: float
    sigma: float
    matches: int
    active_version_id: str
    versions: _containers.RepeatedCompositeFieldContainer[VersionInfo]
    owner: bool
    def __init__(self, agent_id: _Optional[str] = ..., name: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., matches: _Optional[int] = ..., active_version_id: _Optional[str] = ..., versions: _Optional[_Iterable[_Union[VersionInfo, _Mapping]]] = ..., owner: _Optional[bool] = ...) -> None: ...

class VersionInfo(_message.Message):
    __slots__ = ("version_id", "content_hash", "entry", "build", "size", "unpacked_size", "files", "created_ms", "active", "stats", "build_log")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    BUILD_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    UNPACKED_SIZE_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    CREATED_MS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    BUILD_LOG_FIELD_NUMBER: _ClassVar[int]
    version_id: str
    content_hash: str
    entry: str
    build: str
    size: int
    unpacked_size: int
    files: int
    created_ms: int
    active: bool
    stats: VersionStats
    build_log: str
    def __init__(self, version_id: _Optional[str] = ..., content_hash: _Optional[str] = ..., entry: _Optional[str] = ..., build: _Optional[str] = ..., size: _Optional[int] = ..., unpacked_size: _Optional[int] = ..., files: _Optional[int] = ..., created_ms: _Optional[int] = ..., active: _Optional[bool] = ..., stats: _Optional[_Union[VersionStats, _Mapping]] = ..., build_log: _Optional[str] = ...) -> None: ...

class VersionStats(_message.Message):
    __slots__ = ("matches", "decisions", "crashes", "timeouts", "illegal_outputs", "restarts", "cpu_ms_mean", "cpu_ms_max", "failures")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    CRASHES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    CPU_MS_MEAN_FIELD_NUMBER: _ClassVar[int]
    CPU_MS_MAX_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    matches: int
    decisions: int
    crashes: int
    timeouts: int
    illegal_outputs: int
    restarts: int
    cpu_ms_mean: float
    cpu_ms_max: float
    failures: _containers.RepeatedCompositeFieldContainer[VersionFailure]
    def __init__(self, matches: _Optional[int] = ..., decisions: _Optional[int] = ..., crashes: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal_outputs: _Optional[int] = ..., restarts: _Optional[int] = ..., cpu_ms_mean: _Optional[float] = ..., cpu_ms_max: _Optional[float] = ..., failures: _Optional[_Iterable[_Union[VersionFailure, _Mapping]]] = ...) -> None: ...

class VersionFailure(_message.Message):
    __slots__ = ("match_id", "at_ms", "crashes", "timeouts", "illegal_outputs", "restarts", "stderr_tail", "seat", "step", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    AT_MS_FIELD_NUMBER: _ClassVar[int]
    CRASHES_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    STDERR_TAIL_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    at_ms: int
    crashes: int
    timeouts: int
    illegal_outputs: int
    restarts: int
    stderr_tail: str
    seat: int
    step: int
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., at_ms: _Optional[int] = ..., crashes: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal_outputs: _Optional[int] = ..., restarts: _Optional[int] = ..., stderr_tail: _Optional[str] = ..., seat: _Optional[int] = ..., step: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class GetSeatLogsRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class SeatLogs(_message.Message):
    __slots__ = ("match_id", "seats")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatLog]
    def __init__(self, match_id: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatLog, _Mapping]]] = ...) -> None: ...

class SeatLog(_message.Message):
    __slots__ = ("seat", "version_id", "steps")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    version_id: str
    steps: _containers.RepeatedCompositeFieldContainer[StepLog]
    def __init__(self, seat: _Optional[int] = ..., version_id: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[StepLog, _Mapping]]] = ...) -> None: ...

class StepLog(_message.Message):
    __slots__ = ("step", "text", "failure", "why")
    STEP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    step: int
    text: str
    failure: str
    why: str
    def __init__(self, step: _Optional[int] = ..., text: _Optional[str] = ..., failure: _Optional[str] = ..., why: _Optional[str] = ...) -> None: ...
