"""A live match's writes to the store, retried through a brief outage.

An action is acknowledged, and an end announced, only once stored: so a store
that is restarting or loading stalls the match (within the lease) rather than
failing it. A write that the store refuses for a reason (fenced, a conflicting
log) is not retried; the referee decides what it means.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from twistarena import wire
from twistarena.storage import (
    FencedError,
    LogConflict,
    LogEntry,
    MatchRecord,
    Store,
    StoreError,
    TransientStoreError,
)

T = TypeVar("T")

#: How long a store write (an append, the end) is retried while the store is unreachable.
STORE_RETRY_S = 20.0

#: An end stored longer ago than this was fsynced long since (``everysec`` syncs
#: every second): a reader tells it without asking the store.
FRESH_END_MS = 10_000


async def _retrying(write: Callable[[], Awaitable[T]], retry: type[StoreError],
                    keep: tuple[type[StoreError], ...], stopped: Callable[[], bool]) -> T:
    """Run ``write`` until it succeeds; a ``retry`` error (but not a ``keep`` one) is
    tried again with backoff, until ``STORE_RETRY_S`` passes or ``stopped()``
    (within the lease: once it lapses the referee is stopped). A referee stopped
    during the backoff writes no more: its lease's nonce would fence the write,
    but the attempt would hold the match's lock and the store's time for nothing."""
    deadline = time.monotonic() + STORE_RETRY_S
    delay = 0.05
    while True:
        try:
            return await write()
        except retry as exc:
            if isinstance(exc, keep) or time.monotonic() > deadline \
                    or stopped():
                raise
            await asyncio.sleep(delay)
            if stopped():
                raise
            delay = min(delay * 2, 1.0)


async def through_outage(call: Callable[[], Awaitable[T]], stopped: Callable[[], bool]) -> T:
    """A store call a referee cannot go on without (reading the log after a loss,
    restoring its metadata), retried as appends are: right after a store restart
    the first calls can fail."""
    return await _retrying(call, TransientStoreError, (), stopped)


async def append_entry(store: Store, match_id: str, owner: str, expected: int,
                       entry: LogEntry, stopped: Callable[[], bool]) -> None:
    """Store one entry after ``expected`` others, durable as the server's durability
    asks; a store that is briefly unavailable or not yet durable is retried.

    The first try is made here, the retries in ``_retrying``: an append a
    decision waits for takes no closure and no further frames in the usual case."""
    try:
        await store.appender.append(match_id, owner, expected, [entry])
        return
    except (LogConflict, TransientStoreError):
        pass  # looked at again, and retried, below

    async def write() -> None:
        try:
            await store.appender.append(match_id, owner, expected, [entry])
        except LogConflict as conflict:
            # A reply lost after a successful write: the entry is already there.
            if conflict.actual != expected + 1 or await store.matches.entry_at(
                    match_id, expected) != entry:
                raise
            await store.sync()
    await _retrying(write, TransientStoreError, (), stopped)


async def store_end(store: Store, match_id: str, owner: str, status: int, result: bytes,
                    entries: Sequence[LogEntry], stopped: Callable[[], bool]) -> None:
    """The end, stored and durable before anyone is told, and only on the log it
    was computed from (``entries``: a store that lost the log's tail raises
    ``LogConflict``, for the loss policy); any other store error but a fenced
    write (another node owns the match) is retried as appends are."""
    log_len, last = len(entries), (entries[-1] if entries else None)

    async def write() -> None:
        await store.matches.finish(match_id, owner, status, result, log_len, last)
    await _retrying(write, StoreError, (FencedError, LogConflict), stopped)


async def settled(store: Store, record: MatchRecord) -> None:
    """Before an end read from the store is told to anyone (a seat coming back, a
    ``GetMatch``, a spectator): a fresh end is confirmed durable first. The node
    that stored it waits for its WAITAOF before telling, but another reader sees
    the end as soon as the store executed it, and a crash before the fsync would
    take it back (the match is then voided or rewound). ``NotDurableError``
    (UNAVAILABLE to the caller, who retries) when the store cannot confirm it."""
    if record.status in wire.MATCH_OVER and \
            time.time() * 1000 - record.ended_ms < FRESH_END_MS:
        await store.confirm_durable(record.match_id)
