"""One background task per leased thing of a kind (a tournament, an arena).

Every node supervises the things of a kind; the node that claims a thing's
lease runs its task until the task returns or the lease is lost (a fenced
write ends it too). ``close`` releases the leases, so another node takes over
at once; a node that dies stops renewing, and another claims the lease once
it expires. The tournament director and the arena scheduler share this.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Awaitable, Callable, Iterable

from twistarena.storage import FencedError, StoreError
from twistarena.storage.leases import Leases, LeaseState

from .. import logs, metrics
from ..loops import stop_loops
from ..match.hub import Hub

log = logs.get("twistarena.leased")


def driver(state: LeaseState) -> str:
    """Who holds a lease now, "<node id> <address>", for operators ('' when nobody
    does: released, or expired with its node)."""
    if not state.node or state.until <= time.time() * 1000:
        return ""
    return f"{state.node} {state.address}".strip()


class LeasedTasks:
    """The tasks of one kind of leased thing on this node, and the supervisor
    that claims the things nobody runs."""

    def __init__(self, kind: str, leases: Leases, things: Callable[[], Awaitable[Iterable[str]]],
                 run: Callable[[str], Awaitable[None]], hub: Hub, every_s: float = 1.0) -> None:
        #: Names the logs' events and fields and the error metric's label.
        self.kind = kind
        self.leases = leases
        self.things = things
        self.run = run
        self.hub = hub
        self.every_s = every_s
        self.running: dict[str, asyncio.Task[None]] = {}
        #: thing id -> the token of this node's lease on it
        self.tokens: dict[str, str] = {}
        self._supervisor: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start supervising: take the things no live node holds."""
        self._supervisor = asyncio.get_running_loop().create_task(
            self._supervise(), name=f"{self.kind}.supervise")

    async def close(self) -> None:
        """Stop the tasks and release their leases, so another node takes over at once."""
        tasks = [t for t in (self._supervisor, *self.running.values()) if t is not None]
        await stop_loops(tasks, self.kind)
        for key in list(self.running):
            token = self.tokens.get(key)
            if token:
                with contextlib.suppress(StoreError):
                    await self.leases.release(key, token)
        for key in self.running:
            self._unheld(key)
        self.running.clear()
        self.tokens.clear()

    async def _supervise(self) -> None:
        while True:
            try:
                for key in await self.things():
                    if key not in self.running and not self.hub.draining:
                        await self.try_take(key)
            except StoreError as exc:
                log.warning(f"{self.kind}_supervise_failed", error=repr(exc))
            await asyncio.sleep(self.every_s)

    async def try_take(self, key: str) -> bool:
        """Run the thing's task if no other node holds its lease."""
        try:
            grant = await self.leases.claim(key)
        except FencedError:
            return False
        self.tokens[key] = grant.token
        task = asyncio.get_running_loop().create_task(self._guarded(key),
                                                      name=f"{self.kind}.{key}")
        self.running[key] = task
        metrics.LEASES_HELD.labels(self.kind, key).set(1)
        task.add_done_callback(functools.partial(self._done, key))
        return True

    def _unheld(self, key: str) -> None:
        """The thing's lease is not this node's any more: out of the metric."""
        with contextlib.suppress(KeyError):
            metrics.LEASES_HELD.remove(self.kind, key)

    async def renew(self, key: str) -> bool:
        """Renew this node's lease on the thing; False once it is lost."""
        if await self.leases.renew(key, self.tokens.get(key, "")) > 0:
            return True
        log.warning(f"{self.kind}_lease_lost", **{self.kind: key})
        return False

    async def _guarded(self, key: str) -> None:
        try:
            await self.run(key)
        except FencedError:
            log.warning(f"{self.kind}_lease_lost", **{self.kind: key})

    def _done(self, key: str, task: asyncio.Task[None]) -> None:
        if self.running.get(key) is task:
            del self.running[key]
            self._unheld(key)
        if not task.cancelled() and task.exception() is not None:
            metrics.ERRORS.labels(self.kind).inc()
            log.error(f"{self.kind}_driver_failed", **{self.kind: key},
                      error=repr(task.exception()))
