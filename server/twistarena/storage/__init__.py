"""Everything twistarena keeps in Redis/Valkey, behind typed methods.

The only package that talks to Redis: it owns every key (``keys``), every Lua
script (``lua/*.lua``, registered by ``scripts``), the one lease mechanism
(``leases``), the connections (``connection``: which commands take the lean
path, ``resp``) and the domain errors (``errors``). It imports the contract
and the Redis libraries, nothing else of twistarena.
"""

from .agents import AgentRecord, QueueHold
from .durability import Durability
from .errors import (
    EndStored,
    FencedError,
    LogConflict,
    NotDurableError,
    StoreError,
    TransientStoreError,
)
from .leases import Grant, Handoff, Holder, LeaseState
from .matches import LogEntry, MatchRecord
from .nodes import Beat, NodeInfo, Renewal
from .store import Store
from .tournaments import TournamentRecord
from .versions import FailureRecord, MatchReport, VersionRecord, VersionStats, version_id

__all__ = [
    "AgentRecord",
    "Beat",
    "Durability",
    "EndStored",
    "FailureRecord",
    "FencedError",
    "Grant",
    "Handoff",
    "Holder",
    "LeaseState",
    "LogConflict",
    "LogEntry",
    "MatchRecord",
    "MatchReport",
    "NodeInfo",
    "NotDurableError",
    "QueueHold",
    "Renewal",
    "Store",
    "StoreError",
    "TournamentRecord",
    "TransientStoreError",
    "VersionRecord",
    "VersionStats",
    "version_id",
]
