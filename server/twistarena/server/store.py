"""Every match in Redis/Valkey, and the fenced, batched action log.

Keys of one match share the hash tag ``{m:<id>}`` so the match lives in one
cluster slot:

``{m:<id>}:meta``   hash: ``spec`` (MatchOptions bytes, seed and clock
                    resolved), ``seed``, ``status``, ``created_ms``,
                    ``tok:<seat>`` (sha256 of the seat token), ``joined:<seat>``,
                    ``result`` (MatchResult bytes)
``{m:<id>}:log``    list: the append-only action log, one ``seat,action,timeout``
                    entry per action
``{m:<id>}:owner``  hash: the lease of the node that may append: ``node``,
                    ``epoch`` (fencing epoch, +1 on every change of owner),
                    ``token`` (``<node>:<epoch>``, what appends present),
                    ``until`` (lease expiry, ms of the Redis server's TIME),
                    ``addr`` (the owner's advertised address); after a
                    release ``next``/``next_addr`` name the chosen successor

Two global keys index the matches: ``twistarena:matches`` (sorted set by
creation time, for ListMatches) and ``twistarena:live`` (set of unfinished
match ids, for recovery at startup).

An append is one Lua script that checks the owner value (node and fencing
epoch) and the expected log length, so two writers can never both append.
Appends of many matches made in the same event-loop tick travel in one
pipeline of EVALSHA calls (``Appender``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError, RedisError, ResponseError
from twistarena.v1 import match_pb2 as mpb

from . import metrics
from .redis_url import cluster_client, is_cluster_url
from .resp import RespError, RespPipeline, bulk, encode_command, fast_path_target

MATCH_INDEX = "twistarena:matches"
LIVE_SET = "twistarena:live"
#: Counter written by ``Store.sync`` so that its WAIT covers a write of its connection.
SYNC_KEY = "twistarena:sync"
#: Sorted set: live match id -> its lease expiry (ms, Redis TIME; 0: nobody's).
LEASES = "{twistarena}:leases"

#: (seat, action id, settled by the fallback)
LogEntry = tuple[int, int, bool]

APPEND_LUA = """
local o = redis.call('HMGET', KEYS[2], 'token', 'until')
if o[1] ~= ARGV[1] then return {-1, o[1] or ''} end
local t = redis.call('TIME')
if tonumber(o[2]) <= tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then
  return {-1, 'lease expired'}
end
local n = redis.call('LLEN', KEYS[1])
if n ~= tonumber(ARGV[2]) then return {-2, n} end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
return {1, n + #ARGV - 2}
"""

# Take the lease: refused ({0, holder, until}) while another node's lease is
# valid unless forced; otherwise the epoch goes up by one ({1, token, until}).
# ARGV: node, addr, lease ms, force ('1'). A pre-lease string owner counts as expired.
CLAIM_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local kind = redis.call('TYPE', KEYS[1])['ok']
local epoch, holder, till = 0, '', 0
if kind == 'string' then
  epoch = tonumber(string.match(redis.call('GET', KEYS[1]), ':(%d+)$')) or 0
  redis.call('DEL', KEYS[1])
elseif kind == 'hash' then
  local cur = redis.call('HMGET', KEYS[1], 'node', 'epoch', 'until')
  holder = cur[1] or ''
  epoch = tonumber(cur[2]) or 0
  till = tonumber(cur[3]) or 0
end
if holder ~= '' and holder ~= ARGV[1] and till > now and ARGV[4] ~= '1' then
  return {0, holder, till}
end
epoch = epoch + 1
local token = ARGV[1] .. ':' .. epoch
local untilms = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'node', ARGV[1], 'epoch', epoch, 'token', token,
           'until', untilms, 'addr', ARGV[2], 'claimed_ms', now)
if holder ~= '' then redis.call('HSET', KEYS[1], 'prev', holder) end
redis.call('HDEL', KEYS[1], 'next', 'next_addr')
return {1, token, untilms}
"""

# Extend a lease that is still valid: the new expiry, 0 (not ours) or -1 (expired).
RENEW_LUA = """
local o = redis.call('HMGET', KEYS[1], 'token', 'until')
if o[1] ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if tonumber(o[2]) <= now then return -1 end
local untilms = now + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'until', untilms)
return untilms
"""

# Give a lease up at once (drain): nobody may append until the next claim,
# which may happen immediately; ``next`` names the successor chosen. ARGV:
# token, next node, next addr.
RELEASE_LUA = """
local o = redis.call('HMGET', KEYS[1], 'token', 'node')
if o[1] ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'token', '', 'node', '', 'until', 0, 'released_ms', now,
           'prev', o[2], 'next', ARGV[2], 'next_addr', ARGV[3])
return 1
"""

UPDATE_META_LUA = """
local o = redis.call('HMGET', KEYS[2], 'token', 'until')
if o[1] ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
if tonumber(o[2]) <= tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) then
  return 0
end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
"""


def meta_key(match_id: str) -> str:
    return f"{{m:{match_id}}}:meta"


def log_key(match_id: str) -> str:
    return f"{{m:{match_id}}}:log"


def owner_key(match_id: str) -> str:
    return f"{{m:{match_id}}}:owner"


def encode_entry(entry: LogEntry) -> bytes:
    seat, action, timeout = entry
    return b"%d,%d,%d" % (seat, action, 1 if timeout else 0)


def decode_entry(raw: bytes) -> LogEntry:
    seat, action, timeout = raw.split(b",")
    return int(seat), int(action), timeout == b"1"


class StoreError(Exception):
    """The store refused a write."""


class TransientStoreError(StoreError):
    """The store cannot take writes for a moment (loading its AOF, a busy script,
    a cluster reconfiguring, a replica without its primary): retry."""


#: Error replies that mean "not now" rather than "no".
TRANSIENT_PREFIXES = ("LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN")


def store_error(reply: Exception) -> StoreError:
    """The StoreError for an error reply to one command of a pipeline."""
    text = str(reply)
    if text.startswith(TRANSIENT_PREFIXES) or isinstance(reply, ConnectionError):
        return TransientStoreError(text)
    return StoreError(text)


class NotDurableError(TransientStoreError):
    """The store accepted a write but could not confirm it durable in time (its
    AOF fsync, or the replicas asked for): it is not acknowledged."""


@dataclass(frozen=True, slots=True)
class Durability:
    """What the server waits for before it acknowledges anything.

    ``fsync_each``: every acknowledged action is in the store's AOF on disk
    (``--durability always``: the embedded Valkey runs ``appendfsync always``;
    an external store is asked ``WAITAOF 1 0`` after each batch). Without it
    (``everysec``) an OS crash of the store's machine can lose about the last
    second of actions. The end of a match always waits for the AOF (when the
    store keeps one). ``replicas``: every acknowledgement also waits (``WAIT``)
    until this many replicas have the write, at most ``wait_ms``."""

    fsync_each: bool = False
    replicas: int = 0
    wait_ms: int = 1000


class FencedError(StoreError):
    """This node no longer owns the match (another node claimed it)."""


class LogConflict(StoreError):
    """The log does not have the expected length."""

    def __init__(self, actual: int) -> None:
        super().__init__(f"log length is {actual}")
        self.actual = actual


@dataclass(slots=True)
class MatchRecord:
    match_id: str
    options: mpb.MatchOptions
    seed: int
    status: int
    created_ms: int
    token_hashes: dict[int, str] = field(default_factory=dict)
    joined: set[int] = field(default_factory=set)
    result: mpb.MatchResult | None = None


class _Scripts:
    def __init__(self) -> None:
        self.sha: dict[str, str] = {}

    async def load(self, client: aioredis.Redis) -> None:
        for name, body in (("append", APPEND_LUA), ("claim", CLAIM_LUA),
                           ("update_meta", UPDATE_META_LUA), ("renew", RENEW_LUA),
                           ("release", RELEASE_LUA)):
            self.sha[name] = await client.script_load(body)


class Store:
    """Async access to the match keys."""

    def __init__(self, url: str, max_inflight: int = 4) -> None:
        self.url = url
        # A blocking pool: a burst of calls (a few hundred matches created or
        # joined at once) waits for a free connection instead of failing.
        self.cluster_mode = is_cluster_url(url)
        #: Lease length and advertised address used by ``claim``.
        self.lease_ms = 2000
        self.advertise = ""
        self.redis: aioredis.Redis
        if self.cluster_mode:
            # Appends go through the cluster client's pipeline (split per primary).
            self.redis = cluster_client(url)
            target = None
        else:
            pool = aioredis.BlockingConnectionPool.from_url(
                url, decode_responses=False, health_check_interval=30,
                socket_keepalive=True, max_connections=64, timeout=20,
            )
            self.redis = aioredis.Redis(connection_pool=pool)
            target = fast_path_target(url)
        self.scripts = _Scripts()
        self.durability = Durability()
        #: Whether the store keeps an append-only file (WAITAOF is refused without).
        self.aof = False
        #: Finished matches' keys expire after this long (0: kept for good).
        self.retain_ms = 0
        self.fast: RespPipeline | None = RespPipeline(*target) if target else None
        self.appender = Appender(self, 64 if self.fast else max_inflight)

    async def connect(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                await self.redis.ping()
                break
            except RedisError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.1)
        await self.scripts.load(self.redis)
        await self.probe_persistence()

    async def probe_persistence(self) -> None:
        """Learn whether the store keeps an AOF (after a connect or a restart)."""
        if self.cluster_mode:
            self.aof = False
            return
        try:
            info: Any = await self.redis.info("persistence")
        except RedisError:
            self.aof = False
            return
        self.aof = bool(int(info.get("aof_enabled", 0)))

    def sync_commands(self, end: bool) -> list[tuple[Any, ...]]:
        """Commands that make the writes sent before them on the same connection
        durable as ``durability`` asks (``end``: the end of a match, which always
        waits for the AOF). Their replies: see ``check_sync``."""
        wait_ms = self.durability.wait_ms
        out: list[tuple[Any, ...]] = []
        if self.aof and (end or self.durability.fsync_each):
            out.append(("WAITAOF", 1, 0, wait_ms))
        if self.durability.replicas:
            out.append(("WAIT", self.durability.replicas, wait_ms))
        return out

    async def sync(self) -> None:
        """Wait until the writes this node sent are durable as ``durability`` asks
        (after an append whose reply was lost was found stored)."""
        commands = self.sync_commands(end=False)
        if not commands:
            return
        if self.fast is not None:
            replies = await self.fast.execute(commands)
        else:
            pipe = self.redis.pipeline(transaction=False)
            pipe.incr(SYNC_KEY)  # a write of this connection for the waits to cover
            for command in commands:
                pipe.execute_command(*command)
            replies = list(await pipe.execute(raise_on_error=False))[1:]
        self.check_sync(replies)

    def check_sync(self, replies: Sequence[Any]) -> None:
        """Raise NotDurableError unless every sync command of ``sync_commands`` got
        what it asked for."""
        for reply in replies:
            if isinstance(reply, Exception):
                raise NotDurableError(f"durability not confirmed: {reply}")
            if isinstance(reply, list):  # WAITAOF: [local fsyncs, replicas]
                if int(reply[0]) < 1:
                    raise NotDurableError("the store did not fsync its AOF in time")
            elif int(reply) < self.durability.replicas:
                raise NotDurableError(
                    f"{int(reply)} of {self.durability.replicas} replicas confirmed in time")

    async def close(self) -> None:
        await self.appender.drain()
        if self.fast is not None:
            await self.fast.close()
        if self.cluster_mode:
            await self.redis.aclose()
        else:
            await self.redis.aclose(close_connection_pool=True)

    async def _evalsha(self, name: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        try:
            return await self.redis.evalsha(self.scripts.sha[name], len(keys), *keys, *args)
        except NoScriptError:
            await self.scripts.load(self.redis)
            return await self.redis.evalsha(self.scripts.sha[name], len(keys), *keys, *args)

    # -- creation and records ---------------------------------------------

    async def create_match(self, record: MatchRecord) -> None:
        mid = record.match_id
        mapping: dict[str, bytes | str | int] = {
            "spec": record.options.SerializeToString(),
            "seed": str(record.seed),
            "status": record.status,
            "created_ms": record.created_ms,
            "game_id": record.options.game_id,
        }
        for seat, digest in record.token_hashes.items():
            mapping[f"tok:{seat}"] = digest
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(meta_key(mid), mapping=mapping)  # type: ignore[arg-type]
        pipe.zadd(MATCH_INDEX, {mid: record.created_ms})
        pipe.sadd(LIVE_SET, mid)
        await pipe.execute()

    async def exists(self, match_id: str) -> bool:
        return bool(await self.redis.exists(meta_key(match_id)))

    async def load(self, match_id: str) -> MatchRecord | None:
        raw: Any = await self.redis.hgetall(meta_key(match_id))
        if not raw:
            return None
        return _record_from_hash(match_id, raw)

    async def load_many(self, match_ids: Sequence[str]) -> list[MatchRecord | None]:
        pipe = self.redis.pipeline(transaction=False)
        for mid in match_ids:
            pipe.hgetall(meta_key(mid))
        rows = await pipe.execute()
        return [_record_from_hash(mid, raw) if raw else None
                for mid, raw in zip(match_ids, rows, strict=True)]

    async def load_log(self, match_id: str) -> list[LogEntry]:
        raw: Any = await self.redis.lrange(log_key(match_id), 0, -1)
        return [decode_entry(e) for e in raw]

    async def load_logs(self, match_ids: Sequence[str]) -> list[list[LogEntry]]:
        pipe = self.redis.pipeline(transaction=False)
        for mid in match_ids:
            pipe.lrange(log_key(mid), 0, -1)
        rows = await pipe.execute()
        return [[decode_entry(e) for e in row] for row in rows]

    async def drop_live(self, match_id: str) -> None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.srem(LIVE_SET, match_id)
        pipe.zrem(LEASES, match_id)
        await pipe.execute()

    async def page(self, before: tuple[int, str] | None, count: int) -> list[tuple[str, int]]:
        """Up to ``count`` (id, created_ms) newest first, strictly after ``before``."""
        if before is None:
            rows: Any = await self.redis.zrevrange(MATCH_INDEX, 0, count - 1, withscores=True)
            return [(m.decode(), int(s)) for m, s in rows]
        score, member = before
        out: list[tuple[str, int]] = []
        offset = 0
        while len(out) < count:
            rows = await self.redis.zrevrangebyscore(
                MATCH_INDEX, score, "-inf", start=offset, num=count + 16, withscores=True)
            if not rows:
                break
            offset += len(rows)
            for m, s in rows:
                mid, created = m.decode(), int(s)
                if created == score and mid >= member:
                    continue
                out.append((mid, created))
                if len(out) >= count:
                    break
        return out

    # -- ownership and fenced writes ----------------------------------------

    async def claim(self, match_id: str, node_id: str, force: bool = True) -> str:
        """Become the owner of a match: take its lease (``lease_ms``) and bump its
        fencing epoch; returns the token appends present. Without ``force`` a
        valid lease of another node is respected (``FencedError``)."""
        res = await self._evalsha("claim", [owner_key(match_id)],
                                  [node_id, self.advertise, self.lease_ms, 1 if force else 0])
        value = res[1]
        text = value.decode() if isinstance(value, bytes) else str(value)
        if int(res[0]) != 1:
            raise FencedError(f"match {match_id}: owned by {text} (lease valid)")
        return text

    async def update_meta(self, match_id: str, owner: str,
                          fields: dict[str, bytes | str | int]) -> None:
        args: list[Any] = [owner]
        for key, value in fields.items():
            args += [key, value]
        ok = await self._evalsha("update_meta", [meta_key(match_id), owner_key(match_id)], args)
        if not ok:
            raise FencedError(f"match {match_id}: this node is no longer its owner")

    async def finish_match(self, match_id: str, owner: str, status: int,
                           result: bytes) -> None:
        """Store the end of a match (status, result), take it off the live index,
        set its retention, and wait until that is durable: one connection, so the
        sync commands cover these writes. Raises FencedError, NotDurableError or a
        RedisError; nobody may be told the end before this returns."""
        mid = match_id
        for attempt in range(2):
            pipe = self.redis.pipeline(transaction=False)
            pipe.execute_command("EVALSHA", self.scripts.sha["update_meta"], 2, meta_key(mid),
                                 owner_key(mid), owner, "status", status, "result", result)
            pipe.srem(LIVE_SET, mid)
            pipe.zrem(LEASES, mid)
            if self.retain_ms:
                for key in (meta_key(mid), log_key(mid), owner_key(mid)):
                    pipe.pexpire(key, self.retain_ms)
            sync = [] if self.cluster_mode else self.sync_commands(end=True)
            for command in sync:
                pipe.execute_command(*command)
            replies = await pipe.execute(raise_on_error=False)
            first = replies[0]
            if isinstance(first, NoScriptError) and attempt == 0:
                await self.scripts.load(self.redis)
                continue
            if isinstance(first, Exception):
                raise first
            if not first:
                raise FencedError(f"match {mid}: this node is no longer its owner")
            for reply in replies[1:len(replies) - len(sync)]:
                if isinstance(reply, Exception):
                    raise reply
            self.check_sync(replies[len(replies) - len(sync):])
            return

    async def trim_index(self, before_ms: int, count: int = 500) -> int:
        """Drop from the match index up to ``count`` matches created before
        ``before_ms`` whose keys have expired; returns how many."""
        raw: Any = await self.redis.zrangebyscore(MATCH_INDEX, "-inf", before_ms,
                                                  start=0, num=count)
        ids = [m.decode() if isinstance(m, bytes) else str(m) for m in raw]
        if not ids:
            return 0
        pipe = self.redis.pipeline(transaction=False)
        for mid in ids:
            pipe.exists(meta_key(mid))
        gone = [mid for mid, n in zip(ids, await pipe.execute(), strict=True) if not n]
        if gone:
            await self.redis.zrem(MATCH_INDEX, *gone)
        return len(gone)

    async def entry_at(self, match_id: str, index: int) -> LogEntry | None:
        raw: Any = await self.redis.lindex(log_key(match_id), index)
        return decode_entry(raw) if raw is not None else None


def _record_from_hash(match_id: str, raw: dict[bytes, bytes]) -> MatchRecord:
    options = mpb.MatchOptions.FromString(raw[b"spec"])
    record = MatchRecord(
        match_id=match_id,
        options=options,
        seed=int(raw[b"seed"]),
        status=int(raw[b"status"]),
        created_ms=int(raw[b"created_ms"]),
    )
    for key, value in raw.items():
        if key.startswith(b"tok:"):
            record.token_hashes[int(key[4:])] = value.decode()
        elif key.startswith(b"joined:"):
            record.joined.add(int(key[7:]))
    if b"result" in raw:
        record.result = mpb.MatchResult.FromString(raw[b"result"])
    return record


@dataclass(slots=True)
class _Append:
    match_id: str
    owner: str
    expected_len: int
    entries: tuple[bytes, ...]
    future: asyncio.Future[int]
    started: float


class Appender:
    """Collects log appends and sends each event-loop tick's batch as one pipeline."""

    def __init__(self, store: Store, max_inflight: int = 4) -> None:
        self.store = store
        self.max_inflight = max_inflight
        self._pending: list[_Append] = []
        self._scheduled = False
        self._inflight = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: (sha, match id, owner, entries) -> the RESP bytes of an EVALSHA up to its
        #: expected-length argument (the same for every append of a match).
        self._prefixes: dict[tuple[str, str, str, int], bytes] = {}

    def append(self, match_id: str, owner: str, expected_len: int,
               entries: Iterable[LogEntry]) -> asyncio.Future[int]:
        """Queue an append; the future gives the new log length or raises
        ``FencedError``, ``LogConflict`` or a ``RedisError``."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        fut: asyncio.Future[int] = loop.create_future()
        self._pending.append(_Append(match_id, owner, expected_len,
                                     tuple(encode_entry(e) for e in entries), fut,
                                     time.perf_counter()))
        self._idle.clear()
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._kick)
        return fut

    def _kick(self) -> None:
        self._scheduled = False
        if not self._pending or self._inflight >= self.max_inflight:
            return
        batch, self._pending = self._pending, []
        self._inflight += 1
        metrics.APPEND_BATCH.observe(len(batch))
        assert self._loop is not None
        task = self._loop.create_task(self._flush(batch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _flush(self, batch: list[_Append]) -> None:
        try:
            await self._send(batch)
        finally:
            self._inflight -= 1
            if self._pending:
                self._kick()
            elif self._inflight == 0:
                self._idle.set()

    async def _execute(self, batch: list[_Append]) -> list[Any]:
        store = self.store
        sha = store.scripts.sha["append"]
        if store.fast is not None:
            prefix = self._prefix
            payload = b"".join([
                prefix(sha, item) + bulk(item.expected_len) + b"".join(map(bulk, item.entries))
                for item in batch])
            # The sync commands ride on the same connection: they cover these writes.
            sync = store.sync_commands(end=False)
            payload += b"".join(encode_command(c) for c in sync)
            replies = await store.fast.execute_encoded(payload, len(batch) + len(sync))
        else:
            pipe = store.redis.pipeline(transaction=False)
            for item in batch:
                # execute_command: cluster pipelines refuse the evalsha() helper.
                pipe.execute_command("EVALSHA", sha, 2, log_key(item.match_id),
                                     owner_key(item.match_id), item.owner, item.expected_len,
                                     *item.entries)
            sync = [] if store.cluster_mode else store.sync_commands(end=False)
            for command in sync:
                pipe.execute_command(*command)
            replies = list(await pipe.execute(raise_on_error=False))
        # Not durable as asked: every append of the batch is retried (the runner
        # then finds its entry stored and waits for durability again, see ``sync``).
        store.check_sync(replies[len(batch):])
        return replies[:len(batch)]

    def _prefix(self, sha: str, item: _Append) -> bytes:
        key = (sha, item.match_id, item.owner, len(item.entries))
        prefix = self._prefixes.get(key)
        if prefix is None:
            if len(self._prefixes) >= 65_536:
                self._prefixes.clear()
            args: list[bytes | str | int] = ["EVALSHA", sha, 2, log_key(item.match_id),
                                             owner_key(item.match_id), item.owner]
            prefix = b"*%d\r\n" % (len(args) + 1 + len(item.entries)) + b"".join(
                bulk(arg) for arg in args)
            self._prefixes[key] = prefix
        return prefix

    async def _send(self, batch: list[_Append]) -> None:
        store = self.store
        for attempt in range(2):
            try:
                results = await self._execute(batch)
            except Exception as exc:
                # Whatever failed (a closed transport, a cluster client in the middle
                # of a reconfiguration), every append of the batch gets an answer: a
                # retryable one, so the runners retry within their lease.
                metrics.ERRORS.labels("redis").inc()
                error = TransientStoreError(f"{type(exc).__name__}: {exc}")
                for item in batch:
                    if not item.future.done():
                        item.future.set_exception(error)
                return
            retry: list[_Append] = []
            now = time.perf_counter()
            for item, res in zip(batch, results, strict=True):
                if item.future.done():
                    continue
                noscript = isinstance(res, NoScriptError) or (
                    isinstance(res, RespError) and str(res).startswith("NOSCRIPT"))
                if noscript and attempt == 0:
                    retry.append(item)
                elif isinstance(res, Exception):
                    metrics.ERRORS.labels("redis").inc()
                    item.future.set_exception(store_error(res))
                else:
                    code, value = int(res[0]), res[1]
                    metrics.APPEND_LATENCY.observe(now - item.started)
                    if code == 1:
                        item.future.set_result(int(value))
                    elif code == -1:
                        metrics.ERRORS.labels("fenced_append").inc()
                        item.future.set_exception(FencedError(
                            f"match {item.match_id}: owner is now {value!r}"))
                    else:
                        item.future.set_exception(LogConflict(int(value)))
            if not retry:
                return
            with contextlib.suppress(ResponseError):
                await store.scripts.load(store.redis)
            batch = retry
        for item in batch:
            if not item.future.done():
                item.future.set_exception(StoreError("append script could not be loaded"))

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait until every queued append has its answer."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
