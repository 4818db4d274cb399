"""The store: one object per node that owns the connections and every typed part.

``Store.matches`` (records, logs, leases), ``Store.appender`` (batched
appends), ``Store.nodes`` (membership, lease index, node inboxes),
``Store.agents``, ``Store.queues``, ``Store.tournaments``, ``Store.versions``
(hosted agents' versions, archives and stats) and ``Store.arenas``. Each part's
(hosted agents' versions, archives and stats) and ``Store.runners`` (hosted
seats waiting for or held by runners). Each part's
module lists the keys it owns; ``keys`` has them all.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from redis.asyncio.cluster import RedisCluster

from . import keys
from .agents import AgentStore
from .appender import Appender
from .arenas import ArenaStore
from .connection import Connections
from .durability import Durability
from .errors import StoreError, TransientStoreError, driver_errors
from .leases import Holder
from .matches import Matches
from .nodes import Nodes
from .queues import QueueStore
from .runners import RunnerStore
from .scripts import Scripts
from .tournaments import TournamentStore
from .versions import VersionStore


class Store:
    """Async access to everything twistarena keeps in Redis/Valkey."""

    def __init__(self, url: str, holder: Holder, max_inflight: int = 4,
                 durability: Durability | None = None, retain_ms: int = 0) -> None:
        self.url = url
        self.holder = holder
        self.conn = Connections(url)
        self.scripts = Scripts()
        self.matches = Matches(self.conn, self.scripts, holder, durability or Durability(),
                               retain_ms)
        #: The durability confirmation in flight (``confirm_durable``), if any.
        self._confirming: asyncio.Future[None] | None = None
        # The lean path has no pool to wait on: more batches may be in flight.
        self.appender = Appender(self.conn, self.scripts, self.matches,
                                 64 if self.conn.lean_for("append") else max_inflight)
        self.nodes = Nodes(self.conn, self.scripts, holder, self.matches.leases)
        self.agents = AgentStore(self.conn)
        self.queues = QueueStore(self.conn, self.scripts)
        self.tournaments = TournamentStore(self.conn, self.scripts, holder)
        self.arenas = ArenaStore(self.conn, self.scripts, holder)
        self.runners = RunnerStore(self.conn, self.scripts)
        self.versions = VersionStore(self.conn, self.scripts)

    @property
    def cluster_mode(self) -> bool:
        """The store is a Redis Cluster (keys of one match share a slot; no cross-slot calls)."""
        return self.conn.cluster_mode

    async def connect(self, timeout: float = 15.0) -> None:
        """Wait until the store answers, then register the scripts."""
        await self.conn.wait_ready(timeout)
        await self.reconnected()

    async def reconnected(self) -> None:
        """After a connect or the store's restart: register the scripts again and
        learn whether it keeps an AOF."""
        with driver_errors():
            await self.scripts.load(self.conn.redis)
        await self.probe_persistence()

    async def probe_persistence(self) -> None:
        """Learn whether the store keeps an AOF (WAITAOF is refused without one).

        Only an answer is taken: a store that did not answer, or is still loading
        its data (it says ``aof_enabled:0`` until loaded), raises
        ``TransientStoreError`` and what was known stays. Taken for a store
        without an AOF, it would have every later write acknowledged, and every
        end announced, without waiting for its fsync."""
        clients = self.conn.primaries() if self.conn.cluster_mode else [self.conn.redis]
        with driver_errors():
            infos: list[Any] = [await c.info("persistence") for c in clients]
        if any(int(i.get("loading", 0)) for i in infos):
            raise TransientStoreError("the store is loading its data")
        # A cluster's primaries are asked WAITAOF only if every one keeps an AOF.
        self.matches.aof = bool(infos) and all(int(i.get("aof_enabled", 0)) for i in infos)

    async def confirm_durable(self, match_id: str = "") -> None:
        """Wait until every write the store executed before this call is durable
        (its AOF fsynced, and the replicas the durability asks for), whoever sent
        it: a write of this node's own, then the sync commands, cover every
        earlier write (the AOF and the replication stream are in order). Callers
        that come while one confirmation is in flight wait for the next one (the
        one in flight may have been sent before their read). ``NotDurableError``
        when the store cannot confirm it in time. No-op for a store without an
        AOF or replicas to wait for. In a cluster, only the primary of
        ``match_id``'s slot is asked (what the caller read is there)."""
        matches = self.matches
        if self.conn.cluster_mode:
            if match_id:
                await matches.shard_durable(match_id)
            return
        if not matches.durability.sync_commands(matches.aof, end=True):
            return
        in_flight = self._confirming
        if in_flight is not None:
            with contextlib.suppress(Exception):  # may predate the caller's read: not its answer
                await asyncio.shield(in_flight)
        task = self._confirming
        if task is None or task is in_flight:
            task = self._confirming = asyncio.ensure_future(self._confirm_once())
            task.add_done_callback(self._confirmed)
        await asyncio.shield(task)

    def _confirmed(self, task: asyncio.Future[None]) -> None:
        if self._confirming is task:
            self._confirming = None

    async def _confirm_once(self) -> None:
        matches = self.matches
        commands = matches.durability.sync_commands(matches.aof, end=True)
        with driver_errors():
            pipe = self.conn.redis.pipeline(transaction=False)
            pipe.incr(keys.SYNC_KEY)
            for command in commands:
                pipe.execute_command(*command)
            replies = list(await pipe.execute(raise_on_error=False))[1:]
        matches.durability.check(replies)

    async def sync(self) -> None:
        """Wait until the writes this node sent are durable as its durability asks
        (after an append whose reply was lost was found stored)."""
        matches = self.matches
        commands = matches.durability.sync_commands(matches.aof, end=False)
        if not commands:
            return
        lean = self.conn.lean_for("append")
        with driver_errors():
            if lean is not None:
                replies = await lean.execute(commands)
            else:
                pipe = self.conn.redis.pipeline(transaction=False)
                pipe.incr(keys.SYNC_KEY)  # a write of this connection for the waits to cover
                for command in commands:
                    pipe.execute_command(*command)
                replies = list(await pipe.execute(raise_on_error=False))[1:]
        matches.durability.check(replies)

    async def ping(self) -> None:
        """Raise a StoreError unless the store answers."""
        with driver_errors():
            await self.conn.redis.ping()

    async def identity(self) -> str:
        """Which server process answers: its run id (every primary's, on a
        cluster), new after any restart, failover or reload, however short,
        which may have lost what this node acknowledged. Raises a StoreError
        unless the store answers (so it serves as a ping too)."""
        try:
            with driver_errors():
                if self.conn.cluster_mode:
                    cluster: Any = self.conn.redis  # a RedisCluster, typed as Redis
                    info: Any = await cluster.execute_command(
                        "INFO", "server", target_nodes=RedisCluster.PRIMARIES)
                else:
                    info = await self.conn.redis.info("server")
        except TransientStoreError:
            raise
        except StoreError:
            # INFO refused (a store that restricts it): reachability only; a
            # restart then shows only if a check saw the store down.
            await self.ping()
            return ""
        if "run_id" in info:
            return str(info["run_id"])
        # A cluster client answers for every node: {node name: its INFO}.
        return ",".join(sorted(str(node.get("run_id", "")) for node in info.values()
                               if isinstance(node, dict)))

    async def close(self) -> None:
        """Flush the pending appends, then close the connections."""
        await self.appender.drain()
        await self.conn.close()
