"""The one module of the clients that imports the operator's side: the
commands that start servers, the web gateway and runners (``serve``, ``demo``,
``cluster``, ``web``, ``runner``) get them from here.

Every other client talks to a server over gRPC only, and the server never
imports the clients. The commands import this module when they run, so that
``twistarena --help`` and the other commands do not load the server.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from rich.console import Console
from twistarena.clients.web import running_web
from twistarena.runner import Runner, RunnerOptions
from twistarena.server.app import App
from twistarena.server.app import run as run_server
from twistarena.server.config import Limits, ServerConfig, TlsConfig
from twistarena.server.embedded import EmbeddedValkey, die_with_parent, kept_secret, write_secret
from twistarena.server.logs import write_line

__all__ = ["EmbeddedValkey", "Limits", "Runner", "RunnerOptions", "ServerConfig", "TlsConfig",
           "die_with_parent", "kept_secret", "local_server", "run_server", "running_web",
           "write_line", "write_secret"]


@contextlib.asynccontextmanager
async def local_server(console: Console, admin_token: str) -> AsyncIterator[str]:
    """The real server in this process (free loopback port, embedded Valkey), whose
    admin calls need ``admin_token`` like any ``serve``'s."""
    app = App(ServerConfig(host="127.0.0.1", port=0, admin_token=admin_token))
    with console.status("starting the server and its embedded Valkey..."):
        await app.start()
    console.print(f"server listening on [bold]{app.address}[/bold] (embedded Valkey)",
                  highlight=False)
    try:
        yield app.address
    finally:
        with console.status("stopping the server..."):
            await app.stop()
