"""Several `twistarena serve` nodes over one store, and a 3-primary Valkey cluster
(the one ``twistarena chaos`` starts: ``twistarena.tools.chaos.deploy``).

Nodes listen on fixed free loopback ports (so a restarted node keeps its
address) and advertise them; logs are JSON lines, read back by the tests.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from twistarena.tools.chaos.deploy import ValkeyCluster as ValkeyCluster

from tests.support.process import ServeProcess, json_records
from tests.support.valkey import free_port

#: Ports given to the nodes of this process: a port is only checked free when it
#: is drawn, so two nodes made before either binds could draw the same one.
_HANDED_OUT: set[int] = set()


def own_port() -> int:
    """A free loopback port that no other node of this process was given."""
    for _ in range(100):
        port = free_port()
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no free loopback port left that no node was given")


class Node:
    """One node: ``start`` (again after a kill or a drain keeps id and address)."""

    def __init__(self, node_id: str, redis_url: str, lease_ms: int = 2000,
                 drain_grace: float = 8.0, extra: Sequence[str] = ()) -> None:
        self.node_id = node_id
        self.redis_url = redis_url
        self.port = own_port()
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
    """``count`` nodes started at once; if one cannot start, the others are
    stopped before the error is raised (the test never gets them to clean up)."""
    nodes = [Node(f"node{i + 1}", redis_url, **kwargs) for i in range(count)]
    try:
        with ThreadPoolExecutor(count) as pool:
            list(pool.map(Node.start, nodes))
    except BaseException:
        for node in nodes:
            node.cleanup()
        raise
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
