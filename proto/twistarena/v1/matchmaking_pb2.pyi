import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from twistarena.v1 import match_pb2 as _match_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RegisterAgentRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RegisterAgentResponse(_message.Message):
    __slots__ = ("agent_id", "api_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    API_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    api_token: str
    def __init__(self, agent_id: _Optional[str] = ..., api_token: _Optional[str] = ...) -> None: ...

class QueueRequest(_message.Message):
    __slots__ = ("game_id", "num_players", "house_fill_after_ms", "house_bot", "tournament_only", "tournament_id", "hosted")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FILL_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOT_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ONLY_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    HOSTED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    num_players: int
    house_fill_after_ms: int
    house_bot: str
    tournament_only: bool
    tournament_id: str
    hosted: bool
    def __init__(self, game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., house_fill_after_ms: _Optional[int] = ..., house_bot: _Optional[str] = ..., tournament_only: _Optional[bool] = ..., tournament_id: _Optional[str] = ..., hosted: _Optional[bool] = ...) -> None: ...

class QueueUpdate(_message.Message):
    __slots__ = ("status", "assigned", "tournament_over")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ASSIGNED_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_OVER_FIELD_NUMBER: _ClassVar[int]
    status: QueueStatus
    assigned: MatchAssigned
    tournament_over: TournamentOver
    def __init__(self, status: _Optional[_Union[QueueStatus, _Mapping]] = ..., assigned: _Optional[_Union[MatchAssigned, _Mapping]] = ..., tournament_over: _Optional[_Union[TournamentOver, _Mapping]] = ...) -> None: ...

class TournamentOver(_message.Message):
    __slots__ = ("tournament_id", "status", "detail")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    status: str
    detail: str
    def __init__(self, tournament_id: _Optional[str] = ..., status: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class QueueStatus(_message.Message):
    __slots__ = ("waiting", "waited_ms", "detail")
    WAITING_FIELD_NUMBER: _ClassVar[int]
    WAITED_MS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    waiting: int
    waited_ms: int
    detail: str
    def __init__(self, waiting: _Optional[int] = ..., waited_ms: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class MatchAssigned(_message.Message):
    __slots__ = ("match_id", "seat", "seat_token", "server_address", "game_id", "num_players", "tournament_id")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seat_token: str
    server_address: str
    game_id: str
    num_players: int
    tournament_id: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., server_address: _Optional[str] = ..., game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., tournament_id: _Optional[str] = ...) -> None: ...

class PracticeRequest(_message.Message):
    __slots__ = ("game_id", "num_players", "strength", "seed", "time_control", "hosted")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    STRENGTH_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    HOSTED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    num_players: int
    strength: str
    seed: int
    time_control: _match_pb2.TimeControl
    hosted: bool
    def __init__(self, game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., strength: _Optional[str] = ..., seed: _Optional[int] = ..., time_control: _Optional[_Union[_match_pb2.TimeControl, _Mapping]] = ..., hosted: _Optional[bool] = ...) -> None: ...

class PracticeResponse(_message.Message):
    __slots__ = ("match", "seat", "seat_token", "server_address")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SERVER_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    match: _match_pb2.Match
    seat: int
    seat_token: str
    server_address: str
    def __init__(self, match: _Optional[_Union[_match_pb2.Match, _Mapping]] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., server_address: _Optional[str] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class AgentInfo(_message.Message):
    __slots__ = ("agent_id", "name", "mu", "sigma", "matches", "arena_ratings", "recent_match_ids", "errors", "timeouts", "enrolled_arenas", "rating_arena_id", "rating_version", "recent_matches")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    ARENA_RATINGS_FIELD_NUMBER: _ClassVar[int]
    RECENT_MATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ENROLLED_ARENAS_FIELD_NUMBER: _ClassVar[int]
    RATING_ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    RATING_VERSION_FIELD_NUMBER: _ClassVar[int]
    RECENT_MATCHES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    name: str
    mu: float
    sigma: float
    matches: int
    arena_ratings: _containers.RepeatedCompositeFieldContainer[ArenaRating]
    recent_match_ids: _containers.RepeatedScalarFieldContainer[str]
    errors: int
    timeouts: int
    enrolled_arenas: _containers.RepeatedScalarFieldContainer[str]
    rating_arena_id: str
    rating_version: int
    recent_matches: _containers.RepeatedCompositeFieldContainer[RecentMatch]
    def __init__(self, agent_id: _Optional[str] = ..., name: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., matches: _Optional[int] = ..., arena_ratings: _Optional[_Iterable[_Union[ArenaRating, _Mapping]]] = ..., recent_match_ids: _Optional[_Iterable[str]] = ..., errors: _Optional[int] = ..., timeouts: _Optional[int] = ..., enrolled_arenas: _Optional[_Iterable[str]] = ..., rating_arena_id: _Optional[str] = ..., rating_version: _Optional[int] = ..., recent_matches: _Optional[_Iterable[_Union[RecentMatch, _Mapping]]] = ...) -> None: ...

class RecentMatch(_message.Message):
    __slots__ = ("match_id", "arena_id", "place", "score", "ended_at", "opponents", "version")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    PLACE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    OPPONENTS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    arena_id: str
    place: int
    score: float
    ended_at: _timestamp_pb2.Timestamp
    opponents: _containers.RepeatedScalarFieldContainer[str]
    version: int
    def __init__(self, match_id: _Optional[str] = ..., arena_id: _Optional[str] = ..., place: _Optional[int] = ..., score: _Optional[float] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., opponents: _Optional[_Iterable[str]] = ..., version: _Optional[int] = ...) -> None: ...

class ArenaRating(_message.Message):
    __slots__ = ("arena_id", "version", "mu", "sigma", "games", "wins", "history", "current")
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    version: int
    mu: float
    sigma: float
    games: int
    wins: int
    history: _containers.RepeatedCompositeFieldContainer[RatingPoint]
    current: bool
    def __init__(self, arena_id: _Optional[str] = ..., version: _Optional[int] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ..., history: _Optional[_Iterable[_Union[RatingPoint, _Mapping]]] = ..., current: _Optional[bool] = ...) -> None: ...

class RatingPoint(_message.Message):
    __slots__ = ("mu", "sigma", "match_id", "ended_ms")
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ENDED_MS_FIELD_NUMBER: _ClassVar[int]
    mu: float
    sigma: float
    match_id: str
    ended_ms: int
    def __init__(self, mu: _Optional[float] = ..., sigma: _Optional[float] = ..., match_id: _Optional[str] = ..., ended_ms: _Optional[int] = ...) -> None: ...

class RatingHistory(_message.Message):
    __slots__ = ("agent_id", "version", "points")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: int
    points: _containers.RepeatedCompositeFieldContainer[RatingPoint]
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[int] = ..., points: _Optional[_Iterable[_Union[RatingPoint, _Mapping]]] = ...) -> None: ...
