"""Batched, fenced appends to the action logs of many matches.

Appends of many matches made in the same event-loop tick travel together:
on the lean connection when there is one (``connection`` says when), as one
EVALSHA of ``lua/append.lua`` for the whole batch (the store then runs one
script per batch, not one per match); else through redis-py, as a pipeline
of ``append.lua`` calls, one per match (a cluster keeps each match's keys on
a slot of their own). Either way each append checks its match's lease token
and expected log length, so two writers can never both append.
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
from .resp import bulk, bulk_int, encode_command
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
        #: match id -> (its owner's token, the RESP bytes of its two keys and of the
        #: token) for ``append.lua`` calls; dropped by ``forget``.
        self._encoded: dict[str, tuple[str, bytes, bytes]] = {}

    def append(self, match_id: str, owner: str, expected_len: int,
               entries: Iterable[LogEntry]) -> asyncio.Future[int]:
        """Queue an append; the future gives the new log length or raises
        ``FencedError``, ``LogConflict``, ``TransientStoreError`` or ``StoreError``."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        fut: asyncio.Future[int] = loop.create_future()
        self._pending.append(_Append(match_id, owner, expected_len,
                                     tuple([encode_entry(e) for e in entries]), fut,
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
        connection, for a server that forgot it); each append's reply, ``[code,
        value]`` as ``append.lua`` gives it per match, or the exception of a failed call.

        Not durable as asked (``Durability.check`` raises): every append of the
        batch is retried (the runner then finds its entry stored and waits for
        durability again, see ``Store.sync``)."""
        matches = self.matches
        lean = self.conn.lean_for(self.scripts.append.name)
        if lean is None:
            if load:
                await self.scripts.reload(self.conn.redis)
            script = self.scripts.append
            pipe = self.conn.redis.pipeline(transaction=False)
            for item in batch:
                # execute_command: cluster pipelines refuse the evalsha() helper.
                pipe.execute_command(*script.command(
                    [keys.match_log(item.match_id), keys.match_lease(item.match_id)],
                    [item.owner, item.expected_len, len(item.entries), *item.entries]))
            sync = [] if self.conn.cluster_mode else matches.durability.sync_commands(
                matches.aof, end=False)
            for command in sync:
                pipe.execute_command(*command)
            replies = list(await pipe.execute(raise_on_error=False))
            matches.durability.check(replies[len(batch):])
            if self.conn.cluster_mode:
                # One wait per primary the batch wrote to, behind a write there.
                by_primary = {id(self.conn.shard(keys.match_meta(i.match_id))): i.match_id
                              for i in batch}
                await asyncio.gather(*(matches.shard_durable(mid, end=False)
                                       for mid in by_primary.values()))
            return replies[:len(batch)]
        script = self.scripts.append
        keys_part: list[bytes] = []
        args_part: list[bytes] = []
        words = 3
        for item in batch:
            encoded_keys, token = self._encode(item)
            keys_part.append(encoded_keys)
            entries = item.entries
            # ``bulk`` of each word, written out: its type is known here.
            args_part += [token, bulk_int(item.expected_len), bulk_int(len(entries)),
                          *[b"$%d\r\n%s\r\n" % (len(e), e) for e in entries]]
            words += 5 + len(entries)
        payload = (b"*%d\r\n" % words + bulk("EVALSHA") + bulk(script.sha)
                   + bulk(2 * len(batch)) + b"".join(keys_part) + b"".join(args_part))
        # The sync commands ride on the same connection: they cover these writes.
        sync = matches.durability.sync_commands(matches.aof, end=False)
        payload += b"".join(encode_command(c) for c in sync)
        loading = [("SCRIPT", "LOAD", script.source)] if load else []
        payload = b"".join(encode_command(c) for c in loading) + payload
        replies = await lean.execute_encoded(payload, len(loading) + 1 + len(sync))
        reply = replies[len(loading)]
        matches.durability.check(replies[len(loading) + 1:])
        if isinstance(reply, Exception):  # the call failed: so did each of its appends
            return [reply] * len(batch)
        return [reply[i:i + 2] for i in range(0, 2 * len(batch), 2)]

    def _encode(self, item: _Append) -> tuple[bytes, bytes]:
        """The RESP bytes of ``item``'s match's two keys and of its owner's token
        (kept while the match runs here)."""
        cached = self._encoded.get(item.match_id)
        if cached is None or cached[0] != item.owner:
            if len(self._encoded) >= 65_536:  # matches never forgotten: a backstop
                self._encoded.clear()
            cached = self._encoded[item.match_id] = (
                item.owner, bulk(keys.match_log(item.match_id))
                + bulk(keys.match_lease(item.match_id)), bulk(item.owner))
        return cached[1], cached[2]

    def forget(self, match_id: str) -> None:
        """``match_id`` no longer runs here: drop what was kept to append to it (else
        the node would keep some for every match it ever ran)."""
        self._encoded.pop(match_id, None)

    def keeps(self, match_id: str) -> bool:
        """Whether the encoding of ``match_id``'s appends is kept (it runs here)."""
        return match_id in self._encoded

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
                if isinstance(res, Exception):
                    if is_noscript(res) and attempt == 0:
                        retry.append(item)
                    else:
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
