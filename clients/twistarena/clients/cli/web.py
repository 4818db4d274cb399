"""``twistarena web``: the arena in the browser, as a client of one node or a cluster.

The pages (``/``, ``/matches/ID``, ``/tournaments/ID``, ``/agents``,
``/nodes``, ``/rules/GAME``) and their JSON (``/api/...``) are described in
docs/web.md. The gateway speaks only the public gRPC contract: it sees what
any spectator sees.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from typing import Any

from ..sdk.localbots import configure_logging

DEFAULT_WEB_PORT = 8080


def register(sub: Any) -> None:
    p = sub.add_parser("web", help="serve the arena's web pages (lobby, matches, replays, "
                                   "tournaments) from one node or a cluster",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default="127.0.0.1:50051", metavar="ADDR[,ADDR...]",
                   help="the arena's gRPC address(es); redirects between nodes are followed "
                        "(default 127.0.0.1:50051)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve HTTP on "
                                                       "(default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_WEB_PORT,
                   help=f"HTTP port; 0 picks a free one (default {DEFAULT_WEB_PORT})")
    p.add_argument("--tls", action="store_true", help="connect to the servers with TLS")
    p.add_argument("--root-cert", default=None, help="PEM root certificate for --tls")
    p.add_argument("-v", "--verbose", action="store_true", help="show the gateway's logs")
    p.set_defaults(run=run)


async def serve_until_stopped(servers: str, host: str, port: int, **tls: Any) -> None:
    from .servers import running_web

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with running_web(servers, host, port, **tls) as url:
        print(f"web listening on {url} (servers {servers})", flush=True)
        await stop.wait()


def run(args: argparse.Namespace) -> int:
    configure_logging(args.verbose)
    main = serve_until_stopped(args.server, args.host, args.port, root_cert=args.root_cert,
                               tls=args.tls or args.root_cert is not None)
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is absent on some platforms
        asyncio.run(main)
        return 0
    # As the node runs: a browser's writes cost less on uvloop's transports.
    uvloop.run(main)
    return 0
