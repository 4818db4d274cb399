"""Batched, fenced appends to the action logs of many matches.

Appends of many matches made in the same event-loop tick travel in one
pipeline of EVALSHA ``append`` calls: on the lean connection when there is
one (``connection`` says when), else through redis-py. Each append checks the
lease token and the expected log length (``lua/append.lua``), so two writers
can never both append.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import keys, metrics
from .connection import Connections
from .errors import FencedError, LogConflict, TransientStoreError, translate
from .matches import LogEntry, Matches, encode_entry
from .resp import bulk, encode_command
from .scripts import Scripts, is_noscript


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

    def __init__(self, conn: Connections, scripts: Scripts, matches: Matches,
                 max_inflight: int = 4) -> None:
        self.conn = conn
        self.scripts = scripts
        #: Whose durability settings each batch waits for.
        self.matches = matches
        self.max_inflight = max_inflight
        self._pending: list[_Append] = []
        self._scheduled = False
        self._inflight = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: match id -> (its owner's token, {entries per append: the RESP bytes of an
        #: EVALSHA up to its expected-length argument}); dropped by ``forget``.
        self._prefixes: dict[str, tuple[str, dict[int, bytes]]] = {}

    def append(self, match_id: str, owner: str, expected_len: int,
               entries: Iterable[LogEntry]) -> asyncio.Future[int]:
        """Queue an append; the future gives the new log length or raises
        ``FencedError``, ``LogConflict``, ``TransientStoreError`` or ``StoreError``."""
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

    async def _execute(self, batch: list[_Append], load: bool = False) -> list[Any]:
        """Send one batch (``load``: the append script first, on the same
        connection, for a server that forgot it); the appends' replies."""
        lean = self.conn.lean_for(self.scripts.append.name)
        matches = self.matches
        if lean is not None:
            prefix = self._prefix
            payload = b"".join([
                prefix(item) + bulk(item.expected_len) + b"".join(map(bulk, item.entries))
                for item in batch])
            # The sync commands ride on the same connection: they cover these writes.
            sync = matches.durability.sync_commands(matches.aof, end=False)
            payload += b"".join(encode_command(c) for c in sync)
            loading = [("SCRIPT", "LOAD", self.scripts.append.source)] if load else []
            payload = b"".join(encode_command(c) for c in loading) + payload
            replies = await lean.execute_encoded(payload,
                                                 len(loading) + len(batch) + len(sync))
            replies = replies[len(loading):]
        else:
            if load:
                await self.scripts.reload(self.conn.redis)
            script = self.scripts.append
            pipe = self.conn.redis.pipeline(transaction=False)
            for item in batch:
                # execute_command: cluster pipelines refuse the evalsha() helper.
                pipe.execute_command(*script.command(
                    [keys.match_log(item.match_id), keys.match_lease(item.match_id)],
                    [item.owner, item.expected_len, *item.entries]))
            sync = [] if self.conn.cluster_mode else matches.durability.sync_commands(
                matches.aof, end=False)
            for command in sync:
                pipe.execute_command(*command)
            replies = list(await pipe.execute(raise_on_error=False))
        # Not durable as asked: every append of the batch is retried (the runner
        # then finds its entry stored and waits for durability again, see
        # ``Store.sync``).
        matches.durability.check(replies[len(batch):])
        return replies[:len(batch)]

    def _prefix(self, item: _Append) -> bytes:
        cached = self._prefixes.get(item.match_id)
        if cached is None or cached[0] != item.owner:
            if len(self._prefixes) >= 65_536:  # matches never forgotten: a backstop
                self._prefixes.clear()
            cached = self._prefixes[item.match_id] = (item.owner, {})
        by_count = cached[1]
        count = len(item.entries)
        prefix = by_count.get(count)
        if prefix is None:
            args: list[bytes | str | int] = [
                "EVALSHA", self.scripts.append.sha, 2, keys.match_log(item.match_id),
                keys.match_lease(item.match_id), item.owner]
            prefix = b"*%d\r\n" % (len(args) + 1 + count) + b"".join(
                bulk(arg) for arg in args)
            by_count[count] = prefix
        return prefix

    def forget(self, match_id: str) -> None:
        """``match_id`` no longer runs here: drop what was kept to append to it (else
        the node would keep some for every match it ever ran)."""
        self._prefixes.pop(match_id, None)

    def keeps(self, match_id: str) -> bool:
        """Whether the encoding of ``match_id``'s appends is kept (it runs here)."""
        return match_id in self._prefixes

    async def _send(self, batch: list[_Append]) -> None:
        for attempt in range(2):
            try:
                # A retry after NOSCRIPT (a restarted server) loads the script on the
                # very connection the batch goes on, so no other connection's
                # state (a pool connection to the old server) can defeat it.
                results = await self._execute(batch, load=attempt > 0)
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
                if is_noscript(res) and attempt == 0:
                    retry.append(item)
                elif isinstance(res, Exception):
                    metrics.ERRORS.labels("redis").inc()
                    item.future.set_exception(translate(res))
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
            batch = retry
        for item in batch:
            if not item.future.done():
                # The server forgot the script again (restarted once more): retried
                # by the runner within its lease, like any store outage.
                item.future.set_exception(TransientStoreError(
                    "append script could not be loaded"))

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait until every queued append has its answer."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)
