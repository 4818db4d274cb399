import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from twistarena.v1 import match_pb2 as _match_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TournamentFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_FORMAT_UNSPECIFIED: _ClassVar[TournamentFormat]
    ROUND_ROBIN: _ClassVar[TournamentFormat]
    SWISS: _ClassVar[TournamentFormat]
    GAUNTLET: _ClassVar[TournamentFormat]

class TournamentStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_STATUS_UNSPECIFIED: _ClassVar[TournamentStatus]
    TOURNAMENT_RUNNING: _ClassVar[TournamentStatus]
    TOURNAMENT_FINISHED: _ClassVar[TournamentStatus]
    TOURNAMENT_CANCELLED: _ClassVar[TournamentStatus]
TOURNAMENT_FORMAT_UNSPECIFIED: TournamentFormat
ROUND_ROBIN: TournamentFormat
SWISS: TournamentFormat
GAUNTLET: TournamentFormat
TOURNAMENT_STATUS_UNSPECIFIED: TournamentStatus
TOURNAMENT_RUNNING: TournamentStatus
TOURNAMENT_FINISHED: TournamentStatus
TOURNAMENT_CANCELLED: TournamentStatus

class TournamentSpec(_message.Message):
    __slots__ = ("game_id", "num_players", "format", "rounds", "games_per_pairing", "duplicate_deals", "entrants", "seed", "time_control", "game_options", "parallel")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    GAMES_PER_PAIRING_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_DEALS_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    GAME_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PARALLEL_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    num_players: int
    format: TournamentFormat
    rounds: int
    games_per_pairing: int
    duplicate_deals: bool
    entrants: _containers.RepeatedScalarFieldContainer[str]
    seed: int
    time_control: _match_pb2.TimeControl
    game_options: _struct_pb2.Struct
    parallel: int
    def __init__(self, game_id: _Optional[str] = ..., num_players: _Optional[int] = ..., format: _Optional[_Union[TournamentFormat, str]] = ..., rounds: _Optional[int] = ..., games_per_pairing: _Optional[int] = ..., duplicate_deals: _Optional[bool] = ..., entrants: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ..., time_control: _Optional[_Union[_match_pb2.TimeControl, _Mapping]] = ..., game_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., parallel: _Optional[int] = ...) -> None: ...

class TournamentGame(_message.Message):
    __slots__ = ("round", "table", "deal", "seed", "seats", "match_id", "scores", "places")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    DEAL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    round: int
    table: int
    deal: int
    seed: int
    seats: _containers.RepeatedScalarFieldContainer[str]
    match_id: str
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, round: _Optional[int] = ..., table: _Optional[int] = ..., deal: _Optional[int] = ..., seed: _Optional[int] = ..., seats: _Optional[_Iterable[str]] = ..., match_id: _Optional[str] = ..., scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ...) -> None: ...

class StandingRow(_message.Message):
    __slots__ = ("entrant", "games", "wins", "win_share", "win_ci_low", "win_ci_high", "mean_score", "score_ci_low", "score_ci_high", "mean_place", "mu", "sigma", "conservative")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    WIN_SHARE_FIELD_NUMBER: _ClassVar[int]
    WIN_CI_LOW_FIELD_NUMBER: _ClassVar[int]
    WIN_CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    SCORE_CI_LOW_FIELD_NUMBER: _ClassVar[int]
    SCORE_CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    MEAN_PLACE_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    CONSERVATIVE_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    games: int
    wins: float
    win_share: float
    win_ci_low: float
    win_ci_high: float
    mean_score: float
    score_ci_low: float
    score_ci_high: float
    mean_place: float
    mu: float
    sigma: float
    conservative: float
    def __init__(self, entrant: _Optional[str] = ..., games: _Optional[int] = ..., wins: _Optional[float] = ..., win_share: _Optional[float] = ..., win_ci_low: _Optional[float] = ..., win_ci_high: _Optional[float] = ..., mean_score: _Optional[float] = ..., score_ci_low: _Optional[float] = ..., score_ci_high: _Optional[float] = ..., mean_place: _Optional[float] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., conservative: _Optional[float] = ...) -> None: ...

class Tournament(_message.Message):
    __slots__ = ("tournament_id", "spec", "status", "games_planned", "games_done", "standings", "games", "created_at", "detail", "driver")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    GAMES_PLANNED_FIELD_NUMBER: _ClassVar[int]
    GAMES_DONE_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    spec: TournamentSpec
    status: TournamentStatus
    games_planned: int
    games_done: int
    standings: _containers.RepeatedCompositeFieldContainer[StandingRow]
    games: _containers.RepeatedCompositeFieldContainer[TournamentGame]
    created_at: _timestamp_pb2.Timestamp
    detail: str
    driver: str
    def __init__(self, tournament_id: _Optional[str] = ..., spec: _Optional[_Union[TournamentSpec, _Mapping]] = ..., status: _Optional[_Union[TournamentStatus, str]] = ..., games_planned: _Optional[int] = ..., games_done: _Optional[int] = ..., standings: _Optional[_Iterable[_Union[StandingRow, _Mapping]]] = ..., games: _Optional[_Iterable[_Union[TournamentGame, _Mapping]]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., detail: _Optional[str] = ..., driver: _Optional[str] = ...) -> None: ...

class CreateTournamentRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: TournamentSpec
    def __init__(self, spec: _Optional[_Union[TournamentSpec, _Mapping]] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ("page_size",)
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    def __init__(self, page_size: _Optional[int] = ...) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments",)
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[Tournament]
    def __init__(self, tournaments: _Optional[_Iterable[_Union[Tournament, _Mapping]]] = ...) -> None: ...

class WatchTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("tournament_id", "reason")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    reason: str
    def __init__(self, tournament_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...
