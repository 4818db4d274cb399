"""Nodes in the store: membership heartbeats, the match lease index, node inboxes.

Keys (tag ``{twistarena}``, see ``keys``): ``{twistarena}:nodes``,
``{twistarena}:nodeinfo``, ``{twistarena}:node:<id>`` (written by
``lua/heartbeat.lua``), ``{twistarena}:leases`` (live match id -> lease
expiry, to find matches whose owner died) and ``{twistarena}:inbox:<node>``
(matches handed to a node).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import keys
from .connection import Connections
from .errors import StoreError, driver_errors, translate
from .leases import Handoff, Holder, Leases
from .replies import integer, text
from .scripts import Scripts


@dataclass(slots=True)
class NodeInfo:
    """A live node as its last heartbeat described it."""

    node_id: str
    address: str
    seen_ms: int
    load: int


@dataclass(slots=True)
class Beat:
    """What one heartbeat learned: Redis TIME and the live nodes."""

    now_ms: int
    live: dict[str, NodeInfo]


@dataclass(slots=True)
class Renewal:
    """One lease to renew with the heartbeat."""

    match_id: str
    token: str


def _beat_from_reply(res: Any) -> Beat:
    live: dict[str, NodeInfo] = {}
    for i in range(1, len(res) - 2, 3):
        node = text(res[i])
        load, _, address = text(res[i + 2]).partition("|")
        live[node] = NodeInfo(node, address, int(float(text(res[i + 1]))), integer(load))
    return Beat(integer(res[0]), live)


class Nodes:
    """This node's membership and what it shares with the other nodes."""

    def __init__(self, conn: Connections, scripts: Scripts, holder: Holder,
                 match_leases: Leases) -> None:
        self.conn = conn
        self.scripts = scripts
        self.holder = holder
        self.match_leases = match_leases

    def _heartbeat_call(self, ttl_ms: int, load: int, leaving: bool) -> Any:
        h = self.holder
        return (self.scripts.heartbeat,
                [keys.NODES, keys.node_alive(h.node_id), keys.NODE_INFO],
                [h.node_id, h.address, ttl_ms, load, "1" if leaving else "0"])

    async def heartbeat(self, ttl_ms: int, load: int, leaving: bool = False) -> Beat:
        """Say this node is alive (or leaving); returns the live nodes."""
        script, keys_, args = self._heartbeat_call(ttl_ms, load, leaving)
        with driver_errors():
            return _beat_from_reply(await self.scripts.run(self.conn.redis, script, keys_,
                                                           args))

    async def heartbeat_and_renew(self, ttl_ms: int, load: int, leaving: bool,
                                  renewals: Sequence[Renewal],
                                  ) -> tuple[Beat | StoreError, list[int | StoreError]]:
        """The heartbeat and the renewal of every lease of this node, one pipeline:
        the heartbeat (or its error) and per lease its new expiry (ms), 0 (not
        ours), -1 (expired) or an error."""
        calls = [self._heartbeat_call(ttl_ms, load, leaving)]
        calls += [self.match_leases.renew_call(r.match_id, r.token) for r in renewals]
        with driver_errors():
            replies = await self.scripts.run_many(self.conn, calls)
        beat: Beat | StoreError = translate(replies[0]) if isinstance(replies[0], Exception) \
            else _beat_from_reply(replies[0])
        return beat, [Leases.renewed(r) for r in replies[1:]]

    # -- the lease index: which live match's lease expires when ----------------------

    async def index_live_matches(self) -> None:
        """Live matches missing from the lease index (older data) join it as unowned."""
        with driver_errors():
            raw: Any = await self.conn.redis.smembers(keys.LIVE_MATCHES)
            ids = [text(m) for m in raw]
            for i in range(0, len(ids), 1000):
                chunk = ids[i:i + 1000]
                await self.conn.redis.zadd(keys.MATCH_LEASES, dict.fromkeys(chunk, 0), nx=True)

    async def note_expiries(self, expiries: dict[str, int]) -> None:
        """Record when the leases of these matches expire (ms, Redis TIME). Only
        matches still in the index: one that ended while its renewal was in
        flight has left it and must not come back (it would be claimed again)."""
        if expiries:
            with driver_errors():
                await self.conn.redis.zadd(keys.MATCH_LEASES, expiries, xx=True)

    async def forget_match(self, match_id: str) -> None:
        """A match gone from the store leaves the lease index."""
        with driver_errors():
            await self.conn.redis.zrem(keys.MATCH_LEASES, match_id)

    async def indexed_matches(self) -> list[str]:
        """Every match in the lease index."""
        with driver_errors():
            raw: Any = await self.conn.redis.zrange(keys.MATCH_LEASES, 0, -1)
        return [text(x) for x in raw]

    async def expired_matches(self, now_ms: int, count: int) -> list[str]:
        """Up to ``count`` matches whose lease expired by ``now_ms``."""
        with driver_errors():
            raw: Any = await self.conn.redis.zrangebyscore(keys.MATCH_LEASES, "-inf", now_ms,
                                                          start=0, num=count)
        return [text(x) for x in raw]

    # -- node inboxes: matches handed to a node ------------------------------------

    async def hand_new(self, match_id: str, node_id: str, address: str) -> None:
        """A match created here runs on ``node_id``: name it in the lease and push
        it to that node's inbox."""
        with driver_errors():
            pipe = self.conn.redis.pipeline(transaction=False)
            pipe.hset(keys.match_lease(match_id), mapping={"next": node_id,
                                                           "next_addr": address})
            pipe.rpush(keys.node_inbox(node_id), match_id)
            await pipe.execute()

    async def hand_over(self, handoffs: Sequence[Handoff]) -> None:
        """Drain: release these leases naming each successor, then push each match
        to its successor's inbox. Best effort: a match not handed over is found
        by its successor once its lease expires."""
        await self.match_leases.release_many(handoffs)
        inboxes: dict[str, list[str]] = {}
        for h in handoffs:
            if h.next_node:
                inboxes.setdefault(h.next_node, []).append(h.key_id)
        if inboxes:
            with driver_errors():
                pipe = self.conn.redis.pipeline(transaction=False)
                for node, ids in inboxes.items():
                    pipe.rpush(keys.node_inbox(node), *ids)
                await pipe.execute(raise_on_error=False)

    async def take_inbox(self, timeout_s: float, most: int = 500) -> list[str]:
        """Wait up to ``timeout_s`` for matches handed to this node; all waiting
        ids (up to ``most`` + 1), or [] on timeout."""
        key = keys.node_inbox(self.holder.node_id)
        with driver_errors():
            item: Any = await self.conn.redis.blpop([key], timeout=timeout_s)
            if not item:
                return []
            ids = [text(item[1])]
            more: Any = await self.conn.redis.lpop(key, most)
        return ids + [text(m) for m in more or ()]
