"""Membership: this node's heartbeat, and which nodes are alive.

Every node heartbeats every lease/4 (``lua/heartbeat.lua`` in the store): its
advertised address with a TTL of three heartbeats, its last heartbeat time
and its load. A node is live while its last heartbeat is younger than three
heartbeats; the heartbeat's reply lists the live nodes, so no KEYS scans. The
same pipeline renews this node's leases (``leases``).
"""

from __future__ import annotations

import time

from twistarena.storage import Beat, NodeInfo, Store

#: Smallest lease: heartbeats every lease/4 must fit in it.
MIN_LEASE_MS = 200


class Membership:
    """What this node knows of the others, and its clock offset to Redis TIME."""

    def __init__(self, store: Store) -> None:
        holder = store.holder
        if holder.lease_ms < MIN_LEASE_MS:
            raise ValueError(f"the lease must be at least {MIN_LEASE_MS} ms")
        self.nodes = store.nodes
        self.node_id = holder.node_id
        self.address = holder.address
        self.lease_ms = holder.lease_ms
        self.lease_s = holder.lease_ms / 1000
        self.beat_s = self.lease_s / 4
        self.ttl_ms = max(3 * holder.lease_ms // 4, 150)
        self.live: dict[str, NodeInfo] = {}
        #: Redis time of the heartbeat that listed ``live``.
        self.live_at_ms = 0
        self.offset_ms = 0.0
        self.started_ms = 0
        self.leaving = False

    def server_now_ms(self) -> int:
        """Redis TIME, estimated from the last heartbeat's clock offset."""
        return int(time.time() * 1000 + self.offset_ms)

    def learn(self, beat: Beat, local_ms: float) -> None:
        """Take in a heartbeat's reply, read at ``local_ms`` (local wall clock)."""
        self.offset_ms = beat.now_ms - local_ms
        self.live = beat.live
        self.live_at_ms = beat.now_ms

    def reachable(self, node: str, address: str = "") -> str:
        """``node``'s address (``address`` if given) when it had heartbeaten within two
        heartbeat intervals of the last membership read, else '': a redirect never names
        a node that missed a heartbeat, whose leases are lapsing or have lapsed (the
        client is told to retry instead)."""
        info = self.live.get(node)
        if info is None or not self.heartbeating(node):
            return ""
        return address or info.address

    def heartbeating(self, node: str) -> bool:
        """``node`` heartbeat within two heartbeat intervals of the last membership read."""
        info = self.live.get(node)
        return info is not None and info.seen_ms >= self.live_at_ms - 2 * self.beat_s * 1000

    async def heartbeat_only(self, load: int) -> None:
        """A heartbeat without renewals (at startup, and to say this node leaves)."""
        beat = await self.nodes.heartbeat(self.ttl_ms, load, self.leaving)
        self.learn(beat, time.time() * 1000)
