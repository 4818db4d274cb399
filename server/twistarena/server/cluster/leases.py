"""Keeping this node's match leases, and stopping at once when one is lost.

A lease (``{m:<id>}:owner``, see ``twistarena.storage.leases``) is valid
until a time of the Redis server's clock. One pipeline per heartbeat renews
every lease of the node; a lease the node could not renew is given up locally
lease - lease/10 after the renewal that last succeeded was *sent*, so the node
stops before Redis lets anyone else claim; a watchdog checks every 50 ms, and
every write of a referee asks first (``vouch``): a node that was paused past its
leases would otherwise send the writes its agents queued meanwhile before its
watchdog woke (the store fences them, but the node would not know why).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence

from twistarena.storage import Renewal, Store, StoreError

from .. import logs, metrics
from ..match.hub import Hub
from ..match.referee import MatchReferee
from .membership import Membership

log = logs.get("twistarena.cluster")

WATCHDOG_S = 0.05


class LeaseKeeper:
    """Renews this node's leases with each heartbeat and stops referees that lost theirs."""

    def __init__(self, store: Store, hub: Hub, membership: Membership,
                 load: Callable[[], int]) -> None:
        self.store = store
        self.hub = hub
        self.membership = membership
        self.load = load
        self.margin_s = membership.lease_s / 10
        #: match id -> (lease token, loop-monotonic time until which it is ours)
        self.valid: dict[str, tuple[str, float]] = {}
        #: When the latest heartbeat that the store answered was sent (monotonic).
        self.beat_sent = time.monotonic()

    def good_until(self, sent: float) -> float:
        """Until when a lease granted or renewed by a call sent at ``sent`` is ours."""
        return sent + self.membership.lease_s - self.margin_s

    @property
    def beating(self) -> bool:
        """Whether a heartbeat got through recently enough that this node's leases
        hold (else they are lapsing: the node is cut from its store)."""
        return time.monotonic() <= self.good_until(self.beat_sent)

    def hold(self, match_id: str, token: str, sent: float) -> None:
        """Note a lease granted to a call sent at ``sent``: valid until ``good_until(sent)``."""
        self.valid[match_id] = (token, self.good_until(sent))

    def vouch(self, referee: MatchReferee) -> bool:
        """Whether this node may still write for ``referee``; when its lease lapsed
        (and the watchdog has not yet looked) the referee is stopped here."""
        held = self.valid.get(referee.match_id)
        if held is None or held[0] != referee.owner or time.monotonic() <= held[1]:
            return True
        self.lose([referee], "lease not renewed in time")
        return False

    def fenced(self, referee: MatchReferee) -> None:
        """The store refused a write of ``referee``: its lease is another node's.
        Stopped with a redirect (the store, which just answered, names the owner)."""
        self.lose([referee], "the store fenced a write", redirect=True)

    async def beat(self) -> None:
        """Heartbeat and renew every lease of this node: one pipeline."""
        m = self.membership
        referees = list(self.hub.referees.values())
        sent = time.monotonic()
        wall_ms = time.time() * 1000
        beat, renewed = await self.store.nodes.heartbeat_and_renew(
            m.ttl_ms, self.load(), m.leaving, [Renewal(r.match_id, r.owner) for r in referees])
        rtt_ms = (time.monotonic() - sent) * 1000
        if not isinstance(beat, StoreError):
            m.learn(beat, wall_ms + rtt_ms / 2)
            self.beat_sent = sent
        expiries: dict[str, int] = {}
        lost: list[MatchReferee] = []
        good_until = self.good_until(sent)
        for referee, res in zip(referees, renewed, strict=True):
            if isinstance(res, StoreError):
                continue
            if res > 0:
                if self.hub.get(referee.match_id) is referee and not referee.over:
                    self.valid[referee.match_id] = (referee.owner, good_until)
                    expiries[referee.match_id] = res
            elif self.hub.get(referee.match_id) is referee:
                lost.append(referee)
        await self.store.nodes.note_expiries(expiries)
        if lost:
            self.lose(lost, "renewal refused")

    async def beat_loop(self) -> None:
        """Heartbeat every beat until cancelled; a failed beat is counted and
        retried, never fatal."""
        while True:
            started = time.monotonic()
            try:
                await self.beat()
            except StoreError as exc:
                metrics.ERRORS.labels("heartbeat").inc()
                log.warning("heartbeat_failed", error=repr(exc))
            except Exception as exc:  # keep beating whatever happened
                metrics.ERRORS.labels("heartbeat").inc()
                log.error("heartbeat_failed", error=repr(exc))
            await asyncio.sleep(max(0.0, self.membership.beat_s
                                    - (time.monotonic() - started)))

    async def watchdog(self) -> None:
        """Stop every referee whose lease was not renewed in time."""
        while True:
            await asyncio.sleep(WATCHDOG_S)
            now = time.monotonic()
            expired: list[MatchReferee] = []
            for mid, (token, until) in list(self.valid.items()):
                referee = self.hub.get(mid)
                if referee is None or referee.owner != token:
                    self.valid.pop(mid, None)
                elif now > until:
                    expired.append(referee)
            if expired:
                self.lose(expired, "lease not renewed in time")

    def lose(self, referees: Sequence[MatchReferee], why: str, redirect: bool = False) -> None:
        """Stop the referees whose leases this node can no longer vouch for (another
        node may own them now). Without a redirect by default: at once, and without
        naming an owner this node cannot know."""
        for referee in referees:
            self.valid.pop(referee.match_id, None)
            if self.hub.get(referee.match_id) is referee:
                referee.stop_not_owner(redirect)
        metrics.ERRORS.labels("lease_lost").inc(len(referees))
        log.warning("leases_lost", why=why, matches=len(referees),
                    match_ids=[r.match_id for r in referees[:20]])
