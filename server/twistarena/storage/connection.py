"""The connections to the store, and which commands take which path.

Two paths to the store:

- the lean path (``resp.RespPipeline``, one socket, replies parsed by
  hiredis) carries the log appends of every match (the ``append`` script),
  batched per event-loop tick: the one command that runs once per decision;
  and, through ``Connections.batch``, the few writes each match makes once
  (its creation with the claim of its lease, its fenced field writes: seats,
  status; its end; a Twhist match is about 70 decisions, so these weigh on
  every decision) and the lease scripts sent in pipelines (claims, the
  heartbeat with the renewal of every lease, releases);
- redis-py carries everything else: loading of matches, lone heartbeats,
  inboxes, agents, queues and tournaments, and all of the above when the
  lean path cannot be used (a cluster, TLS, a unix socket or URL options).

``LEAN_SCRIPTS`` lists the scripts the appender sends on the lean path and
``Connections.lean_for`` is the question it asks; ``Connections.batch`` gives
the per-match writes a pipeline on whichever path serves. ``Connections``
builds both.

Which Redis a ``--redis-url`` names: one server, or a Redis/Valkey Cluster.

``redis://host:port/db`` (or ``rediss://``, ``unix://``) is one server.
``redis+cluster://host:port`` (``rediss+cluster://`` with TLS) or a
comma-separated list of seed nodes (``redis://h1:7000,h2:7001`` or
``h1:7000,h2:7001``) is a cluster: the client learns the slot map from the
seeds and routes every command to the primary holding its key's slot.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import unquote, urlparse

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from .errors import driver_errors
from .resp import RespBatch, RespPipeline, fast_path_target

T = TypeVar("T")

CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
#: A pooled connection idle this long is PINGed before its next command: after a
#: store restart, the pool's connections are closed by the server that went away,
#: and a command must not be the first to find out. A command is never sent again
#: after a connection error: the store may have run it before the connection broke,
#: and a write run twice (an append, an end) is worse than one refused.
HEALTH_CHECK_S = 1


class CheckedConnection(aioredis.Connection):
    """A pooled plain-TCP connection whose PING before a command, finding it closed
    (the store restarted), connects again once: the command was not sent yet, so
    nothing runs twice."""

    async def check_health(self) -> None:
        """PING when idle past the interval; a closed connection is opened anew."""
        try:
            await super().check_health()  # type: ignore[no-untyped-call]
        except (RedisConnectionError, OSError):
            await self.disconnect()
            await self.connect()  # type: ignore[no-untyped-call]


#: Scripts whose EVALSHAs go on the lean path when there is one (see above).
LEAN_SCRIPTS = frozenset({"append"})


def is_cluster_url(url: str) -> bool:
    """The url names a Redis Cluster (a cluster scheme, or several comma-separated nodes)."""
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    return scheme in CLUSTER_SCHEMES or "," in url


def cluster_seeds(url: str) -> tuple[list[tuple[str, int]], str | None, str | None, bool]:
    """(seed host/port pairs, username, password, tls) of a cluster URL."""
    scheme, _, rest = url.partition("://") if "://" in url else ("redis", "", url)
    tls = scheme.lower().startswith("rediss")
    username: str | None = None
    password: str | None = None
    seeds: list[tuple[str, int]] = []
    for item in rest.split(","):
        item = item.strip().split("/", 1)[0]
        if not item:
            continue
        parsed = urlparse(f"redis://{item}")
        if parsed.username:
            username = unquote(parsed.username)
        if parsed.password:
            password = unquote(parsed.password)
        if not parsed.hostname:
            raise ValueError(f"no host in cluster seed {item!r} of {url!r}")
        seeds.append((parsed.hostname, parsed.port or 6379))
    if not seeds:
        raise ValueError(f"no seed node in {url!r}")
    return seeds, username, password, tls


def cluster_client(url: str, max_connections: int = 64) -> aioredis.Redis:
    """An asyncio cluster client for a cluster URL.

    It speaks the same command API as ``redis.asyncio.Redis`` (pipelines are
    split per primary; EVALSHA is routed by its first key), so the store uses
    it through that type."""
    seeds, username, password, tls = cluster_seeds(url)
    client = RedisCluster(
        startup_nodes=[ClusterNode(host, port) for host, port in seeds],
        decode_responses=False, username=username, password=password, ssl=tls,
        socket_keepalive=True, max_connections=max_connections,
        require_full_coverage=True,
    )
    return cast(aioredis.Redis, client)


class StorePart:
    """A part of the store (agents, arenas, runners, ...): it calls through the
    store's shared connections, never a client of its own."""

    def __init__(self, conn: Connections) -> None:
        self.conn = conn

    @property
    def _redis(self) -> Any:
        return self.conn.redis

    async def _hash_record(self, key: str, parse: Callable[[Any], T]) -> T | None:
        """``parse`` of the hash at ``key``, None when there is none: a record stored
        as one hash reads the same way whatever it is."""
        with driver_errors():
            raw: Any = await self._redis.hgetall(key)
        return parse(raw) if raw else None

    async def _read_together(self, *commands: tuple[str, ...]) -> list[Any]:
        """The replies of read commands (``("HGETALL", key)``...) sent in one round
        trip, without a transaction: the parts of one record or of one count."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            return list(await pipe.execute())


class Connections:
    """The redis-py client of a store URL, and the lean pipeline when the URL allows one."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.cluster_mode = is_cluster_url(url)
        self.redis: aioredis.Redis
        if self.cluster_mode:
            # Appends go through the cluster client's pipeline (split per primary).
            self.redis = cluster_client(url)
            target = None
        else:
            # A blocking pool: a burst of calls (a few hundred matches created or
            # joined at once) waits for a free connection instead of failing.
            checked = {"connection_class": CheckedConnection} \
                if url.lower().startswith("redis://") else {}
            pool = aioredis.BlockingConnectionPool.from_url(
                url, decode_responses=False, health_check_interval=HEALTH_CHECK_S,
                socket_keepalive=True, max_connections=64, timeout=20, **checked,
            )
            self.redis = aioredis.Redis(connection_pool=pool)
            target = fast_path_target(url)
        self.lean: RespPipeline | None = RespPipeline(*target) if target else None
        #: Clients of single cluster primaries, by address (``shard``).
        self._shards: dict[tuple[str, int], aioredis.Redis] = {}

    def shard(self, key: str) -> aioredis.Redis:
        """A client of the cluster primary that holds ``key``'s slot. WAITAOF
        covers the writes of its own connection, and a cluster pipeline's
        connections are the client's to pick: a write to that slot, then the
        wait, in one pipeline of this client run on one connection."""
        return self._client_of(cast(Any, self.redis).get_node_from_key(key))

    def primaries(self) -> list[aioredis.Redis]:
        """A client of each cluster primary (see ``shard``)."""
        return [self._client_of(node) for node in cast(Any, self.redis).get_primaries()]

    def _client_of(self, node: ClusterNode) -> aioredis.Redis:
        address = (str(node.host), int(node.port))
        client = self._shards.get(address)
        if client is None:
            _seeds, username, password, tls = cluster_seeds(self.url)
            client = self._shards[address] = aioredis.Redis(
                host=address[0], port=address[1], username=username, password=password,
                ssl=tls, decode_responses=False, socket_keepalive=True,
                socket_timeout=10, max_connections=8)
        return client

    def lean_for(self, script: str) -> RespPipeline | None:
        """The lean connection if calls of this script take the lean path, else None
        (send them through ``redis``)."""
        return self.lean if script in LEAN_SCRIPTS else None

    def batch(self, wait_s: float = 0.0) -> Any:
        """A non-transactional pipeline for a match's once-per-match writes: on the
        lean connection when there is one, else redis-py's. Both answer
        ``execute(raise_on_error=False)`` with error replies as exceptions.
        ``wait_s``: how long its sync commands (WAIT, WAITAOF) may block the store's
        reply, on top of the lean batch's bound."""
        if self.lean is not None:
            return RespBatch(self.lean, wait_s)
        return self.redis.pipeline(transaction=False)

    async def wait_ready(self, timeout: float) -> None:
        """Ping until the store answers (it may still be starting)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                await self.redis.ping()
                return
            except RedisError:
                if time.monotonic() > deadline:
                    with driver_errors():
                        raise
                await asyncio.sleep(0.1)

    async def close(self) -> None:
        """Close both paths' connections."""
        if self.lean is not None:
            await self.lean.close()
        for shard in self._shards.values():
            await shard.aclose(close_connection_pool=True)
        self._shards.clear()
        if self.cluster_mode:
            await self.redis.aclose()
        else:
            await self.redis.aclose(close_connection_pool=True)
