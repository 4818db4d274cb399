"""Matches in the store: records, the action log, their lease, the indexes.

Keys (see ``keys``): ``{m:<id>}:meta``, ``{m:<id>}:log``, ``{m:<id>}:owner``
(the lease), and the indexes ``twistarena:matches``, ``twistarena:live`` and
``{twistarena}:leases``. Appends go through ``Appender`` (batched, fenced).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from twistarena.v1 import match_pb2 as mpb

from . import keys
from .connection import Connections, StorePart
from .durability import Durability
from .errors import (
    EndStored,
    FencedError,
    LogConflict,
    StoreError,
    TransientStoreError,
    driver_errors,
    translate,
)
from .leases import Grant, Holder, Leases
from .replies import text
from .resp import Arg
from .scripts import Scripts, is_noscript

#: (seat, action id, settled by the fallback)
LogEntry = tuple[int, int, bool]


def encode_entry(entry: LogEntry) -> bytes:
    """A log entry as stored: ``seat,action,timeout`` (short, and readable in redis-cli)."""
    seat, action, timeout = entry
    return b"%d,%d,%d" % (seat, action, 1 if timeout else 0)


def decode_entry(raw: bytes) -> LogEntry:
    """A stored log entry back as (seat, action, timeout)."""
    seat, action, timeout = raw.split(b",")
    return int(seat), int(action), timeout == b"1"


@dataclass(slots=True)
class MatchRecord:
    """A match's stored metadata (``{m:<id>}:meta``)."""

    match_id: str
    options: mpb.MatchOptions
    seed: int
    status: int
    created_ms: int
    token_hashes: dict[int, str] = field(default_factory=dict)
    joined: set[int] = field(default_factory=set)
    result: mpb.MatchResult | None = None
    #: When the end was stored (ms since the epoch; 0: not over, or ended before
    #: the field was kept). A reader tells a fresh end only once it is durable.
    ended_ms: int = 0
    #: Seat -> when (ms since the epoch) its stream was last seen gone while the
    #: match ran (absent or 0: it is back). A node that takes the match over
    #: waits out only what is left of that seat's reconnect grace.
    away_ms: dict[int, int] = field(default_factory=dict)
    #: Seat -> the SeatAssignment (bytes) of a seat played by the runners.
    hosted: dict[int, bytes] = field(default_factory=dict)
    #: Seat -> the Rewound (bytes) it is owed: it was away when the match was
    #: rewound, and whichever node runs the match tells it when it comes back.
    owed: dict[int, bytes] = field(default_factory=dict)
    #: The match's latest Rewound (bytes; empty: never rewound), told to a
    #: spectator resuming past it.
    rewound: bytes = b""


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
        elif key.startswith(b"away:") and int(value):
            record.away_ms[int(key[5:])] = int(value)
        elif key.startswith(b"hosted:"):
            record.hosted[int(key[7:])] = value
        elif key.startswith(b"rewound:") and value:
            record.owed[int(key[8:])] = value
    if b"result" in raw:
        record.result = mpb.MatchResult.FromString(raw[b"result"])
    if b"ended_ms" in raw:
        record.ended_ms = int(raw[b"ended_ms"])
    record.rewound = raw.get(b"rewound", b"")
    return record


#: Statuses of a match that is over (its end stored).
MATCH_OVER_STATUSES = frozenset({mpb.MATCH_STATUS_FINISHED, mpb.MATCH_STATUS_CANCELLED})

#: How long the key written for a cluster's WAITAOF of a match's end lives.
SYNC_KEY_TTL_MS = 60_000


class Matches(StorePart):
    """Records, logs and leases of matches."""

    def __init__(self, conn: Connections, scripts: Scripts, holder: Holder,
                 durability: Durability, retain_ms: int = 0) -> None:
        super().__init__(conn)
        self.scripts = scripts
        self.leases = Leases(conn, scripts, holder, keys.match_lease)
        self.durability = durability
        #: Finished matches' keys expire after this long (0: kept for good).
        self.retain_ms = retain_ms
        #: Whether the store keeps an append-only file (WAITAOF is refused without);
        #: learnt by ``Store.probe_persistence``.
        self.aof = False

    # -- creation and records ---------------------------------------------

    async def create(self, record: MatchRecord, claim: bool = False,
                     ) -> Grant | StoreError | None:
        """Store a new match and list it (index, live set, and the lease index as
        owned by nobody yet), in one pipeline. ``claim``: this node also takes its
        lease in that round trip (a Grant, None when refused, or the claim's
        error, as ``Leases.claim_many`` answers); else None."""
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
        for seat, assignment in record.hosted.items():
            mapping[f"hosted:{seat}"] = assignment
        with driver_errors():
            pipe = self.conn.batch()
            pipe.hset(keys.match_meta(mid), mapping=mapping)
            pipe.zadd(keys.MATCH_INDEX, {mid: record.created_ms})
            pipe.sadd(keys.LIVE_MATCHES, mid)
            pipe.zadd(keys.MATCH_LEASES, {mid: 0})
            if claim:
                script, lease, args = self.leases.claim_call(mid)
                pipe.execute_command(*script.command(lease, args))
            replies = await pipe.execute(raise_on_error=False)
        for reply in replies[:4]:
            if isinstance(reply, Exception):
                raise translate(reply)
        if not claim:
            return None
        if is_noscript(replies[4]):  # a store that restarted forgot the scripts
            [grant] = await self.leases.claim_many([mid])
            return grant
        return self.leases.granted(replies[4])

    async def exists(self, match_id: str) -> bool:
        """The match is in the store (its keys may have expired after retention)."""
        with driver_errors():
            return bool(await self._redis.exists(keys.match_meta(match_id)))

    async def load(self, match_id: str) -> MatchRecord | None:
        """The match's record, None if the store has no such match."""
        return await self._hash_record(keys.match_meta(match_id),
                                       lambda raw: _record_from_hash(match_id, raw))

    async def load_many(self, match_ids: Sequence[str]) -> list[MatchRecord | None]:
        """The records of ``match_ids`` in one round trip (None where missing)."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for mid in match_ids:
                pipe.hgetall(keys.match_meta(mid))
            rows = await pipe.execute()
        return [_record_from_hash(mid, raw) if raw else None
                for mid, raw in zip(match_ids, rows, strict=True)]

    async def load_log(self, match_id: str) -> list[LogEntry]:
        """The match's whole action log."""
        with driver_errors():
            raw: Any = await self._redis.lrange(keys.match_log(match_id), 0, -1)
        return [decode_entry(e) for e in raw]

    async def load_logs(self, match_ids: Sequence[str]) -> list[list[LogEntry]]:
        """The logs of ``match_ids`` in one round trip."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for mid in match_ids:
                pipe.lrange(keys.match_log(mid), 0, -1)
            rows = await pipe.execute()
        return [[decode_entry(e) for e in row] for row in rows]

    async def log_lengths(self, match_ids: Sequence[str]) -> list[int]:
        """How many entries the logs of ``match_ids`` hold, in one round trip."""
        replies = await self._read_together(*(("LLEN", keys.match_log(m)) for m in match_ids))
        return [int(n) for n in replies]

    async def entry_at(self, match_id: str, index: int) -> LogEntry | None:
        """One log entry (None past the end)."""
        with driver_errors():
            raw: Any = await self._redis.lindex(keys.match_log(match_id), index)
        return decode_entry(raw) if raw is not None else None

    async def drop_live(self, match_id: str) -> None:
        """The match is over: out of the live set and the lease index."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            pipe.srem(keys.LIVE_MATCHES, match_id)
            pipe.zrem(keys.MATCH_LEASES, match_id)
            await pipe.execute()

    async def page(self, before: tuple[int, str] | None, count: int) -> list[tuple[str, int]]:
        """Up to ``count`` (id, created_ms) newest first, strictly after ``before``."""
        redis = self._redis
        with driver_errors():
            if before is None:
                rows: Any = await redis.zrevrange(keys.MATCH_INDEX, 0, count - 1,
                                                  withscores=True)
                return [(m.decode(), int(s)) for m, s in rows]
            score, member = before
            out: list[tuple[str, int]] = []
            offset = 0
            while len(out) < count:
                rows = await redis.zrevrangebyscore(
                    keys.MATCH_INDEX, score, "-inf", start=offset, num=count + 16,
                    withscores=True)
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

    async def trim_index(self, before_ms: int, count: int = 500) -> int:
        """Drop from the match index up to ``count`` matches created before
        ``before_ms`` whose keys have expired (retention); returns how many."""
        redis = self._redis
        with driver_errors():
            raw: Any = await redis.zrangebyscore(keys.MATCH_INDEX, "-inf", before_ms,
                                                 start=0, num=count)
            ids = [text(m) for m in raw]
            if not ids:
                return 0
            pipe = redis.pipeline(transaction=False)
            for mid in ids:
                pipe.exists(keys.match_meta(mid))
            gone = [mid for mid, n in zip(ids, await pipe.execute(), strict=True) if not n]
            if gone:
                await redis.zrem(keys.MATCH_INDEX, *gone)
        return len(gone)

    # -- ownership and fenced writes ----------------------------------------

    async def claim(self, match_id: str, force: bool = True) -> str:
        """Become the owner of a match: take its lease and bump its fencing epoch;
        returns the token appends present. Without ``force`` a valid lease of
        another node is respected (``FencedError``)."""
        grant: Grant = await self.leases.claim(match_id, force)
        return grant.token

    async def update_meta(self, match_id: str, owner: str, fields: Mapping[str, Arg]) -> None:
        """Write metadata fields while ``owner`` holds the lease (``FencedError`` else)."""
        await self.leases.fenced_hset(match_id, owner, keys.match_meta(match_id), fields)

    async def finish(self, match_id: str, owner: str, status: int, result: bytes,
                     log_len: int, last: LogEntry | None) -> None:
        """Store the end of a match (status, result) and its retention, take it off
        the live index and the lease index, and wait until that is durable: one
        connection, so the sync commands cover these writes.

        The end is written only on the log it was computed from: ``log_len``
        entries, the last one ``last``, checked in the same script as the owner
        token (``lua/finish.lua``). A store that came back without the log's
        tail raises ``LogConflict``; a lost lease ``FencedError``; else
        ``NotDurableError`` or another StoreError. Nobody may be told the end
        before this returns."""
        mid = match_id
        script = self.scripts.finish
        for attempt in range(2):
            sync = [] if self.conn.cluster_mode else self.durability.sync_commands(
                self.aof, end=True)
            with driver_errors():
                pipe = self.conn.batch(len(sync) * self.durability.wait_ms / 1000)
                pipe.execute_command(*script.command(
                    [keys.match_meta(mid), keys.match_log(mid), keys.match_lease(mid)],
                    [owner, log_len, encode_entry(last) if last is not None else b"",
                     self.retain_ms, "status", status, "result", result,
                     "ended_ms", int(time.time() * 1000)]))
                pipe.srem(keys.LIVE_MATCHES, mid)
                pipe.zrem(keys.MATCH_LEASES, mid)
                for command in sync:
                    pipe.execute_command(*command)
                replies = await pipe.execute(raise_on_error=False)
            first = replies[0]
            if is_noscript(first) and attempt == 0:
                with driver_errors():
                    await self.scripts.reload(self.conn.redis)
                continue
            if isinstance(first, (Exception, list)) or not first:
                # Taken off the indexes for nothing: back, since the match goes on
                # (rewound, voided by a later finish, or run by the node that
                # fenced this one); out of them, a RUNNING match whose owner dies
                # would never be taken over. The next beat renews its lease
                # expiry in the lease index.
                await self._back_in_indexes(mid, quiet=isinstance(first, Exception))
            if isinstance(first, Exception):
                raise translate(first)
            if isinstance(first, list):
                if int(first[0]) == -3:
                    raise EndStored(mid, int(first[1]))
                raise LogConflict(int(first[1]))
            if not first:
                raise FencedError(f"match {mid}: this node is no longer its owner")
            for reply in replies[1:len(replies) - len(sync)]:
                if isinstance(reply, Exception):
                    raise translate(reply)
            self.durability.check(replies[len(replies) - len(sync):])
            if self.conn.cluster_mode:
                await self.shard_durable(mid)
            return
        raise TransientStoreError(f"match {mid}: the finish script could not be loaded")

    async def _back_in_indexes(self, match_id: str, quiet: bool) -> None:
        """A match whose end was refused goes back into the live set and the lease
        index, unless another node ended it meanwhile. ``quiet``: the store is
        failing anyway; the refusal, not this, is the caller's error."""
        try:
            with driver_errors():
                status = await self._redis.hget(keys.match_meta(match_id), "status")
                if status is not None and int(status) in MATCH_OVER_STATUSES:
                    return
                pipe = self._redis.pipeline(transaction=False)
                pipe.sadd(keys.LIVE_MATCHES, match_id)
                pipe.zadd(keys.MATCH_LEASES, {match_id: 0}, nx=True)
                await pipe.execute()
        except StoreError:
            if not quiet:
                raise

    async def shard_durable(self, match_id: str, end: bool = True) -> None:
        """In a cluster: wait until the writes the match's primary executed so far
        are durable as an end asks (its AOF fsynced, its replicas; ``end`` False:
        as an append asks, nothing unless ``--durability always`` or replicas). A cluster
        pipeline cannot carry the wait after the match's writes on their
        connection, so the wait covers a write of its own in the match's slot
        (an AOF is in order: that write fsynced, every earlier one is).
        ``NotDurableError`` when the primary cannot confirm it in time."""
        sync = self.durability.sync_commands(self.aof, end=end)
        if not sync:
            return
        with driver_errors():
            pipe = self.conn.shard(keys.match_meta(match_id)).pipeline(transaction=False)
            pipe.set(keys.match_sync(match_id), 1, px=SYNC_KEY_TTL_MS)
            for command in sync:
                pipe.execute_command(*command)
            replies = list(await pipe.execute(raise_on_error=False))
        if isinstance(replies[0], Exception):
            raise translate(replies[0])
        self.durability.check(replies[1:])
