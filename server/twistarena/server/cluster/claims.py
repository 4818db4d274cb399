"""Taking matches: handed to this node (its inbox), orphaned (an expired lease),
left by this node's previous life (recovery at startup), or asked for on demand.

Each way ends in ``Claims.open_many``: claim the leases (epoch + 1) in one
pipeline, load the records and logs, replay each log into a referee. A match
handed over is pushed to the successor's inbox (``{twistarena}:inbox:<id>``,
a list it BLPOPs) so it claims at once; a match whose owner died is found in
``{twistarena}:leases`` (match id -> lease expiry) by the node ranked first
for it once its lease expired.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from twistarena import wire
from twistarena.engine import State
from twistarena.storage import Grant, LeaseState, LogEntry, MatchRecord, Store, StoreError

from .. import logs, metrics
from ..match import rewinds
from ..match.hub import Hub
from ..match.referee import MatchReferee
from .leases import LeaseKeeper
from .membership import Membership
from .placement import Placement

log = logs.get("twistarena.cluster")

#: Expired leases looked at per scan.
SCAN_BATCH = 500

#: After this node saw its store fail, for this many leases a lease that lapsed
#: from another node is left to that node (``Claims.target``)...
OWNER_FIRST_LEASES = 2.0
#: ... if it lapsed less than this many leases ago: a dead node's matches are
#: taken over even while the store keeps failing.
OWNER_FIRST_LAPSED_LEASES = 4.0

#: Claims the leases of these matches: per match a Grant, None (held elsewhere) or
#: the claim's error.
Claim = Callable[[Sequence[str]], Awaitable[list[Grant | StoreError | None]]]


class Claims:
    """This node's claims on matches, and the loops that find matches to claim."""

    def __init__(self, store: Store, hub: Hub, membership: Membership,
                 placement: Placement, keeper: LeaseKeeper) -> None:
        self.store = store
        self.hub = hub
        self.membership = membership
        self.placement = placement
        self.keeper = keeper
        self.scan_s = membership.lease_s / 8
        #: Matches being opened now (a second caller waits for the first).
        self.opening: dict[str, asyncio.Future[MatchReferee | None]] = {}
        #: Set to scan for expired leases before the next period.
        self.kick = asyncio.Event()
        #: Checks of live matches after a store restart, still running.
        self._rechecks: set[asyncio.Task[None]] = set()
        #: Until then (monotonic), leases lapsed from other nodes are left to them.
        self.owners_first_until = 0.0

    def owners_first(self) -> None:
        """The store failed (or restarted): every node's leases may have lapsed with
        it, and a store that restarted may have lost what their holders
        acknowledged. Only the holder remembers that, and finds and announces the
        loss when it takes its matches back (``check_acknowledged``, the referee's
        start); a match taken over by another node first would be played on from
        the shorter log in silence. So for a while, each holder takes its own back."""
        self.owners_first_until = time.monotonic() + OWNER_FIRST_LEASES * self.membership.lease_s

    def target(self, match_id: str, lease: LeaseState) -> str:
        """Who should claim ``match_id``, whose lease is not valid: placement's
        choice, but while ``owners_first`` holds the node whose lease lapsed lately
        or that still heartbeats (a store that lost its renewals shows its lease
        older than it is), or, for a match with no holder on record, only a node
        that remembers acknowledging it."""
        m = self.membership
        owners_first = time.monotonic() < self.owners_first_until
        if owners_first and not lease.node and not lease.next:
            # No holder on record: a restarted store may have lost the first claim
            # (and the handoff naming its node) with what that node acknowledged,
            # and the heartbeats that placement would need to rank it. Meanwhile
            # only a node that remembers acknowledging the match claims it.
            return m.node_id if self.hub.acknowledged.get(match_id) is not None else ""
        if owners_first and lease.node and lease.node != m.node_id \
                and (lease.until > m.server_now_ms() - OWNER_FIRST_LAPSED_LEASES * m.lease_ms
                     or m.heartbeating(lease.node)):
            return lease.node
        return self.placement.target(match_id, lease)

    async def leases(self, ids: Sequence[str]) -> list[LeaseState]:
        """The current leases of ``ids``, as the store holds them."""
        return await self.store.matches.leases.read(ids)

    async def recover(self) -> None:
        """At startup: take the orphaned matches placed on this node.

        A lease held by a node that has not heartbeaten since this node started
        may belong to a dead node: wait (at most a lease) until it is renewed or
        expires, so that a restarted node resumes a crashed one's matches."""
        m = self.membership
        deadline = time.monotonic() + m.lease_s + 1.0
        total = 0
        while True:
            ids = [mid for mid in await self.store.nodes.indexed_matches()
                   if self.hub.get(mid) is None]
            leases = await self.leases(ids)
            now = m.server_now_ms()
            claim: list[str] = []
            waiting = 0
            for mid, lease in zip(ids, leases, strict=True):
                if lease.node == m.node_id:
                    claim.append(mid)  # this node's previous life
                elif lease.node and lease.until > now:
                    info = m.live.get(lease.node)
                    if info is None or info.seen_ms <= m.started_ms:
                        waiting += 1
                elif self.target(mid, lease) == m.node_id:
                    claim.append(mid)
            if claim:
                total += len(await self.open_many(claim, "recovery"))
            if not waiting or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
            await self.keeper.beat()
        if total:
            log.info("recovered", matches=total)

    async def check_acknowledged(self) -> None:
        """After the store restarted (or failed over, or reloaded): every match this
        node remembers acknowledging, ended ones included, is compared with what
        the store kept. A live one that lost actions goes through its referee's
        loss policy (and one that lost the Rewounds its referee owes has them
        stored again); an ended one whose end or actions are gone is opened again,
        and its referee finds the loss at start (``MatchReferee.start``)."""
        memory = self.hub.acknowledged
        ids = memory.ids()
        for at in range(0, len(ids), SCAN_BATCH):
            batch = ids[at:at + SCAN_BATCH]
            records = await self.store.matches.load_many(batch)
            lengths = await self.store.matches.log_lengths(batch)
            reopen: dict[str, int] = {}  # match id -> actions this node acknowledged
            for mid, record, stored in zip(batch, records, lengths, strict=True):
                known = memory.get(mid)
                if known is None:
                    continue
                referee = self.hub.get(mid)
                if referee is not None:
                    if stored < referee.book.log_len or rewinds.owed_lost(referee, record):
                        # Under the referee's lock, which a write retrying through
                        # the outage may hold: not waited for here.
                        task = asyncio.get_running_loop().create_task(
                            rewinds.recheck(referee, stored))
                        self._rechecks.add(task)
                        task.add_done_callback(self._rechecks.discard)
                elif record is None:
                    metrics.STORE_LOSSES.labels("match_gone").inc()
                    metrics.LOST_ACTIONS.inc(known.actions)
                    log.error("store_loss", match_id=mid, policy="match_gone",
                              why="the store lost the whole match", acknowledged=known.actions,
                              kept=0, lost=known.actions)
                elif stored < known.actions or (
                        known.status and record.status not in wire.MATCH_OVER):
                    reopen[mid] = known.actions
            if reopen:
                opened = await self.open_many(list(reopen), "store_loss")
                for mid, acknowledged in reopen.items():
                    if mid not in opened and self.hub.get(mid) is None:
                        # Another node took it from the shorter log before this one
                        # took it back (see ``owners_first``): its seats cannot be
                        # told from here; the loss is at least counted and logged.
                        metrics.STORE_LOSSES.labels("not_announced").inc()
                        log.error("store_loss", match_id=mid, policy="not_announced",
                                  why="another node runs or ended the match from what "
                                  "the store kept", acknowledged=acknowledged)

    async def scan_loop(self) -> None:
        """Claim the matches with an expired lease that are placed on this node."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.kick.wait(), self.scan_s)
            self.kick.clear()
            if self.membership.leaving:
                continue
            try:
                await self.scan()
            except StoreError as exc:
                self.owners_first()
                log.warning("placement_scan_failed", error=repr(exc))
            except Exception as exc:
                metrics.ERRORS.labels("placement").inc()
                log.error("placement_scan_failed", error=repr(exc))

    async def scan(self) -> None:
        """Claim the matches whose leases expired and that placement gives to this node."""
        m = self.membership
        expired = await self.store.nodes.expired_matches(m.server_now_ms(), SCAN_BATCH)
        ids = [mid for mid in expired if self.hub.get(mid) is None and mid not in self.opening]
        if not ids:
            return
        leases = await self.leases(ids)
        now = m.server_now_ms()
        claim = [mid for mid, lease in zip(ids, leases, strict=True)
                 if not (lease.node and lease.until > now)
                 and self.target(mid, lease) == m.node_id]
        if claim:
            await self.open_many(claim, "takeover")

    async def inbox_loop(self) -> None:
        """Matches handed to this node (created elsewhere, or moved by a drain)."""
        while True:
            try:
                ids = await self.store.nodes.take_inbox(timeout_s=1)
                if not ids or self.membership.leaving:
                    continue
                ids = [m for m in dict.fromkeys(ids)
                       if self.hub.get(m) is None and m not in self.opening]
                if ids:
                    await self.open_many(ids, "handoff")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("inbox_failed", error=repr(exc))
                await asyncio.sleep(0.2)

    async def open_many(self, ids: Sequence[str], why: str,
                        records: dict[str, MatchRecord] | None = None,
                        claim: Claim | None = None,
                        fresh: Mapping[str, State] | None = None) -> dict[str, MatchReferee]:
        """Claim these matches (epoch + 1), then load and replay each one's log.
        ``claim``: how the leases are claimed (by default ``Leases.claim_many``;
        a match created here claims in the round trip that stores it);
        ``fresh``: the engine states of matches just created (not built again)."""
        loop = asyncio.get_running_loop()
        # Checked here, with no await before the claim: a caller that looked a
        # while ago (recovery, a scan) must not claim a match another caller has
        # opened since; a second claim would leave that referee, and the seats
        # attached to it, running on a fenced lease that nothing stops.
        mine = [m for m in dict.fromkeys(ids)
                if m not in self.opening and self.hub.get(m) is None]
        futures = {m: loop.create_future() for m in mine}
        self.opening.update(futures)
        opened: dict[str, MatchReferee] = {}
        try:
            if not mine:
                return opened
            sent = time.monotonic()
            grants = await (claim or self.store.matches.leases.claim_many)(mine)
            won: list[tuple[str, Grant]] = []
            for mid, grant in zip(mine, grants, strict=True):
                if isinstance(grant, StoreError):
                    log.warning("claim_failed", match_id=mid, error=repr(grant))
                elif grant is not None:
                    won.append((mid, grant))
            if not won:
                return opened
            won_ids = [m for m, _ in won]
            known = records or {}
            missing = [m for m in won_ids if m not in known]
            loaded = dict(zip(missing, await self.store.matches.load_many(missing),
                              strict=True)) if missing else {}
            # A match created here a moment ago has an empty log: nobody else held
            # its lease to append to it.
            logged = [m for m in won_ids if why != "created" or m not in known]
            entries: dict[str, Sequence[LogEntry]] = {m: [] for m in won_ids}
            if logged:
                entries.update(zip(logged, await self.store.matches.load_logs(logged),
                                   strict=True))
            for mid, grant in won:
                record = known.get(mid) or loaded.get(mid)
                if record is None:
                    await self.store.nodes.forget_match(mid)
                    continue
                if record.status in wire.MATCH_OVER:
                    await self.store.matches.drop_live(mid)
                    continue
                try:
                    referee = MatchReferee(self.hub, record, grant.token, entries[mid],
                                           (fresh or {}).get(mid))
                    self.hub.add(referee)
                    self.keeper.hold(mid, grant.token, sent)
                    await referee.start()
                except Exception as exc:
                    metrics.ERRORS.labels("claim").inc()
                    log.error("open_failed", match_id=mid, error=repr(exc))
                    continue
                opened[mid] = referee
            # A match created here is not logged as claimed: its end is (match_over).
            if opened and why != "created":
                log.info("claimed", why=why, matches=len(opened), node=self.membership.node_id,
                         match_ids=list(opened)[:20])
            return opened
        finally:
            for mid, fut in futures.items():
                if self.opening.get(mid) is fut:
                    del self.opening[mid]
                if not fut.done():
                    fut.set_result(opened.get(mid))
