"""Many nodes over one store: membership, leases, placement, claims, drain, routing.

Each job has its module:

``membership``  heartbeats, the live nodes, the offset to Redis TIME
``leases``      renewing this node's match leases, the watchdog that stops a
                referee whose lease was not renewed in time
``placement``   which node should own a match (rendezvous hashing)
``claims``      taking matches: inbox handoffs, expired leases, recovery, on demand
``drain``       handing every match over when the node stops
``routing``     what the servicers answer for a match run elsewhere

``Cluster`` wires them together for one node and is what the app and the
servicers are given (explicitly: there is no lookup by hub). The keys and
scripts behind all this live in ``twistarena.storage`` (``nodes``, ``leases``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import NamedTuple

from twistarena.engine import State
from twistarena.storage import FencedError, Grant, MatchRecord, Store, StoreError
from twistarena.v1 import match_pb2 as mpb

from .. import logs
from ..loops import stop_loops
from ..match.hub import Hub
from ..match.records import match_proto
from ..match.referee import MatchReferee
from .claims import Claims
from .drain import hand_off
from .leases import LeaseKeeper
from .membership import Membership
from .placement import Placement

log = logs.get("twistarena.cluster")


class Cluster:
    """This node's membership, its leases, and where every match should run."""

    def __init__(self, store: Store, hub: Hub) -> None:
        self.store = store
        self.hub = hub
        self.membership = Membership(store)
        self.node_id = self.membership.node_id
        self.placement = Placement(self.membership)
        self.keeper = LeaseKeeper(store, hub, self.membership, self.load)
        hub.leases = self.keeper
        self.claims = Claims(store, hub, self.membership, self.placement, self.keeper)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: Set by the store watcher: False while the node's health is NOT_SERVING.
        self.store_reachable = True

    def load(self) -> int:
        """Matches this node runs or is opening (sent with each heartbeat)."""
        return len(self.hub.referees) + len(self.claims.opening)

    # -- lifecycle ----------------------------------------------------------------

    async def start(self) -> None:
        """Register, recover the matches this node should run, start the loops."""
        await self.keeper.beat()
        self.membership.started_ms = self.membership.server_now_ms()
        await self.store.nodes.index_live_matches()
        await self.claims.recover()
        loop = asyncio.get_running_loop()
        self._tasks["beat"] = loop.create_task(self.keeper.beat_loop(), name="cluster.beat")
        self._tasks["watchdog"] = loop.create_task(self.keeper.watchdog(),
                                                   name="cluster.watchdog")
        if self.placement.enabled:
            self._tasks["scan"] = loop.create_task(self.claims.scan_loop(), name="cluster.scan")
            self._tasks["inbox"] = loop.create_task(self.claims.inbox_loop(),
                                                    name="cluster.inbox")
        log.info("node_registered", node=self.node_id, advertise=self.membership.address,
                 lease_ms=self.membership.lease_ms, live_nodes=sorted(self.membership.live),
                 matches=len(self.hub.referees))

    async def resume(self) -> bool:
        """The store is back after being unreachable, or is another process than
        before (restarted, failed over): take the live matches placed on this
        node again, then check every match this node acknowledged against what
        the store kept (``Claims.check_acknowledged``). False when the store
        failed meanwhile (the caller tries again)."""
        self.claims.owners_first()
        try:
            await self.keeper.beat()
            await self.store.nodes.index_live_matches()
            await self.claims.recover()
            await self.claims.check_acknowledged()
        except StoreError as exc:
            log.warning("resume_failed", error=repr(exc))
            return False
        return True

    @property
    def store_up(self) -> bool:
        """Whether calls that need the store are served: the store answers the
        watcher and this node's heartbeats get through (else they are refused
        at once, see ``routing.refuse_store_down``)."""
        return self.store_reachable and self.keeper.beating

    def successor(self, match_id: str) -> str:
        """Where ``match_id`` goes if this node drops out: the live node ranked
        first for it after this one, as this node last saw them ('' if none)."""
        if not self.placement.enabled:
            return ""
        best = self.placement.choose(match_id, balanced=False, exclude=(self.node_id,))
        return best.address if best is not None else ""

    @property
    def retry_after_ms(self) -> int:
        """What a refusal without a redirect suggests: a dead owner's lease lapses and
        its match is claimed within a lease and a scan."""
        return int((self.membership.lease_s + self.claims.scan_s) * 1000)

    async def serving_address(self, match_id: str, here: str) -> str:
        """Where a new match's seats should join: its owner's advertised address, or the
        node it was placed on (``here``, this node's address, when it runs here or the
        owner is unknown), so that the first Join is not redirected."""
        if self.hub.get(match_id) is not None:
            return here
        with contextlib.suppress(StoreError):
            [owner] = await self.claims.leases([match_id])
            if owner.node and owner.node != self.node_id and owner.address:
                return owner.address
            if owner.next and owner.next != self.node_id and owner.next_address:
                return owner.next_address
        return here

    async def close(self) -> None:
        """Stop the node's cluster tasks and tell the others, with a last heartbeat,
        that it is leaving. A loop that outlives its cancels is left behind
        (``stop_loops``); its beats say "leaving" from here on."""
        self.membership.leaving = True
        tasks = list(self._tasks.values())
        self._tasks.clear()
        await stop_loops(tasks, "cluster")
        with contextlib.suppress(StoreError):
            await self.membership.heartbeat_only(self.load())

    async def drain(self, grace: float) -> None:
        """Hand every match of this node to another one (release + successor's inbox),
        then close the streams with a redirect; without another node, stop them."""
        self.membership.leaving = True
        for name in ("scan", "inbox"):
            task = self._tasks.pop(name, None)
            if task is not None:
                task.cancel()
        with contextlib.suppress(StoreError):
            await self.membership.heartbeat_only(self.load())
        await hand_off(self.store, self.hub, self.placement, self.keeper, grace)

    # -- entry points of the services ---------------------------------------------

    async def place_new(self, record: MatchRecord, state: State) -> mpb.Match:
        """Store a match just created here, and run it here or hand it to its owner
        (the top-ranked live node; see ``placement``). Run here, its lease is
        claimed in the round trip that stores it, and it is played on ``state``
        (its fresh engine state, built to check the options)."""
        mid = record.match_id
        target = self.placement.choose(mid, balanced=False) if self.placement.enabled \
            else None
        if target is not None:
            self.placement.note_placed(target.node_id)
        if target is None or target.node_id == self.node_id:
            async def create_and_claim(_ids: Sequence[str]) -> list[Grant | StoreError | None]:
                return [await self.store.matches.create(record, claim=True)]

            opened = await self.claims.open_many([mid], "created", {mid: record},
                                                 create_and_claim, {mid: state})
            referee = opened.get(mid)
            if referee is None:
                raise FencedError(f"match {mid}: could not take its lease")
            return referee.to_proto()
        # In the lease index, owned by nobody, until its owner claims it.
        await self.store.matches.create(record)
        await self.store.nodes.hand_new(mid, target.node_id, target.address)
        n = record.options.num_players
        return match_proto(record, record.status, None, 0, [0] * n)

    async def locate(self, match_id: str, may_claim: bool = True) -> Location:
        """The referee, if this node runs or may now claim the match; else the
        address of the node that owns it or should ('' when unknown), and when a
        lapsing lease lets another node claim it."""
        m = self.membership
        pending = self.claims.opening.get(match_id)
        if pending is not None:
            referee = await asyncio.shield(pending)
            if referee is not None:
                return Location(referee)
        referee = self.hub.get(match_id)
        if referee is not None:
            return Location(referee)
        for _attempt in range(2):
            [lease] = await self.claims.leases([match_id])
            now = m.server_now_ms()
            if lease.node and lease.until > now and lease.node != self.node_id:
                # Owned elsewhere; an owner that stopped heartbeating gets no
                # redirect (its lease will expire and the match move, a scan later).
                renewed = lease.until - now > m.lease_ms - 2 * m.beat_s * 1000
                if renewed:
                    return Location(None, m.reachable(lease.node, lease.address))
                return Location(None, "", lease.until - now + int(self.claims.scan_s * 1000))
            if lease.node == self.node_id and lease.until > now:
                target = self.node_id  # this node's lease, its referee stopped
            else:
                target = self.claims.target(match_id, lease)
                if target != self.node_id:
                    self.claims.kick.set()
            if target != self.node_id:
                return Location(None, m.reachable(
                    target, lease.next_address if lease.next == target else ""))
            if not may_claim or m.leaving or self.hub.draining:
                return Location(None)
            opened = await self.claims.open_many([match_id], "on_demand")
            referee = opened.get(match_id) or self.hub.get(match_id)
            if referee is not None:
                return Location(referee)
        return Location(None)


class Location(NamedTuple):
    """Where a match runs, as ``Cluster.locate`` found it."""

    #: Its referee, when this node runs it.
    referee: MatchReferee | None
    #: Else the address of the node that owns it or should ('' when unknown).
    address: str = ""
    #: Else, when its owner's lease lapses and another node may claim it (ms from
    #: now; 0: unknown).
    retry_after_ms: int = 0


__all__ = ["Cluster", "Location"]
