"""``twistarena runner``: play the seats of hosted agents that the server hands out.

Connects to the server with a runner token (``serve --runner-token``, or one
that ``Runners.MintRunnerToken`` gave an admin), says how many seats it plays
at once, and plays each seat it is given with the agent's submitted program in
the sandbox. Versions are fetched once and kept under ``--cache-dir`` by
content hash. ``serve`` starts runners itself (``serve --runners``); run this
on other machines to add more. Logs are key=value lines (``--log-format json``
for JSON), one event per line.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import Any

import structlog

from ..sdk import AgentError
from ..sdk.connection import parse_servers, read_root_cert
from .match import DEFAULT_SERVER

#: Where a runner reads its token when ``--runner-token`` is not given.
TOKEN_ENV = "TWISTARENA_RUNNER_TOKEN"


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
    parser.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                        help="run programs in bubblewrap (default; refused when it is not "
                             "installed) or, on a host that trusts them, without a sandbox")
    parser.add_argument("--name", default="", help="a name for the server's logs")
    parser.add_argument("--root-cert", metavar="PEM", default=None,
                        help="use TLS, trusting this root certificate")
    parser.add_argument("--tls", action="store_true", help="use TLS with the system roots")
    parser.add_argument("--log-format", choices=("keyvalue", "json"), default="keyvalue")
    parser.set_defaults(run=run)


def configure_logging(json_lines: bool) -> None:
    """One event per line on stdout: key=value, or JSON."""
    renderer: Any = (structlog.processors.JSONRenderer() if json_lines else
                     structlog.processors.KeyValueRenderer(key_order=["timestamp", "level",
                                                                      "event"]))
    structlog.configure(
        processors=[structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True), renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=False)


def run(args: argparse.Namespace) -> int:
    from ..runner import Runner, RunnerOptions
    from ..sandbox import SandboxUnavailable, sandbox_mode

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
    if args.slots < 1:
        print("twistarena runner: --slots must be at least 1", file=sys.stderr)
        return 2
    options = RunnerOptions(servers=parse_servers(args.server), runner_token=token,
                            slots=args.slots, cache_dir=args.cache_dir, sandbox=mode,
                            name=args.name, root_cert=read_root_cert(args.root_cert),
                            tls=args.tls)
    try:
        asyncio.run(Runner(options).run())
    except AgentError as error:
        print(f"twistarena runner: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0
