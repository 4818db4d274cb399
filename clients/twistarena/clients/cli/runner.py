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
import os
from pathlib import Path
from typing import Any

import grpc
import structlog
from twistarena.hosted.archives import MIB
from twistarena.v1 import runners_pb2, runners_pb2_grpc

from ..sdk.connection import bearer, parse_servers, read_root_cert, unary
from ..sdk.localbots import configure_logging
from ..terminal import make_console
from . import admintoken
from .command import CommandError, print_json
from .options import add_admin_token, add_connection_args, add_json

#: Where a runner reads its token when ``--runner-token`` is not given.
TOKEN_ENV = "TWISTARENA_RUNNER_TOKEN"
#: ``--cache-max-mb``'s default.
DEFAULT_CACHE_MB = 2048


def register(sub: Any) -> None:
    parser = sub.add_parser("runner", help="play hosted agents' seats (a runner process)",
                            description=__doc__)
    add_connection_args(parser, verbose=False)
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
    parser.add_argument("--log-format", choices=("keyvalue", "json"), default="keyvalue")
    parser.set_defaults(run=run)

    mint = sub.add_parser("runner-token", help="mint a runner token (admin)",
                          description="Mint a runner token for `twistarena runner "
                                      "--runner-token` on another machine.\nIt is shown "
                                      "only this once: the server keeps its hash.")
    add_connection_args(mint)
    mint.add_argument("--name", default="",
                      help="what the token is for, in the server's logs (e.g. the machine)")
    add_admin_token(mint)
    add_json(mint, "one line")
    mint.set_defaults(run=run_mint)


def run_mint(args: argparse.Namespace) -> int:
    """Mint one token; it is not retried on another server once a server may have
    minted it (only UNAVAILABLE, a call that did not arrive, is)."""
    admin = admintoken.from_args(args)
    request = runners_pb2.MintRunnerTokenRequest(name=args.name)
    minted = asyncio.run(unary(runners_pb2_grpc.RunnersStub, "MintRunnerToken", request,
                               parse_servers(args.server), read_root_cert(args.root_cert),
                               metadata=bearer(admin), tls=args.tls,
                               retry_on=frozenset({grpc.StatusCode.UNAVAILABLE})))
    if args.json:
        print_json({"name": args.name, "runner_token": minted.runner_token})
    else:
        make_console().print(f"runner token: {minted.runner_token}\nkeep it secret: it is shown "
                      f"only this once; pass it as ${TOKEN_ENV} to `twistarena runner`",
                      highlight=False, soft_wrap=True)
    return 0


def run(args: argparse.Namespace) -> int:
    from twistarena.sandbox import SandboxUnavailable, sandbox_mode

    from .servers import Runner, RunnerOptions

    # One event per line on stdout: serve merges a runner's output into its own.
    configure_logging(lines=args.log_format)
    try:
        mode = sandbox_mode(args.sandbox)
    except SandboxUnavailable as error:
        raise CommandError(str(error)) from error
    token = args.runner_token or os.environ.get(TOKEN_ENV, "")
    if not token:
        raise CommandError(f"give --runner-token or ${TOKEN_ENV}")
    if args.slots < 1 or args.cache_max_mb <= 0:
        raise CommandError("--slots must be at least 1 and --cache-max-mb positive")
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
        asyncio.run(runner.run())  # a refused runner token: AgentError, status 2
    except KeyboardInterrupt:
        return 0
    return 0
