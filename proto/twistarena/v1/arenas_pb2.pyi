import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from twistarena.v1 import matchmaking_pb2 as _matchmaking_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ArenaStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ARENA_STATUS_UNSPECIFIED: _ClassVar[ArenaStatus]
    ARENA_STATUS_RUNNING: _ClassVar[ArenaStatus]
    ARENA_STATUS_PAUSED: _ClassVar[ArenaStatus]
    ARENA_STATUS_CLOSED: _ClassVar[ArenaStatus]
ARENA_STATUS_UNSPECIFIED: ArenaStatus
ARENA_STATUS_RUNNING: ArenaStatus
ARENA_STATUS_PAUSED: ArenaStatus
ARENA_STATUS_CLOSED: ArenaStatus

class HouseAnchor(_message.Message):
    __slots__ = ("bot", "mu", "sigma")
    BOT_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    bot: str
    mu: float
    sigma: float
    def __init__(self, bot: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ...) -> None: ...

class Arena(_message.Message):
    __slots__ = ("arena_id", "game_id", "num_players", "house_bots", "matches_per_minute", "max_concurrent_per_agent", "status", "matches_played", "players", "enrolled", "created_at", "driver", "anchors")
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOTS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_PER_AGENT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_PLAYED_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ENROLLED_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    ANCHORS_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    game_id: str
    num_players: int
    house_bots: _containers.RepeatedScalarFieldContainer[str]
    matches_per_minute: int
    max_concurrent_per_agent: int
    status: ArenaStatus
    matches_played: int
    players: int
    enrolled: int
    created_at: _timestamp_pb2.Timestamp
    driver: str
    anchors: _containers.RepeatedCompositeFieldContainer[HouseAnchor]
    def __init__(self, arena_id: _Optional[str] = ..., game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., house_bots: _Optional[_Iterable[str]] = ..., matches_per_minute: _Optional[int] = ..., max_concurrent_per_agent: _Optional[int] = ..., status: _Optional[_Union[ArenaStatus, str]] = ..., matches_played: _Optional[int] = ..., players: _Optional[int] = ..., enrolled: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., driver: _Optional[str] = ..., anchors: _Optional[_Iterable[_Union[HouseAnchor, _Mapping]]] = ...) -> None: ...

class CreateArenaRequest(_message.Message):
    __slots__ = ("game_id", "num_players", "house_bots", "matches_per_minute", "max_concurrent_per_agent")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOTS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_PER_AGENT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    num_players: int
    house_bots: _containers.RepeatedScalarFieldContainer[str]
    matches_per_minute: int
    max_concurrent_per_agent: int
    def __init__(self, game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., house_bots: _Optional[_Iterable[str]] = ..., matches_per_minute: _Optional[int] = ..., max_concurrent_per_agent: _Optional[int] = ...) -> None: ...

class ListArenasRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListArenasResponse(_message.Message):
    __slots__ = ("arenas",)
    ARENAS_FIELD_NUMBER: _ClassVar[int]
    arenas: _containers.RepeatedCompositeFieldContainer[Arena]
    def __init__(self, arenas: _Optional[_Iterable[_Union[Arena, _Mapping]]] = ...) -> None: ...

class GetArenaRequest(_message.Message):
    __slots__ = ("arena_id",)
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    def __init__(self, arena_id: _Optional[str] = ...) -> None: ...

class EnrollAgentRequest(_message.Message):
    __slots__ = ("arena_id", "agent_id", "withdraw")
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    WITHDRAW_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    agent_id: str
    withdraw: bool
    def __init__(self, arena_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., withdraw: _Optional[bool] = ...) -> None: ...

class EnrollAgentResponse(_message.Message):
    __slots__ = ("arena", "enrolled", "agents", "warning", "agent_id")
    ARENA_FIELD_NUMBER: _ClassVar[int]
    ENROLLED_FIELD_NUMBER: _ClassVar[int]
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    WARNING_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    arena: Arena
    enrolled: bool
    agents: int
    warning: str
    agent_id: str
    def __init__(self, arena: _Optional[_Union[Arena, _Mapping]] = ..., enrolled: _Optional[bool] = ..., agents: _Optional[int] = ..., warning: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class UpdateArenaRequest(_message.Message):
    __slots__ = ("arena_id", "set_house_bots", "house_bots", "matches_per_minute", "max_concurrent_per_agent")
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    SET_HOUSE_BOTS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOTS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_PER_MINUTE_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_PER_AGENT_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    set_house_bots: bool
    house_bots: _containers.RepeatedScalarFieldContainer[str]
    matches_per_minute: int
    max_concurrent_per_agent: int
    def __init__(self, arena_id: _Optional[str] = ..., set_house_bots: _Optional[bool] = ..., house_bots: _Optional[_Iterable[str]] = ..., matches_per_minute: _Optional[int] = ..., max_concurrent_per_agent: _Optional[int] = ...) -> None: ...

class CloseArenaRequest(_message.Message):
    __slots__ = ("arena_id",)
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    def __init__(self, arena_id: _Optional[str] = ...) -> None: ...

class SetArenaPausedRequest(_message.Message):
    __slots__ = ("arena_id", "paused")
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    paused: bool
    def __init__(self, arena_id: _Optional[str] = ..., paused: _Optional[bool] = ...) -> None: ...

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("arena_id", "page_size", "page_token")
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    arena_id: str
    page_size: int
    page_token: str
    def __init__(self, arena_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class LeaderboardRow(_message.Message):
    __slots__ = ("rank", "agent_id", "name", "version", "conservative", "mu", "sigma", "games", "wins", "win_share", "last_match_id", "last_match_at", "house")
    RANK_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    CONSERVATIVE_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    WIN_SHARE_FIELD_NUMBER: _ClassVar[int]
    LAST_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_MATCH_AT_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    agent_id: str
    name: str
    version: int
    conservative: float
    mu: float
    sigma: float
    games: int
    wins: int
    win_share: float
    last_match_id: str
    last_match_at: _timestamp_pb2.Timestamp
    house: bool
    def __init__(self, rank: _Optional[int] = ..., agent_id: _Optional[str] = ..., name: _Optional[str] = ..., version: _Optional[int] = ..., conservative: _Optional[float] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., games: _Optional[int] = ..., wins: _Optional[int] = ..., win_share: _Optional[float] = ..., last_match_id: _Optional[str] = ..., last_match_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., house: _Optional[bool] = ...) -> None: ...

class Leaderboard(_message.Message):
    __slots__ = ("arena", "rows", "next_page_token", "history")
    ARENA_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    arena: Arena
    rows: _containers.RepeatedCompositeFieldContainer[LeaderboardRow]
    next_page_token: str
    history: _containers.RepeatedCompositeFieldContainer[_matchmaking_pb2.RatingHistory]
    def __init__(self, arena: _Optional[_Union[Arena, _Mapping]] = ..., rows: _Optional[_Iterable[_Union[LeaderboardRow, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., history: _Optional[_Iterable[_Union[_matchmaking_pb2.RatingHistory, _Mapping]]] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "name_contains", "arena_id")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NAME_CONTAINS_FIELD_NUMBER: _ClassVar[int]
    ARENA_ID_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    name_contains: str
    arena_id: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., name_contains: _Optional[str] = ..., arena_id: _Optional[str] = ...) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents", "next_page_token")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[_matchmaking_pb2.AgentInfo]
    next_page_token: str
    def __init__(self, agents: _Optional[_Iterable[_Union[_matchmaking_pb2.AgentInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
