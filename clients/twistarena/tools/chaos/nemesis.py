"""The nemesis: a fault schedule drawn from a seed, and its injection.

The schedule depends only on the seed, the duration, the spacing, the fault
kinds and the node count: the same seed gives the same faults at the same
times. Kinds come in rounds (each round every kind once, in a seeded order) so
that a campaign of a few rounds has every kind. Every fault is logged with when
it began and ended (seconds since the campaign started).
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import redis.asyncio as aioredis

from .deploy import Deployment

#: Faults on the store process (a Valkey the campaign started).
STORE_KINDS = ("valkey_kill", "valkey_kill_cut", "valkey_pause", "end_fsync_kill",
               "create_fsync_kill")
#: Faults on nodes and links (any store).
NODE_KINDS = ("node_kill", "node_store_cut", "agent_node_cut", "lease_renew_cut",
              "lease_renew_kill", "runner_kill")
#: Faults on a Valkey Cluster the campaign started (a primary, by ``Fault.node``).
CLUSTER_KINDS = ("cluster_primary_kill", "cluster_primary_pause")
#: The kinds each store takes (a given store is not the campaign's to kill; a
#: cluster's nodes are reached without a proxy).
KINDS_BY_STORE = {
    "embedded": STORE_KINDS + NODE_KINDS,
    "given": NODE_KINDS,
    "cluster": (*CLUSTER_KINDS, "node_kill", "agent_node_cut", "lease_renew_kill",
                "runner_kill"),
}
ALL_KINDS = STORE_KINDS + NODE_KINDS + CLUSTER_KINDS


@dataclass
class Fault:
    """One fault: when (s after the start), what, on which node, how long it lasts."""

    at: float
    kind: str
    node: int
    hold: float
    began: float = 0.0
    ended: float = 0.0
    detail: str = ""

    def planned(self) -> dict[str, Any]:
        return {"at": self.at, "kind": self.kind, "node": self.node, "hold": self.hold}


def schedule(seed: int, duration: float, every: float, kinds: Sequence[str],
             nodes: int) -> list[Fault]:
    """The faults of a campaign: one about every ``every`` seconds (jittered)
    from ``every`` on, while ``duration`` lasts."""
    rng = random.Random(seed)
    faults: list[Fault] = []
    round_: list[str] = []
    at = every
    while at < duration:
        if not round_:
            round_ = list(kinds)
            rng.shuffle(round_)
        kind = round_.pop()
        faults.append(Fault(round(at, 3), kind, rng.randrange(nodes),
                            round(rng.uniform(0.3, 2.0), 3)))
        at += every * rng.uniform(0.6, 1.4)
    return faults


@dataclass
class Nemesis:
    """Injects a schedule into a deployment; ``running_matches`` names the matches
    in play now and ``created`` counts the matches created (for the faults aimed
at a match's end and at a match's creation)."""

    deployment: Deployment
    faults: list[Fault]
    running_matches: Callable[[], list[str]]
    #: How many matches the workload created so far.
    created: Callable[[], int]
    log: Callable[[str], None] = print
    started: float = field(default_factory=time.monotonic)

    def now(self) -> float:
        return round(time.monotonic() - self.started, 3)

    async def run(self) -> None:
        for fault in self.faults:
            await asyncio.sleep(max(0.0, fault.at - self.now()))
            fault.began = self.now()
            try:
                await getattr(self, fault.kind)(fault)
            except Exception as exc:  # a fault that could not be injected is logged, not fatal
                fault.detail = (fault.detail + f"; failed: {exc!r}").strip("; ")
            fault.ended = self.now()
            self.log(f"[{fault.began:8.2f}s] {fault.kind:<15} node{fault.node + 1} "
                     f"hold {fault.hold:.2f}s {fault.detail}")

    # -- the store ---------------------------------------------------------------

    def _store(self) -> aioredis.Redis:
        valkey = self.deployment.valkey
        assert valkey is not None
        return aioredis.Redis(host="127.0.0.1", port=valkey.port, socket_timeout=5)

    async def _restart_store(self) -> None:
        valkey = self.deployment.valkey
        assert valkey is not None
        await asyncio.to_thread(valkey.start)

    async def valkey_kill(self, fault: Fault) -> None:
        """kill -9 of the store, started again at once (a process crash: the
        kernel keeps what was written, fsynced or not)."""
        assert self.deployment.valkey is not None
        self.deployment.valkey.kill()
        await self._restart_store()

    async def _freeze_fsync(self) -> int:
        """From now on the store fsyncs nothing (``appendfsync no``); returns the
        size of its AOF now: an OS crash from now on may lose anything past it
        (and keeps what is before: the kernel may have written it back)."""
        valkey = self.deployment.valkey
        assert valkey is not None
        client = self._store()
        try:
            await client.config_set("appendfsync", "no")
        finally:
            await client.aclose()
        aof = valkey.aof()
        assert aof is not None
        return aof.stat().st_size

    async def _crash_to(self, size: int) -> str:
        """kill -9, the AOF cut back to ``size`` (an OS crash), started again."""
        valkey = self.deployment.valkey
        assert valkey is not None
        aof = valkey.aof()
        valkey.kill()
        assert aof is not None
        cut = aof.stat().st_size - size
        with aof.open("r+b") as f:
            f.truncate(size)
        await self._restart_store()
        return f"cut {cut} bytes of AOF"

    async def valkey_kill_cut(self, fault: Fault) -> None:
        """An OS crash of the store's machine: what was written after the last
        fsync is lost (``hold`` seconds of writes here)."""
        size = await self._freeze_fsync()
        await asyncio.sleep(fault.hold)
        fault.detail = await self._crash_to(size)

    async def end_fsync_kill(self, fault: Fault) -> None:
        """The crash aimed at a match's end: fsync stops, then the store is killed
        and cut the moment a match that had no end then has its end in the
        store (its end's WAITAOF waiting), or after ``hold`` * 4 s."""
        size = await self._freeze_fsync()
        client = self._store()
        # Matches without an end yet (a match the workload still counts as
        # running may have ended a moment ago: its agents are reading its outcome).
        watched = [mid for mid in self.running_matches()
                   if not await client.hexists(f"{{m:{mid}}}:meta", "result")]

        async def ended() -> str:
            for mid in watched:
                if await client.hexists(f"{{m:{mid}}}:meta", "result"):
                    return f"at the end of {mid}"
            return ""
        try:
            seen = await _first(ended, fault.hold * 4)
        finally:
            await client.aclose()
        fault.detail = f"{seen or 'no end seen'}; " + await self._crash_to(size)

    async def create_fsync_kill(self, fault: Fault) -> None:
        """The crash aimed at a match's creation (and its claim by a node): fsync
        stops, then the store is killed and cut the moment the workload was told
        of a new match, or after ``hold`` * 4 s."""
        size = await self._freeze_fsync()
        before = self.created()

        async def created() -> str:
            return "after a creation" if self.created() > before else ""
        seen = await _first(created, fault.hold * 4)
        fault.detail = f"{seen or 'no creation seen'}; " + await self._crash_to(size)

    async def valkey_pause(self, fault: Fault) -> None:
        """SIGSTOP of the store for ``hold`` seconds, then SIGCONT."""
        assert self.deployment.valkey is not None
        self.deployment.valkey.signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(fault.hold)
        finally:
            self.deployment.valkey.signal(signal.SIGCONT)

    # -- a Valkey Cluster ----------------------------------------------------------

    async def cluster_primary_kill(self, fault: Fault) -> None:
        """kill -9 of a cluster primary (``node`` modulo their number); it starts
        again on its AOF after ``hold`` seconds (no replica takes over)."""
        cluster = self.deployment.cluster
        assert cluster is not None
        i = fault.node % cluster.size
        cluster.kill(i)
        await asyncio.sleep(fault.hold)
        await asyncio.to_thread(cluster.restart, i)
        fault.detail = f"primary {cluster.ports[i]}"

    async def cluster_primary_pause(self, fault: Fault) -> None:
        """SIGSTOP of a cluster primary for ``hold`` seconds, then SIGCONT."""
        cluster = self.deployment.cluster
        assert cluster is not None
        i = fault.node % cluster.size
        cluster.signal(i, signal.SIGSTOP)
        try:
            await asyncio.sleep(fault.hold)
        finally:
            cluster.signal(i, signal.SIGCONT)
        fault.detail = f"primary {cluster.ports[i]}"

    # -- nodes and links -----------------------------------------------------------

    async def node_kill(self, fault: Fault) -> None:
        """kill -9 of a node; it starts again after ``hold`` seconds."""
        node = self.deployment.nodes[fault.node]
        self.deployment.kill_node(node)
        await asyncio.sleep(fault.hold)
        self.deployment.start_node(node)
        await self.deployment.wait_ready(node)

    async def node_store_cut(self, fault: Fault) -> None:
        """The node's link to its store goes silent for ``hold`` seconds."""
        proxy = self.deployment.nodes[fault.node].store_proxy
        proxy.cut()
        await asyncio.sleep(fault.hold)
        proxy.heal()

    async def _at_renewal(self, fault: Fault) -> int | None:
        """Wait for the lease of a match in play to be renewed, then until just
        before its next renewal (a beat is a quarter of the lease); the index of
        the node renewing it, or None when no renewal was seen within a lease."""
        client = self.deployment.store_client()
        try:
            owners = {mid: f"{{m:{mid}}}:owner" for mid in self.running_matches()}
            before = {mid: await client.hmget(key, "node", "until")
                      for mid, key in owners.items()}
            held = {mid: lease for mid, lease in before.items() if lease[0] and lease[1]}

            async def renewed() -> str:
                for mid, (_node, until) in held.items():
                    now = await client.hget(owners[mid], "until")
                    if now is not None and now != until:
                        return mid
                return ""
            mid = await _first(renewed, self.deployment.lease_ms / 1000)
        finally:
            await client.aclose()
        node = held[mid][0].decode() if mid else ""
        index = next((n.index for n in self.deployment.nodes if n.name == node), None)
        if index is None:
            fault.detail = "no renewal seen"
            return None
        await asyncio.sleep(max(0.0, self.deployment.lease_ms / 4000 - 0.03))
        fault.detail = f"{node} renewing the lease of {mid}"
        return index

    async def lease_renew_cut(self, fault: Fault) -> None:
        """The link of a match's owner to its store goes silent just as the owner
        renews the match's lease, for ``hold`` seconds (past the lease: another
        node takes the match over while the owner's renewal hangs)."""
        index = await self._at_renewal(fault)
        if index is None:
            return
        proxy = self.deployment.nodes[index].store_proxy
        proxy.cut()
        await asyncio.sleep(fault.hold * 1.5)
        proxy.heal()

    async def lease_renew_kill(self, fault: Fault) -> None:
        """kill -9 of a match's owner just as it renews the match's lease; it
        starts again after ``hold`` seconds."""
        index = await self._at_renewal(fault)
        if index is None:
            return
        node = self.deployment.nodes[index]
        self.deployment.kill_node(node)
        await asyncio.sleep(fault.hold)
        self.deployment.start_node(node)
        await self.deployment.wait_ready(node)

    async def runner_kill(self, fault: Fault) -> None:
        """kill -9 of a runner (``node`` modulo their number) with the hosted seats it
        plays; it starts again after ``hold`` seconds (its seats go to another
        runner meanwhile, or back to it)."""
        runners = self.deployment.runners
        if not runners:
            fault.detail = "no runner"
            return
        runner = runners[fault.node % len(runners)]
        self.deployment.kill_runner(runner)
        await asyncio.sleep(fault.hold)
        self.deployment.start_runner(runner)
        fault.detail = runner.name

    async def agent_node_cut(self, fault: Fault) -> None:
        """The agents' links to the node go silent for ``hold`` seconds."""
        proxy = self.deployment.nodes[fault.node].agent_proxy
        proxy.cut()
        await asyncio.sleep(fault.hold)
        proxy.heal()


async def _first(probe: Callable[[], Awaitable[str]], within: float) -> str:
    """Poll ``probe`` until it says something, at most ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        said = await probe()
        if said:
            return said
        await asyncio.sleep(0.02)
    return ""


def fault_records(faults: Sequence[Fault]) -> list[dict[str, Any]]:
    return [asdict(f) for f in faults]
