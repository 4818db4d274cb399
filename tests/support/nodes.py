"""Several `twistarena serve` nodes over one store, and a 3-primary Valkey cluster.

Nodes listen on fixed free loopback ports (so a restarted node keeps its
address) and advertise them; logs are JSON lines, read back by the tests.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc
from twistarena.server.embedded import ping, valkey_binary

from tests.support.process import ServeProcess, json_records
from tests.support.valkey import free_port


class Node:
    """One node: ``start`` (again after a kill or a drain keeps id and address)."""

    def __init__(self, node_id: str, redis_url: str, lease_ms: int = 2000,
                 drain_grace: float = 8.0, extra: Sequence[str] = ()) -> None:
        self.node_id = node_id
        self.redis_url = redis_url
        self.port = free_port()
        self.lease_ms = lease_ms
        self.drain_grace = drain_grace
        self.extra = list(extra)
        self.proc: ServeProcess | None = None
        self.logs: list[str] = []

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, bind_within: float = 15.0) -> Node:
        """Start (again) on this node's own port.

        A node restarted right after its last life ended can find the port not yet
        free to bind (the node binds without SO_REUSEPORT, so that two servers never
        share a port by mistake): only that refusal is tried again, until
        ``bind_within`` seconds have passed.
        """
        deadline = time.monotonic() + bind_within
        while True:
            proc = ServeProcess([
                "--port", str(self.port), "--redis-url", self.redis_url,
                "--node-id", self.node_id, "--advertise", self.address,
                "--lease-ms", str(self.lease_ms), "--drain-grace", str(self.drain_grace),
                "--log-format", "json", *self.extra])
            try:
                self.proc = proc.start()
                return self
            except RuntimeError as err:
                if "Failed to bind" not in str(err) or time.monotonic() > deadline:
                    raise
                proc.cleanup()
                time.sleep(0.2)

    @property
    def pid(self) -> int:
        assert self.proc is not None and self.proc.proc is not None
        return self.proc.proc.pid

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self._keep_log()

    def terminate(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        code = self.proc.terminate(timeout)
        self._keep_log()
        return code

    def pause(self) -> None:
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def _keep_log(self) -> None:
        if self.proc is not None:
            self.logs.append(self.proc.output())
            self.proc.cleanup()

    def records(self) -> list[dict[str, Any]]:
        """Every JSON log record of every life of this node."""
        texts = [*self.logs]
        if self.proc is not None and self.proc.log_path.exists():
            texts.append(self.proc.output())
        return [record for text in texts for record in json_records(text)]

    def cleanup(self) -> None:
        if self.proc is not None:
            if self.proc.proc is not None and self.proc.proc.poll() is None:
                os.kill(self.proc.proc.pid, signal.SIGCONT)
            self.proc.cleanup()


def start_nodes(redis_url: str, count: int = 3, **kwargs: Any) -> list[Node]:
    nodes = [Node(f"node{i + 1}", redis_url, **kwargs) for i in range(count)]
    with ThreadPoolExecutor(count) as pool:
        list(pool.map(Node.start, nodes))
    return nodes


def owners(client: Any, match_ids: Sequence[str]) -> dict[str, dict[str, str]]:
    """``{m:<id>}:owner`` of each match, decoded."""
    pipe = client.pipeline(transaction=False)
    for mid in match_ids:
        pipe.hgetall(f"{{m:{mid}}}:owner")
    rows = pipe.execute()
    return {mid: {k.decode(): v.decode() for k, v in row.items()}
            for mid, row in zip(match_ids, rows, strict=True)}


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


class ValkeyCluster:
    """Three primaries (no replicas) on loopback, slots split evenly.

    ``aof``: each primary keeps an append-only file fsynced on every write, so
    one killed and restarted (``restart``) comes back with all it acknowledged."""

    def __init__(self, size: int = 3, aof: bool = False) -> None:
        self.size = size
        self.aof = aof
        self.ports = [free_port() for _ in range(size)]
        #: Cluster bus ports, given explicitly (the default, port + 10000, may not exist).
        self.bus_ports = [free_port() for _ in range(size)]
        self.dir = Path(tempfile.mkdtemp(prefix="ta-test-cluster-"))
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def _spawn(self, i: int) -> subprocess.Popen[bytes]:
        port, bus = self.ports[i], self.bus_ports[i]
        work = self.dir / str(port)
        work.mkdir(exist_ok=True)
        aof = ["--appendonly", "yes", "--appendfsync", "always"] if self.aof else \
            ["--appendonly", "no"]
        return subprocess.Popen(
            [str(valkey_binary()), "--bind", "127.0.0.1", "--port", str(port),
             "--dir", str(work), "--save", "", *aof,
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-port", str(bus),
             "--cluster-node-timeout", "5000", "--daemonize", "no",
             "--logfile", str(work / "valkey.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def primary_of(self, key: str) -> int:
        """The primary holding ``key``'s slot (``start`` gives each an equal range)."""
        from redis.crc import key_slot

        return min(key_slot(key.encode()) // (16384 // self.size), self.size - 1)

    def kill(self, i: int) -> None:
        """kill -9 primary ``i``."""
        self.procs[i].kill()
        self.procs[i].wait(10)

    def restart(self, i: int, timeout: float = 30.0) -> None:
        """Start primary ``i`` again on its port and directory (its AOF, its node id)."""
        self.procs[i] = self._spawn(i)
        deadline = time.monotonic() + timeout
        while not ping("127.0.0.1", self.ports[i]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster node {self.ports[i]} did not restart")
            time.sleep(0.02)

    def start(self, timeout: float = 30.0) -> ValkeyCluster:
        self.procs = [self._spawn(i) for i in range(self.size)]
        deadline = time.monotonic() + timeout
        for port in self.ports:
            while not ping("127.0.0.1", port):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"cluster node {port} did not start")
                time.sleep(0.02)
        clients = [redis.Redis(host="127.0.0.1", port=p) for p in self.ports]
        per = 16384 // self.size
        for i, client in enumerate(clients):
            last = 16383 if i == self.size - 1 else (i + 1) * per - 1
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", i * per, last)
        for port, bus in zip(self.ports[1:], self.bus_ports[1:], strict=True):
            clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port, bus)
        while True:
            infos = [c.execute_command("CLUSTER", "INFO") for c in clients]
            texts = [i.decode() if isinstance(i, bytes) else str(i) for i in infos]
            if all("cluster_state:ok" in t and f"cluster_known_nodes:{self.size}" in t
                   for t in texts):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster did not form: {texts}")
            time.sleep(0.1)
        for client in clients:
            client.close()
        return self

    def client(self) -> Any:
        from redis.cluster import ClusterNode, RedisCluster

        return RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in self.ports])

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
        self.procs.clear()
        shutil.rmtree(self.dir, ignore_errors=True)


async def health_not_serving(address: str) -> bool:
    """Whether the node at ``address`` says NOT_SERVING (as a node cut from its store
    does); False when it does not answer."""
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            resp = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=1)
        except grpc.aio.AioRpcError:
            return False
    return bool(resp.status == health_pb2.HealthCheckResponse.NOT_SERVING)
