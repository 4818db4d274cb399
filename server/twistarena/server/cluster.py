"""Many nodes over one Redis: membership, leases, placement, handoff, routing.

Membership. Every node heartbeats every lease/4 (one Lua script on node-level
keys, all under the hash tag ``{twistarena}``): ``{twistarena}:node:<id>``
(its advertised address, TTL 3 heartbeats), ``{twistarena}:nodes`` (sorted
set: node id -> last heartbeat, Redis TIME ms) and ``{twistarena}:nodeinfo``
(id -> ``load|address``). A node is live while its last heartbeat is younger
than 3 heartbeats; the script returns the live nodes, so no KEYS scans.

Leases. ``{m:<id>}:owner`` (see ``store``) holds the owner's lease: node,
fencing epoch, token and expiry by the Redis server's clock. Appends and
metadata writes present the token and are refused once it changed or the
lease expired. One pipeline per heartbeat renews every lease of the node; a
lease the node could not renew is given up locally lease - lease/10 after the
renewal that last succeeded was *sent*, so the node stops before Redis lets
anyone else claim; a watchdog checks every 50 ms.

Placement. A match's owner is chosen by rendezvous hashing of the match id
over the live nodes that advertise an address; new matches take the
top-ranked node (uniform in expectation, and the same answer on every node).
Drain handoffs use bounded loads: the highest-ranked node whose load is below
1.1x the mean (loads come with the heartbeats, so they lag a burst of
creations; that is why new matches do not use them). The chosen node is written to the owner key
as ``next`` and the match id is pushed to that node's inbox
(``{twistarena}:inbox:<id>``, a list it BLPOPs), so it claims at once. Matches
whose lease expired (dead owner) are found in ``{twistarena}:leases`` (a
sorted set: match id -> lease expiry) and claimed by the node ranked first
for them, with epoch + 1, after replaying the log.

Routing. A node that does not run a match answers Play/Watch with
UNAVAILABLE, reason NOT_OWNER and trailing metadata ``twistarena-owner:
HOST:PORT`` when it knows where the match is (or will be); if the match is
unowned and this node is its chosen owner, it claims it on the spot.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import time
import weakref
from collections import defaultdict, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc
from grpc import aio
from redis.exceptions import NoScriptError, RedisError
from twistarena.v1 import match_pb2 as mpb

from . import logs, metrics
from .records import match_proto
from .rpc import REASON_KEY
from .runner import Hub, MatchRunner
from .store import LEASES, LIVE_SET, FencedError, MatchRecord, Store, owner_key

log = logs.get("twistarena.cluster")

NODES = "{twistarena}:nodes"
NODE_INFO = "{twistarena}:nodeinfo"
#: Trailing metadata of a NOT_OWNER refusal: where the match's owner listens.
OWNER_KEY = "twistarena-owner"
#: ... or, when no live node runs it (a takeover under way), when to try again.
RETRY_AFTER_KEY = "twistarena-retry-after-ms"
#: New matches and handoffs go to the best-ranked node below this x the mean load.
BALANCE = 1.1
#: Expired leases looked at per scan.
SCAN_BATCH = 500
WATCHDOG_S = 0.05
#: Longest look-up of a match's new owner before a stream is closed without one.
REDIRECT_LOOKUP_S = 0.5
OVER = (mpb.MATCH_STATUS_FINISHED, mpb.MATCH_STATUS_CANCELLED)


def node_key(node_id: str) -> str:
    return "{twistarena}:node:" + node_id


def inbox_key(node_id: str) -> str:
    return "{twistarena}:inbox:" + node_id


# KEYS: nodes, node key, node info. ARGV: id, address, ttl ms, load, leave ('1').
# Returns {now, id1, seen1, 'load|addr', id2, ...} for the live nodes.
HEARTBEAT_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
if ARGV[5] == '1' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', KEYS[2])
  redis.call('HDEL', KEYS[3], ARGV[1])
else
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ttl)
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[4] .. '|' .. ARGV[2])
end
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - 20 * ttl)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[3], id)
end
local out = {now}
local live = redis.call('ZRANGEBYSCORE', KEYS[1], now - ttl, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  out[#out + 1] = live[i]
  out[#out + 1] = live[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[3], live[i]) or '0|'
end
return out
"""


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def rank(node_id: str, match_id: str) -> int:
    """Rendezvous weight of a node for a match (highest wins)."""
    digest = hashlib.blake2b(f"{node_id}/{match_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@dataclass(slots=True)
class NodeInfo:
    node_id: str
    address: str
    seen_ms: int
    load: int


@dataclass(slots=True)
class Owner:
    """What ``{m:<id>}:owner`` says."""

    node: str
    until: int
    address: str
    next: str
    next_address: str


_CLUSTERS: weakref.WeakKeyDictionary[Hub, Cluster] = weakref.WeakKeyDictionary()


def for_hub(hub: Hub) -> Cluster | None:
    return _CLUSTERS.get(hub)


class Cluster:
    """This node's membership, its leases, and where every match should run."""

    def __init__(self, store: Store, hub: Hub, node_id: str, advertise: str = "",
                 lease_ms: int = 2000) -> None:
        if lease_ms < 200:
            raise ValueError("the lease must be at least 200 ms")
        self.store = store
        self.hub = hub
        self.node_id = node_id
        self.advertise = advertise
        #: Nodes without an advertised address take no part in placement.
        self.placement = bool(advertise)
        self.lease_ms = lease_ms
        self.lease_s = lease_ms / 1000
        self.beat_s = self.lease_s / 4
        self.ttl_ms = max(3 * lease_ms // 4, 150)
        self.scan_s = self.lease_s / 8
        self.margin_s = self.lease_s / 10
        store.lease_ms = lease_ms
        store.advertise = advertise
        self.live: dict[str, NodeInfo] = {}
        #: Redis time of the heartbeat that listed ``live``.
        self.live_at_ms = 0
        self.offset_ms = 0.0
        self.started_ms = 0
        self.leaving = False
        #: match id -> (lease token, loop-monotonic time until which it is ours)
        self.valid: dict[str, tuple[str, float]] = {}
        self._opening: dict[str, asyncio.Future[MatchRunner | None]] = {}
        self._placed: defaultdict[str, deque[float]] = defaultdict(deque)
        self._kick = asyncio.Event()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._sha = ""
        _CLUSTERS[hub] = self

    # -- time -------------------------------------------------------------------

    def server_now_ms(self) -> int:
        """Redis TIME, estimated from the last heartbeat's clock offset."""
        return int(time.time() * 1000 + self.offset_ms)

    # -- lifecycle ----------------------------------------------------------------

    async def start(self) -> None:
        """Register, recover the matches this node should run, start the loops."""
        await self._load_script()
        await self.beat()
        self.started_ms = self.server_now_ms()
        await self._reconcile()
        await self._recover()
        loop = asyncio.get_running_loop()
        self._tasks["beat"] = loop.create_task(self._beat_loop())
        self._tasks["watchdog"] = loop.create_task(self._watchdog())
        if self.placement:
            self._tasks["scan"] = loop.create_task(self._scan_loop())
            self._tasks["inbox"] = loop.create_task(self._inbox_loop())
        log.info("node_registered", node=self.node_id, advertise=self.advertise,
                 lease_ms=self.lease_ms, live_nodes=sorted(self.live),
                 matches=len(self.hub.runners))

    async def resume(self) -> None:
        """The store is back after being unreachable (or restarted): take the live
        matches placed on this node again. A match whose store lost what this
        node acknowledged is caught when its runner opens (see ``MatchRunner.start``)."""
        try:
            await self.beat()
            await self._reconcile()
            await self._recover()
        except (RedisError, OSError) as exc:
            log.warning("resume_failed", error=repr(exc))

    async def close(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        for task in self._tasks.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self.leaving = True
        with contextlib.suppress(RedisError, OSError, NoScriptError):
            await self._heartbeat_only()

    async def _load_script(self) -> None:
        self._sha = await self.store.redis.script_load(HEARTBEAT_LUA)

    async def _reconcile(self) -> None:
        """Live matches missing from the lease index (older data) join it as unowned."""
        raw: Any = await self.store.redis.smembers(LIVE_SET)
        ids = [_text(m) for m in raw]
        for i in range(0, len(ids), 1000):
            chunk = ids[i:i + 1000]
            await self.store.redis.zadd(LEASES, dict.fromkeys(chunk, 0), nx=True)

    async def _recover(self) -> None:
        """At startup: take the orphaned matches placed on this node.

        A lease held by a node that has not heartbeaten since this node started
        may belong to a dead node: wait (at most a lease) until it is renewed or
        expires, so that a restarted node resumes a crashed one's matches."""
        deadline = time.monotonic() + self.lease_s + 1.0
        total = 0
        while True:
            raw: Any = await self.store.redis.zrange(LEASES, 0, -1)
            ids = [m for m in (_text(x) for x in raw) if self.hub.get(m) is None]
            owners = await self._owners(ids)
            now = self.server_now_ms()
            claim: list[str] = []
            waiting = 0
            for mid, owner in zip(ids, owners, strict=True):
                if owner.node == self.node_id:
                    claim.append(mid)  # this node's previous life
                elif owner.node and owner.until > now:
                    info = self.live.get(owner.node)
                    if info is None or info.seen_ms <= self.started_ms:
                        waiting += 1
                elif self._target(mid, owner) == self.node_id:
                    claim.append(mid)
            if claim:
                total += len(await self._open_many(claim, "recovery"))
            if not waiting or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
            await self.beat()
        if total:
            log.info("recovered", matches=total)

    # -- heartbeat and renewals ----------------------------------------------------------

    def _heartbeat_args(self) -> list[Any]:
        load = len(self.hub.runners) + len(self._opening)
        return [NODES, node_key(self.node_id), NODE_INFO, self.node_id, self.advertise,
                self.ttl_ms, load, "1" if self.leaving else "0"]

    async def _heartbeat_only(self) -> None:
        res = await self.store.redis.evalsha(self._sha, 3, *self._heartbeat_args())
        self._read_heartbeat(res, time.time() * 1000)

    def _read_heartbeat(self, res: Any, local_ms: float) -> None:
        now = _int(res[0])
        self.offset_ms = now - local_ms
        live: dict[str, NodeInfo] = {}
        for i in range(1, len(res) - 2, 3):
            node = _text(res[i])
            load, _, address = _text(res[i + 2]).partition("|")
            live[node] = NodeInfo(node, address, int(float(_text(res[i + 1]))), _int(load))
        self.live = live
        self.live_at_ms = now

    async def beat(self) -> None:
        """Heartbeat and renew every lease of this node: one pipeline."""
        runners = list(self.hub.runners.values())
        renew = self.store.scripts.sha["renew"]
        pipe = self.store.redis.pipeline(transaction=False)
        pipe.execute_command("EVALSHA", self._sha, 3, *self._heartbeat_args())
        for runner in runners:
            pipe.execute_command("EVALSHA", renew, 1, owner_key(runner.match_id),
                                 runner.owner, self.lease_ms)
        sent = time.monotonic()
        wall_ms = time.time() * 1000
        results = await pipe.execute(raise_on_error=False)
        rtt_ms = (time.monotonic() - sent) * 1000
        if any(isinstance(r, NoScriptError) for r in results):
            await self.store.scripts.load(self.store.redis)
            await self._load_script()
            return
        if not isinstance(results[0], Exception):
            self._read_heartbeat(results[0], wall_ms + rtt_ms / 2)
        expiries: dict[str, int] = {}
        lost: list[MatchRunner] = []
        good_until = sent + self.lease_s - self.margin_s
        for runner, res in zip(runners, results[1:], strict=True):
            if isinstance(res, Exception):
                continue
            value = int(res)
            if value > 0:
                if self.hub.get(runner.match_id) is runner:
                    self.valid[runner.match_id] = (runner.owner, good_until)
                expiries[runner.match_id] = value
            elif self.hub.get(runner.match_id) is runner:
                lost.append(runner)
        if expiries:
            await self.store.redis.zadd(LEASES, expiries)
        if lost:
            self._lose(lost, "renewal refused")

    async def _beat_loop(self) -> None:
        while True:
            started = time.monotonic()
            try:
                await self.beat()
            except (RedisError, OSError) as exc:
                metrics.ERRORS.labels("heartbeat").inc()
                log.warning("heartbeat_failed", error=repr(exc))
            except Exception as exc:  # keep beating whatever happened
                metrics.ERRORS.labels("heartbeat").inc()
                log.error("heartbeat_failed", error=repr(exc))
            await asyncio.sleep(max(0.0, self.beat_s - (time.monotonic() - started)))

    async def _watchdog(self) -> None:
        """Stop every runner whose lease was not renewed in time."""
        while True:
            await asyncio.sleep(WATCHDOG_S)
            now = time.monotonic()
            expired: list[MatchRunner] = []
            for mid, (token, until) in list(self.valid.items()):
                runner = self.hub.get(mid)
                if runner is None or runner.owner != token:
                    self.valid.pop(mid, None)
                elif now > until:
                    expired.append(runner)
            if expired:
                self._lose(expired, "lease not renewed in time")

    def _lose(self, runners: Sequence[MatchRunner], why: str) -> None:
        for runner in runners:
            self.valid.pop(runner.match_id, None)
            if self.hub.get(runner.match_id) is runner:
                # At once and without naming an owner: this node cannot know it.
                runner.stop(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                            "this server no longer owns the match; reconnect",
                            redirect=False)
        metrics.ERRORS.labels("lease_lost").inc(len(runners))
        log.warning("leases_lost", why=why, matches=len(runners),
                    match_ids=[r.match_id for r in runners[:20]])

    # -- placement ----------------------------------------------------------------------

    def candidates(self, exclude: Iterable[str] = ()) -> list[NodeInfo]:
        skip = set(exclude)
        return [n for n in self.live.values() if n.address and n.node_id not in skip]

    def choose(self, match_id: str, balanced: bool,
               exclude: Iterable[str] = ()) -> NodeInfo | None:
        """The node that should own ``match_id``: rendezvous hashing over the live
        nodes; ``balanced`` skips nodes already above BALANCE x the mean load."""
        nodes = self.candidates(exclude)
        if not nodes:
            return None
        ranked = sorted(nodes, key=lambda n: rank(n.node_id, match_id), reverse=True)
        if not balanced:
            return ranked[0]
        loads = {n.node_id: n.load + self._recent(n.node_id) for n in nodes}
        cap = max(1, math.ceil((sum(loads.values()) + 1) * BALANCE / len(nodes)))
        for node in ranked:
            if loads[node.node_id] < cap:
                return node
        return min(ranked, key=lambda n: loads[n.node_id])

    def _recent(self, node_id: str) -> int:
        """Matches this node placed on ``node_id`` that its heartbeat may not count yet."""
        placed = self._placed.get(node_id)
        if not placed:
            return 0
        horizon = time.monotonic() - 2.5 * self.beat_s
        while placed and placed[0] < horizon:
            placed.popleft()
        return len(placed)

    def _note_placed(self, node_id: str) -> None:
        self._placed[node_id].append(time.monotonic())

    def _target(self, match_id: str, owner: Owner) -> str:
        """Who should claim an unowned match: the successor named at its release or
        creation if it is live, else the node ranked first for it."""
        if owner.next and (owner.next == self.node_id or owner.next in self.live) and (
                owner.next != self.node_id or not self.leaving):
            return owner.next
        if not self.placement:
            return "" if self.leaving else self.node_id
        best = self.choose(match_id, balanced=False)
        return best.node_id if best is not None else ""

    async def _owners(self, ids: Sequence[str]) -> list[Owner]:
        if not ids:
            return []
        out: list[Owner] = []
        for i in range(0, len(ids), 1000):
            pipe = self.store.redis.pipeline(transaction=False)
            for mid in ids[i:i + 1000]:
                pipe.hmget(owner_key(mid), "node", "until", "addr", "next", "next_addr")
            for row in await pipe.execute(raise_on_error=False):
                if isinstance(row, Exception):  # e.g. a pre-lease string owner
                    out.append(Owner("", 0, "", "", ""))
                    continue
                node, until, address, nxt, nxt_address = (_text(v) for v in row)
                out.append(Owner(node, _int(until), address, nxt, nxt_address))
        return out

    async def _scan_loop(self) -> None:
        """Claim the matches with an expired lease that are placed on this node."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), self.scan_s)
            self._kick.clear()
            if self.leaving:
                continue
            try:
                await self._scan()
            except (RedisError, OSError) as exc:
                log.warning("placement_scan_failed", error=repr(exc))
            except Exception as exc:
                metrics.ERRORS.labels("placement").inc()
                log.error("placement_scan_failed", error=repr(exc))

    async def _scan(self) -> None:
        now = self.server_now_ms()
        raw: Any = await self.store.redis.zrangebyscore(LEASES, "-inf", now, start=0,
                                                        num=SCAN_BATCH)
        ids = [m for m in (_text(x) for x in raw)
               if self.hub.get(m) is None and m not in self._opening]
        if not ids:
            return
        owners = await self._owners(ids)
        now = self.server_now_ms()
        claim = [mid for mid, owner in zip(ids, owners, strict=True)
                 if not (owner.node and owner.until > now)
                 and self._target(mid, owner) == self.node_id]
        if claim:
            await self._open_many(claim, "takeover")

    async def _inbox_loop(self) -> None:
        """Matches handed to this node (created elsewhere, or moved by a drain)."""
        key = inbox_key(self.node_id)
        while True:
            try:
                item: Any = await self.store.redis.blpop([key], timeout=1)
                if not item:
                    continue
                ids = [_text(item[1])]
                more: Any = await self.store.redis.lpop(key, 500)
                ids += [_text(m) for m in more or ()]
                if self.leaving:
                    continue
                ids = [m for m in dict.fromkeys(ids)
                       if self.hub.get(m) is None and m not in self._opening]
                if ids:
                    await self._open_many(ids, "handoff")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("inbox_failed", error=repr(exc))
                await asyncio.sleep(0.2)

    async def _open_many(self, ids: Sequence[str], why: str,
                         records: dict[str, MatchRecord] | None = None,
                         ) -> dict[str, MatchRunner]:
        """Claim these matches (epoch + 1), then load and replay each one's log."""
        loop = asyncio.get_running_loop()
        mine = [m for m in dict.fromkeys(ids) if m not in self._opening]
        futures = {m: loop.create_future() for m in mine}
        self._opening.update(futures)
        opened: dict[str, MatchRunner] = {}
        try:
            if not mine:
                return opened
            claim = self.store.scripts.sha["claim"]
            pipe = self.store.redis.pipeline(transaction=False)
            for mid in mine:
                pipe.execute_command("EVALSHA", claim, 1, owner_key(mid), self.node_id,
                                     self.advertise, self.lease_ms, 0)
            sent = time.monotonic()
            results = await pipe.execute(raise_on_error=False)
            won: list[tuple[str, str]] = []
            for mid, res in zip(mine, results, strict=True):
                if isinstance(res, NoScriptError):
                    await self.store.scripts.load(self.store.redis)
                elif isinstance(res, Exception):
                    log.warning("claim_failed", match_id=mid, error=repr(res))
                elif int(res[0]) == 1:
                    won.append((mid, _text(res[1])))
            if not won:
                return opened
            good_until = sent + self.lease_s - self.margin_s
            won_ids = [m for m, _ in won]
            known = records or {}
            missing = [m for m in won_ids if m not in known]
            loaded = dict(zip(missing, await self.store.load_many(missing), strict=True)) \
                if missing else {}
            entries = dict(zip(won_ids, await self.store.load_logs(won_ids), strict=True))
            for mid, token in won:
                record = known.get(mid) or loaded.get(mid)
                if record is None:
                    await self.store.redis.zrem(LEASES, mid)
                    continue
                if record.status in OVER:
                    await self.store.drop_live(mid)
                    continue
                try:
                    runner = MatchRunner(self.hub, record, token, entries[mid])
                    self.hub.add(runner)
                    self.valid[mid] = (token, good_until)
                    await runner.start()
                except Exception as exc:
                    metrics.ERRORS.labels("claim").inc()
                    log.error("open_failed", match_id=mid, error=repr(exc))
                    continue
                opened[mid] = runner
            if opened:
                log.info("claimed", why=why, matches=len(opened), node=self.node_id,
                         match_ids=list(opened)[:20])
            return opened
        finally:
            for mid, fut in futures.items():
                if self._opening.get(mid) is fut:
                    del self._opening[mid]
                if not fut.done():
                    fut.set_result(opened.get(mid))

    # -- entry points of the services ---------------------------------------------------

    async def place_new(self, record: MatchRecord) -> mpb.Match:
        """A match was just created here: run it here or hand it to its owner."""
        mid = record.match_id
        await self.store.redis.zadd(LEASES, {mid: 0})
        target = self.choose(mid, balanced=False) if self.placement else None
        if target is not None:
            self._note_placed(target.node_id)
        if target is None or target.node_id == self.node_id:
            opened = await self._open_many([mid], "created", {mid: record})
            runner = opened.get(mid)
            if runner is None:
                raise FencedError(f"match {mid}: could not take its lease")
            return runner.to_proto()
        pipe = self.store.redis.pipeline(transaction=False)
        pipe.hset(owner_key(mid), mapping={"next": target.node_id,
                                           "next_addr": target.address})
        pipe.rpush(inbox_key(target.node_id), mid)
        await pipe.execute()
        n = record.options.num_players
        return match_proto(record, record.status, None, 0, [0] * n)

    async def locate(self, match_id: str, may_claim: bool = True,
                     ) -> tuple[MatchRunner | None, str]:
        """(the runner, if this node runs or may now claim the match; else the
        address of the node that owns it or should, '' when unknown)."""
        pending = self._opening.get(match_id)
        if pending is not None:
            runner = await asyncio.shield(pending)
            if runner is not None:
                return runner, ""
        runner = self.hub.get(match_id)
        if runner is not None:
            return runner, ""
        for _attempt in range(2):
            [owner] = await self._owners([match_id])
            now = self.server_now_ms()
            if owner.node and owner.until > now and owner.node != self.node_id:
                # Owned elsewhere; an owner that stopped heartbeating gets no
                # redirect (its lease will expire and the match move).
                renewed = owner.until - now > self.lease_ms - 2 * self.beat_s * 1000
                return None, self.reachable(owner.node, owner.address) if renewed else ""
            if owner.node == self.node_id and owner.until > now:
                target = self.node_id  # this node's lease, its runner stopped
            else:
                target = self._target(match_id, owner)
                if target != self.node_id:
                    self._kick.set()
            if target != self.node_id:
                return None, self.reachable(
                    target, owner.next_address if owner.next == target else "")
            if not may_claim or self.leaving or self.hub.draining:
                return None, ""
            opened = await self._open_many([match_id], "on_demand")
            runner = opened.get(match_id) or self.hub.get(match_id)
            if runner is not None:
                return runner, ""
        return None, ""

    def reachable(self, node: str, address: str = "") -> str:
        """``node``'s address (``address`` if given) when it had heartbeaten within two
        heartbeat intervals of the last membership read, else '': a redirect never names
        a node that missed a heartbeat, whose leases are lapsing or have lapsed (the
        client is told to retry instead)."""
        info = self.live.get(node)
        if info is None or info.seen_ms < self.live_at_ms - 2 * self.beat_s * 1000:
            return ""
        return address or info.address

    @property
    def retry_after_ms(self) -> int:
        """What a refusal without a redirect suggests: a dead owner's lease lapses and
        its match is claimed within a lease and a scan."""
        return int((self.lease_s + self.scan_s) * 1000)

    async def drain(self, grace: float) -> None:
        """Hand every match of this node to another one (release + successor's inbox),
        then close the streams with a redirect; without another node, stop them."""
        self.leaving = True
        for name in ("scan", "inbox"):
            task = self._tasks.pop(name, None)
            if task is not None:
                task.cancel()
        with contextlib.suppress(RedisError, OSError, NoScriptError):
            await self._heartbeat_only()
        runners = list(self.hub.runners.values())
        if not runners:
            return
        budget = max(0.2, grace / 2)
        acquired = await asyncio.gather(
            *(asyncio.wait_for(r.lock.acquire(), budget) for r in runners),
            return_exceptions=True)
        locked = [r for r, ok in zip(runners, acquired, strict=True) if ok is True]
        try:
            plan: list[tuple[MatchRunner, NodeInfo | None]] = []
            for runner in runners:
                target = self.choose(runner.match_id, balanced=True, exclude=[self.node_id])
                if target is not None:
                    self._note_placed(target.node_id)
                plan.append((runner, target))
            release = self.store.scripts.sha["release"]
            pipe = self.store.redis.pipeline(transaction=False)
            for runner, target in plan:
                pipe.execute_command("EVALSHA", release, 1, owner_key(runner.match_id),
                                     runner.owner, target.node_id if target else "",
                                     target.address if target else "")
            with contextlib.suppress(RedisError, OSError):
                await pipe.execute(raise_on_error=False)
            inboxes: defaultdict[str, list[str]] = defaultdict(list)
            for runner, target in plan:
                if target is not None:
                    inboxes[target.node_id].append(runner.match_id)
            if inboxes:
                pipe = self.store.redis.pipeline(transaction=False)
                for node, ids in inboxes.items():
                    pipe.rpush(inbox_key(node), *ids)
                with contextlib.suppress(RedisError, OSError):
                    await pipe.execute(raise_on_error=False)
            for runner, target in plan:
                self.valid.pop(runner.match_id, None)
                if target is not None:
                    runner.stop(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                                "server draining; the match moved to another server")
                else:
                    runner.stop(grpc.StatusCode.UNAVAILABLE, "DRAINING", "server draining")
            moved = sum(1 for _, t in plan if t is not None)
            log.info("handed_off", matches=moved, stopped=len(plan) - moved,
                     to=sorted(inboxes))
        finally:
            for runner in locked:
                runner.lock.release()


# -- helpers for the servicers ------------------------------------------------------------


async def abort_not_owner(context: aio.ServicerContext[Any, Any], details: str,
                          address: str, cluster: Cluster | None) -> NoReturn:
    """UNAVAILABLE + NOT_OWNER, with the owner's address when a live node runs the
    match (a redirect); otherwise the match is being taken over: retry after a while."""
    metrics.ERRORS.labels("not_owner").inc()
    trailers: tuple[tuple[str, str], ...] = ((REASON_KEY, "NOT_OWNER"),)
    if address:
        trailers += ((OWNER_KEY, address),)
    elif cluster is not None:
        wait = cluster.retry_after_ms
        details = f"{details}; it is being taken over, retry after {wait} ms"
        trailers += ((RETRY_AFTER_KEY, str(wait)),)
    await context.abort(grpc.StatusCode.UNAVAILABLE, details, trailing_metadata=trailers)
    raise AssertionError("unreachable")  # pragma: no cover


async def runner_or_redirect(hub: Hub, match_id: str, context: aio.ServicerContext[Any, Any],
                             details: str) -> MatchRunner:
    """The match's runner on this node (claimed now if the match is unowned and
    placed here), or end the call with a NOT_OWNER redirect."""
    cluster = for_hub(hub)
    address = ""
    if cluster is not None:
        runner, address = await cluster.locate(match_id)
        if runner is not None:
            return runner
    await abort_not_owner(context, details, address, cluster)


async def redirect(hub: Hub, match_id: str, context: aio.ServicerContext[Any, Any],
                   details: str) -> NoReturn:
    """End a stream whose match left this node, pointing at its new owner."""
    cluster = for_hub(hub)
    address = ""
    if cluster is not None:
        # Bounded: a redirect must not hold a stream open on a slow store.
        with contextlib.suppress(RedisError, OSError, TimeoutError):
            _runner, address = await asyncio.wait_for(
                cluster.locate(match_id, may_claim=False), REDIRECT_LOOKUP_S)
    await abort_not_owner(context, details, address, cluster)


async def serving_address(hub: Hub, match_id: str, here: str) -> str:
    """Where a new match's seats should join: its owner's advertised address, or the
    node it was placed on (``here``, this node's address, when it runs here or the
    owner is unknown), so that the first Join is not redirected."""
    cluster = for_hub(hub)
    if cluster is None or hub.get(match_id) is not None:
        return here
    with contextlib.suppress(RedisError, OSError):
        [owner] = await cluster._owners([match_id])
        if owner.node and owner.node != cluster.node_id and owner.address:
            return owner.address
        if owner.next and owner.next != cluster.node_id and owner.next_address:
            return owner.next_address
    return here


async def place_new(hub: Hub, record: MatchRecord) -> mpb.Match:
    cluster = for_hub(hub)
    if cluster is None:
        return (await hub.open(record, [])).to_proto()
    return await cluster.place_new(record)


async def live_runner_or_redirect(hub: Hub, match_id: str,
                                  context: aio.ServicerContext[Any, Any]) -> MatchRunner | None:
    """For Watch: None for an unknown or finished match (replayed from the store),
    else the runner here or a NOT_OWNER redirect."""
    record = await hub.store.load(match_id)
    if record is None or record.status in OVER:
        return None
    return await runner_or_redirect(hub, match_id, context,
                                    f"match {match_id} is not run by this server right now")


async def refuse_draining(hub: Hub, match_id: str,
                          context: aio.ServicerContext[Any, Any]) -> NoReturn:
    """A draining node refuses new streams: a redirect when the match's next
    owner is known, else DRAINING."""
    cluster = for_hub(hub)
    address = ""
    if cluster is not None:
        with contextlib.suppress(RedisError, OSError):
            _runner, address = await cluster.locate(match_id, may_claim=False)
    if address:
        await abort_not_owner(context, "server draining; the match moved", address, cluster)
    metrics.ERRORS.labels("draining").inc()
    await context.abort(grpc.StatusCode.UNAVAILABLE, "server draining",
                        trailing_metadata=((REASON_KEY, "DRAINING"),))
    raise AssertionError("unreachable")  # pragma: no cover
