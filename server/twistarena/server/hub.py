"""The node's live matches and what their runners share: the store, the node's
caps on a match's length, its store-loss policy and memory, the archive.

Kept apart from the runner so that the parts that only look runners up
(cluster, services, disclosure) do not depend on how a match is run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from twistarena.storage import Store

from . import metrics
from .archive import Archive
from .losses import AckMemory, LossPolicy

if TYPE_CHECKING:
    from .runner import MatchRunner


class LeaseGuard(Protocol):
    """What a runner asks about its match's lease; the cluster's lease keeper answers."""

    def vouch(self, runner: MatchRunner) -> bool:
        """Before every write: may this node still write for ``runner``? (False: the
        lease lapsed, and the runner was stopped.)"""

    def fenced(self, runner: MatchRunner) -> None:
        """The store refused a write of ``runner``: another node owns the match now."""


class Hub:
    """The runners of this node and what they share."""

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
        self.archive: Archive | None = None
        self.runners: dict[str, MatchRunner] = {}
        self.draining = False
        #: The cluster's lease keeper, set when the node joins its cluster.
        self.leases: LeaseGuard = _Unguarded()

    def get(self, match_id: str) -> MatchRunner | None:
        """The runner of ``match_id`` if this node runs it."""
        return self.runners.get(match_id)

    def add(self, runner: MatchRunner) -> None:
        """Count ``runner`` among this node's live matches."""
        self.runners[runner.match_id] = runner
        metrics.LIVE_MATCHES.set(len(self.runners))

    def forget(self, runner: MatchRunner) -> None:
        """``runner`` no longer runs here (its match ended, or moved to another node)."""
        if self.runners.get(runner.match_id) is runner:
            del self.runners[runner.match_id]
            self.store.appender.forget(runner.match_id)
        metrics.LIVE_MATCHES.set(len(self.runners))


class _Unguarded:
    """Before the node joins its cluster: only the store's fencing guards writes."""

    def vouch(self, runner: MatchRunner) -> bool:
        return True

    def fenced(self, runner: MatchRunner) -> None:
        runner.stop_not_owner(redirect=True)
