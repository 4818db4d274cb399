"""Which Redis a ``--redis-url`` names: one server, or a Redis/Valkey Cluster.

``redis://host:port/db`` (or ``rediss://``, ``unix://``) is one server.
``redis+cluster://host:port`` (``rediss+cluster://`` with TLS) or a
comma-separated list of seed nodes (``redis://h1:7000,h2:7001`` or
``h1:7000,h2:7001``) is a cluster: the client learns the slot map from the
seeds and routes every command to the primary holding its key's slot.
"""

from __future__ import annotations

from typing import cast
from urllib.parse import unquote, urlparse

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster

CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")


def is_cluster_url(url: str) -> bool:
    """Whether the URL names a Redis Cluster (redis+cluster://, or several seed nodes)."""
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
