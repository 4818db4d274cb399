"""The node's live matches and what their referees share: the store, the node's
caps on a match's length, its store-loss policy and memory, the export of finished matches.

Kept apart from the referee so that the parts that only look referees up
(cluster, services, disclosure) do not depend on how a match is run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from twistarena.storage import Store

from .. import metrics
from .export import MatchExport
from .losses import AckMemory, LossPolicy

if TYPE_CHECKING:
    from .referee import MatchReferee


class LeaseGuard(Protocol):
    """What a referee asks about its match's lease; the cluster's lease keeper answers."""

    def vouch(self, referee: MatchReferee) -> bool:
        """Before every write: may this node still write for ``referee``? (False: the
        lease lapsed, and the referee was stopped.)"""

    def fenced(self, referee: MatchReferee) -> None:
        """The store refused a write of ``referee``: another node owns the match now."""


class Hub:
    """The referees of this node and what they share."""

    def __init__(self, store: Store, node_id: str, waiting_timeout_s: float = 0.0,
                 max_match_decisions: int = 0, max_match_s: float = 0.0,
                 on_store_loss: LossPolicy = LossPolicy.REWIND) -> None:
        self.store = store
        self.node_id = node_id
        #: A match not started this long after its creation is abandoned (0: never).
        self.waiting_timeout_s = waiting_timeout_s
        #: Caps on a match's length, whatever its options (0: none): it ends with
        #: END_REASON_LENGTH_LIMIT after this many actions, or this long after
        #: its creation.
        self.max_match_decisions = max_match_decisions
        self.max_match_s = max_match_s
        self.on_store_loss = on_store_loss
        self.acknowledged = AckMemory()
        #: Where finished matches are written (serve --archive-dir), if anywhere.
        self.export: MatchExport | None = None
        self.referees: dict[str, MatchReferee] = {}
        self.draining = False
        #: The cluster's lease keeper, set when the node joins its cluster.
        self.leases: LeaseGuard = _Unguarded()

    def get(self, match_id: str) -> MatchReferee | None:
        """The referee of ``match_id`` if this node runs it."""
        return self.referees.get(match_id)

    def add(self, referee: MatchReferee) -> None:
        """Count ``referee`` among this node's live matches."""
        self.referees[referee.match_id] = referee
        metrics.LIVE_MATCHES.set(len(self.referees))

    def forget(self, referee: MatchReferee) -> None:
        """``referee`` no longer runs here (its match ended, or moved to another node)."""
        if self.referees.get(referee.match_id) is referee:
            del self.referees[referee.match_id]
            self.store.appender.forget(referee.match_id)
        metrics.LIVE_MATCHES.set(len(self.referees))


class _Unguarded:
    """Before the node joins its cluster: only the store's fencing guards writes."""

    def vouch(self, referee: MatchReferee) -> bool:
        return True

    def fenced(self, referee: MatchReferee) -> None:
        referee.stop_not_owner(redirect=True)
