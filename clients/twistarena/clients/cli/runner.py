"""``twistarena runner``: play the seats of hosted agents that the server hands out.

Connects to the server with a runner token (``serve --runner-token``, or one
that ``Runners.MintRunnerToken`` gave an admin), says how many seats it plays
at once, and plays each seat it is given with the agent's submitted program in
the sandbox. Versions are fetched once and kept under ``--cache-dir`` by
content hash. ``serve`` starts runners itself (``serve --runners``); run this
on other machines to add more. Logs are key=value lines (``--log-format json``
for JSON), one event per line.

``twistarena runner-token`` mints a runner token with the server's admin token:
the token for a runner on another machine (the store keeps only its hash).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import grpc
import structlog
from twistarena.hosted.archives import MIB
from twistarena.v1 import runners_pb2, runners_pb2_grpc

from ..sdk import AgentError
from ..sdk.connection import bearer, parse_servers, read_root_cert, unary
from ..terminal import make_console
from . import admintoken
from .match import DEFAULT_SERVER, add_server_args, fail

#: Where a runner reads its token when ``--runner-token`` is not given.
TOKEN_ENV = "TWISTARENA_RUNNER_TOKEN"
#: ``--cache-max-mb``'s default.
DEFAULT_CACHE_MB = 2048


def register(sub: Any) -> None:
    parser = sub.add_parser("runner", help="play hosted agents' seats (a runner process)",
                            description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=DEFAULT_SERVER,
                        help="HOST:PORT[,HOST:PORT...] tried in turn (default: "
                             "$TWISTARENA_SERVER or %(default)s)")
    parser.add_argument("--slots", type=int, default=8,
                        help="seats played at once (default 8)")
    parser.add_argument("--runner-token", default=None,
                        help=f"the runner token (default: ${TOKEN_ENV})")
    parser.add_argument("--cache-dir", type=Path,
                        default=Path.home() / ".cache" / "twistarena" / "versions",
                        help="where versions are kept, by content hash "
                             "(default ~/.cache/twistarena/versions)")
    parser.add_argument("--cache-max-mb", type=float, default=DEFAULT_CACHE_MB, metavar="MB",
                        help="bound of the cache: the versions used least recently and "
                             f"not being played are removed past it (default "
                             f"{DEFAULT_CACHE_MB})")
    parser.add_argument("--metrics-port", type=int, default=None,
                        help="serve the runner's Prometheus metrics (its cache's bytes, "
                             "bound and removals) on this port (0: a free one)")
    parser.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                        help="run programs in bubblewrap (default; refused when it is not "
                             "installed) or, on a host that trusts them, without a sandbox")
    parser.add_argument("--name", default="", help="a name for the server's logs")
    parser.add_argument("--root-cert", metavar="PEM", default=None,
                        help="use TLS, trusting this root certificate")
    parser.add_argument("--tls", action="store_true", help="use TLS with the system roots")
    parser.add_argument("--log-format", choices=("keyvalue", "json"), default="keyvalue")
    parser.set_defaults(run=run)

    mint = sub.add_parser("runner-token", help="mint a runner token (admin)",
                          description="Mint a runner token for `twistarena runner "
                                      "--runner-token` on another machine. It is shown only "
                                      "this once: the server keeps its hash.")
    add_server_args(mint)
    mint.add_argument("--name", default="",
                      help="what the token is for, in the server's logs (e.g. the machine)")
    mint.add_argument("--admin-token", default=None,
                      help="the server's admin token (default: $TWISTARENA_ADMIN_TOKEN)")
    mint.add_argument("--json", action="store_true", help="print JSON")
    mint.set_defaults(run=run_mint)


def run_mint(args: argparse.Namespace) -> int:
    """Mint one token; it is not retried on another server once a server may have
    minted it (only UNAVAILABLE, a call that did not arrive, is)."""
    console = make_console(stderr=args.json)
    admin = admintoken.from_args(args)
    request = runners_pb2.MintRunnerTokenRequest(name=args.name)
    try:
        minted = asyncio.run(unary(runners_pb2_grpc.RunnersStub, "MintRunnerToken", request,
                                   parse_servers(args.server), read_root_cert(args.root_cert),
                                   metadata=bearer(admin), tls=args.tls,
                                   retry_on=frozenset({grpc.StatusCode.UNAVAILABLE})))
    except AgentError as error:
        return fail(console, error)
    if args.json:
        print(json.dumps({"name": args.name, "runner_token": minted.runner_token}))
    else:
        console.print(f"runner token: {minted.runner_token}\nkeep it secret: it is shown "
                      f"only this once; pass it as ${TOKEN_ENV} to `twistarena runner`",
                      highlight=False, soft_wrap=True)
    return 0


def configure_logging(json_lines: bool) -> None:
    """One event per line on stdout: key=value, or JSON; each line in one write, so
    that nothing written to the same pipe (``serve`` merges a runner's stderr
    into it) can land between an event and its newline."""
    renderer: Any = (structlog.processors.JSONRenderer() if json_lines else
                     structlog.processors.KeyValueRenderer(key_order=["timestamp", "level",
                                                                      "event"]))
    structlog.configure(
        processors=[structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True), renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.WriteLoggerFactory(sys.stdout),
        cache_logger_on_first_use=False)


def run(args: argparse.Namespace) -> int:
    from twistarena.sandbox import SandboxUnavailable, sandbox_mode

    from .servers import Runner, RunnerOptions

    configure_logging(args.log_format == "json")
    try:
        mode = sandbox_mode(args.sandbox)
    except SandboxUnavailable as error:
        print(f"twistarena runner: {error}", file=sys.stderr)
        return 2
    token = args.runner_token or os.environ.get(TOKEN_ENV, "")
    if not token:
        print(f"twistarena runner: give --runner-token or ${TOKEN_ENV}", file=sys.stderr)
        return 2
    if args.slots < 1 or args.cache_max_mb <= 0:
        print("twistarena runner: --slots must be at least 1 and --cache-max-mb positive",
              file=sys.stderr)
        return 2
    options = RunnerOptions(servers=parse_servers(args.server), runner_token=token,
                            slots=args.slots, cache_dir=args.cache_dir, sandbox=mode,
                            name=args.name, root_cert=read_root_cert(args.root_cert),
                            tls=args.tls)
    runner = Runner(options)
    runner.cache.max_bytes = int(args.cache_max_mb * MIB)
    runner.cache.evict()
    if args.metrics_port is not None:
        from prometheus_client import start_http_server

        server, _thread = start_http_server(args.metrics_port, addr="127.0.0.1")
        structlog.get_logger("twistarena.runner").info(
            "runner_metrics", port=server.server_address[1])
    try:
        asyncio.run(runner.run())
    except AgentError as error:
        print(f"twistarena runner: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0
