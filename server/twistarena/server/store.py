"""Every match in Redis/Valkey, and the fenced, batched action log.

Keys of one match share the hash tag ``{m:<id>}`` so the match lives in one
cluster slot:

``{m:<id>}:meta``   hash: ``spec`` (MatchOptions bytes, seed and clock
                    resolved), ``seed``, ``status``, ``created_ms``,
                    ``tok:<seat>`` (sha256 of the seat token), ``joined:<seat>``,
                    ``result`` (MatchResult bytes)
``{m:<id>}:log``    list: the append-only action log, one ``seat,action,timeout``
                    entry per action
``{m:<id>}:owner``  string ``<node id>:<epoch>``: the node that may append

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
from .resp import RespError, RespPipeline, fast_path_target

MATCH_INDEX = "twistarena:matches"
LIVE_SET = "twistarena:live"

#: (seat, action id, settled by the fallback)
LogEntry = tuple[int, int, bool]

APPEND_LUA = """
local owner = redis.call('GET', KEYS[2])
if owner ~= ARGV[1] then return {-1, owner or ''} end
local n = redis.call('LLEN', KEYS[1])
if n ~= tonumber(ARGV[2]) then return {-2, n} end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
return {1, n + #ARGV - 2}
"""

CLAIM_LUA = """
local cur = redis.call('GET', KEYS[1])
local epoch = 0
if cur then epoch = tonumber(string.match(cur, ':(%d+)$')) or 0 end
epoch = epoch + 1
local value = ARGV[1] .. ':' .. epoch
redis.call('SET', KEYS[1], value)
return value
"""

UPDATE_META_LUA = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
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
                           ("update_meta", UPDATE_META_LUA)):
            self.sha[name] = await client.script_load(body)


class Store:
    """Async access to the match keys."""

    def __init__(self, url: str, max_inflight: int = 4) -> None:
        self.url = url
        self.redis: aioredis.Redis = aioredis.Redis.from_url(
            url, decode_responses=False, health_check_interval=30,
            socket_keepalive=True, max_connections=64,
        )
        self.scripts = _Scripts()
        target = fast_path_target(url)
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

    async def close(self) -> None:
        await self.appender.drain()
        if self.fast is not None:
            await self.fast.close()
        await self.redis.aclose()

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

    async def log_lengths(self, match_ids: Sequence[str]) -> list[int]:
        pipe = self.redis.pipeline(transaction=False)
        for mid in match_ids:
            pipe.llen(log_key(mid))
        return [int(n) for n in await pipe.execute()]

    async def live_ids(self) -> list[str]:
        raw: Any = await self.redis.smembers(LIVE_SET)
        return sorted(m.decode() for m in raw)

    async def drop_live(self, match_id: str) -> None:
        await self.redis.srem(LIVE_SET, match_id)

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

    async def claim(self, match_id: str, node_id: str) -> str:
        """Become the owner of a match: bump its fencing epoch; returns the owner value."""
        value = await self._evalsha("claim", [owner_key(match_id)], [node_id])
        return value.decode() if isinstance(value, bytes) else str(value)

    async def update_meta(self, match_id: str, owner: str,
                          fields: dict[str, bytes | str | int]) -> None:
        args: list[Any] = [owner]
        for key, value in fields.items():
            args += [key, value]
        ok = await self._evalsha("update_meta", [meta_key(match_id), owner_key(match_id)], args)
        if not ok:
            raise FencedError(f"match {match_id}: this node is no longer its owner")

    async def set_unfenced(self, match_id: str, fields: dict[str, bytes | str | int]) -> None:
        """For matches nobody owns (e.g. cancelling a match that no node runs)."""
        mapping: Any = fields
        await self.redis.hset(meta_key(match_id), mapping=mapping)

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

    def append(self, match_id: str, owner: str, expected_len: int,
               entries: Iterable[LogEntry]) -> asyncio.Future[int]:
        """Queue an append; the future gives the new log length or raises
        ``FencedError``, ``LogConflict`` or a ``RedisError``."""
        loop = asyncio.get_running_loop()
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
        task = asyncio.get_running_loop().create_task(self._flush(batch))
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
            return await store.fast.execute([
                ["EVALSHA", sha, 2, log_key(item.match_id), owner_key(item.match_id),
                 item.owner, item.expected_len, *item.entries] for item in batch])
        pipe = store.redis.pipeline(transaction=False)
        for item in batch:
            pipe.evalsha(sha, 2, log_key(item.match_id), owner_key(item.match_id),
                         item.owner, item.expected_len, *item.entries)
        return list(await pipe.execute(raise_on_error=False))

    async def _send(self, batch: list[_Append]) -> None:
        store = self.store
        for attempt in range(2):
            try:
                results = await self._execute(batch)
            except (RedisError, OSError) as exc:
                metrics.ERRORS.labels("redis").inc()
                for item in batch:
                    if not item.future.done():
                        item.future.set_exception(exc)
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
                    item.future.set_exception(StoreError(str(res)))
                else:
                    code, value = int(res[0]), res[1]
                    metrics.APPEND_LATENCY.observe(now - item.started)
                    if code == 1:
                        item.future.set_result(int(value))
                    elif code == -1:
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
