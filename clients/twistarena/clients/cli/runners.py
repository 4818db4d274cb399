"""``serve --runners``: the runner processes that ``serve`` starts itself.

One machine works out of the box: with the embedded Valkey (no
``--redis-url``) ``serve`` starts two runners (``auto``; two, so that one
takes the seats of the other should it die) once it listens, as separate
processes (never inside the server: they run code strangers wrote, through
the sandbox). A deployment on a shared store runs its runners apart
(``deploy/``), so ``auto`` starts none there. A runner that exits is started
again with the same backoff as a worker; all of them stop with ``serve``.

The runners authenticate with a runner token that ``serve`` makes up (or
``--runner-token``), passed through the environment, never on a command line.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import structlog
from twistarena.sandbox import SandboxUnavailable, sandbox_mode

from .runner import DEFAULT_CACHE_MB
from .workers import Worker, count_or_auto, restart_exited

log = structlog.get_logger("twistarena.serve")

#: Runners ``auto`` starts beside an embedded Valkey.
AUTO_RUNNERS = 2
TOKEN_ENV = "TWISTARENA_RUNNER_TOKEN"


def runner_count(text: str) -> int | None:
    """``--runners``: a number (0: none), or ``auto`` (None: decided by the store)."""
    return count_or_auto(text, 0, "runners")


def add_runner_args(parser: argparse.ArgumentParser) -> None:
    """The flags of ``serve`` about hosted agents' runners."""
    group = parser.add_argument_group("runners", "processes that play hosted agents' seats "
                                                 "(twistarena runner; docs/runners.md)")
    group.add_argument("--runners", type=runner_count, default=None, metavar="auto|N|0",
                       help="runner processes to start beside the server (auto: 2 with the "
                            "embedded Valkey, none with --redis-url)")
    group.add_argument("--runner-token", default=None,
                       help=f"the token runners authenticate with (default: ${TOKEN_ENV}; "
                            "none: made up for the runners this serve starts)")
    group.add_argument("--runner-slots", type=int, default=8,
                       help="seats each started runner plays at once (default 8)")
    group.add_argument("--runner-cache-max-mb", type=float, default=DEFAULT_CACHE_MB,
                       metavar="MB", help="bound of each started runner's version cache, "
                                          f"least recently used out (default {DEFAULT_CACHE_MB})")
    group.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                       help="how the started runners run programs (default bwrap)")


def planned_runners(args: argparse.Namespace, redis_url: str | None) -> int:
    """How many runners this ``serve`` starts. ``auto`` on a host that cannot sandbox
    starts none and says so once (a runner there would refuse to start, again and
    again); a number asked for explicitly is started, and each runner says why not."""
    if args.runners is None:
        if redis_url is not None:
            return 0
        if args.sandbox == "bwrap":
            try:
                sandbox_mode("bwrap")
            except SandboxUnavailable as error:
                log.warning("no runners started: hosted agents' seats wait until a runner "
                            "connects", why=str(error))
                return 0
        return AUTO_RUNNERS
    return int(args.runners)


def runner_token(args: argparse.Namespace, starts_runners: bool) -> str | None:
    """The runner token the server accepts: given, from the environment, or made up
    when this ``serve`` starts runners."""
    given = args.runner_token or os.environ.get(TOKEN_ENV)
    if given:
        return str(given)
    return "rt_" + secrets.token_urlsafe(24) if starts_runners else None


class RunnerSet:
    """The runner children of one ``serve``: started, restarted when they exit, stopped."""

    def __init__(self, count: int, server: str, token: str, args: argparse.Namespace) -> None:
        self.cache_dir = Path(tempfile.mkdtemp(prefix="twistarena-runner-cache-"))
        env = {**os.environ, TOKEN_ENV: token}
        argv = [sys.executable, "-m", "twistarena.clients.cli", "runner", "--server", server,
                "--slots", str(args.runner_slots), "--sandbox", args.sandbox,
                "--cache-max-mb", str(getattr(args, "runner_cache_max_mb", DEFAULT_CACHE_MB))]
        if getattr(args, "log_format", "") == "json":
            argv += ["--log-format", "json"]
        if getattr(args, "tls_cert", None) is not None:
            # The runners trust the server's own certificate (it must name the
            # address they connect to: the bound host, or 127.0.0.1 for 0.0.0.0).
            argv += ["--root-cert", str(args.tls_cert)]
        ready = threading.Semaphore(0)
        # A cache each: a runner removes only versions it knows it is not playing.
        self.runners = [Worker([*argv, "--name", f"serve-runner-{i}",
                                "--cache-dir", str(self.cache_dir / f"runner-{i}")],
                               ready, label="runner", env=env) for i in range(count)]
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None

    def start(self) -> None:
        """Start every runner, and a thread that starts again those that exit."""
        for runner in self.runners:
            runner.start()
        self._keeper = threading.Thread(target=self._keep, name="runners", daemon=True)
        self._keeper.start()

    def _keep(self) -> None:
        while not self._stop.wait(0.2):
            restart_exited(self.runners, time.monotonic())

    def stop(self) -> None:
        """Stop the runners (their programs die with them) and drop the cache."""
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(5)
        for runner in self.runners:
            runner.terminate()
        for runner in self.runners:
            runner.wait(5)
        shutil.rmtree(self.cache_dir, ignore_errors=True)


def local_address(host: str, port: str | int) -> str:
    """Where a runner on this machine reaches a server bound to ``host``."""
    if host in ("0.0.0.0", "", "::", "[::]"):
        host = "127.0.0.1"
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


@contextlib.asynccontextmanager
async def runners_beside(address: str, count: int, token: str,
                         args: argparse.Namespace) -> AsyncIterator[None]:
    """The runners of a one-process ``serve``, once it listens on ``address``."""
    from .servers import write_line

    host, _, port = address.rpartition(":")
    runners = RunnerSet(count, local_address(host.strip("[]"), port), token, args)
    runners.start()
    write_line(f"started {count} runners (twistarena runner)")
    try:
        yield
    finally:
        # Stopping waits for the processes: not in the server's event loop.
        await asyncio.to_thread(runners.stop)
