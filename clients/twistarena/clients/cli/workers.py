"""``twistarena serve --workers N``: N node processes behind one port, on one store.

A node is one Python process and uses about one core. With ``--workers N``
(``auto``: one per core) this process starts the embedded Valkey (unless
``--redis-url``) and then N ``twistarena serve`` processes, each a node of the
same cluster on that store. All of them bind the one client port with
SO_REUSEPORT (the kernel spreads connections over them), and each also listens
on a port of its own that it advertises, so that a redirect (NOT_OWNER) names
the very process that runs the match. ``listening on HOST:PORT`` is printed
once every worker listens; SIGTERM/SIGINT drain every worker, then the Valkey
stops. A worker that exits on its own is started again under the same node id
(it resumes the matches it held); one that keeps exiting soon after its start
is started again later and later (``RESTARTS``), not in a tight loop.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence

from ..sdk.connection import Backoff

#: Flags the supervisor sets per worker itself (the rest are passed through).
OWN_FLAGS = frozenset({"workers", "port", "redis_url", "data_dir", "node_id", "metrics_port",
                       "web_port", "no_web", "shared_port", "runners", "runner_token"})
LISTENING = "listening on "
#: A worker that exits within this many seconds of its start is crashing: each such
#: exit doubles the wait before its next start (0.5 s up to 30 s); a longer life
#: starts the count over.
STABLE_S = 30.0
RESTARTS = Backoff(initial=0.5, maximum=30.0)


def count_or_auto(text: str, least: int, what: str) -> int | None:
    """A flag's number of processes (at least ``least`` ``what``), or None for ``auto``."""
    if text == "auto":
        return None
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', not {text!r}") from None
    if count < least:
        raise argparse.ArgumentTypeError(f"at least {least} {what}")
    return count


def worker_count(text: str) -> int:
    """``--workers``: a positive number, or ``auto`` (the cores this process may use)."""
    count = count_or_auto(text, 1, "worker")
    if count is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            os.cpu_count() or 1
    return count


def passed_flags(parser: argparse.ArgumentParser, args: argparse.Namespace,
                 own: frozenset[str] = OWN_FLAGS) -> list[str]:
    """The options given to this ``serve`` (not left at their default), as flags again,
    but for those in ``own`` (the caller sets them per child itself)."""
    out: list[str] = []
    for action in parser._actions:
        if not action.option_strings or action.dest in own:
            continue
        value = getattr(args, action.dest, action.default)
        if value == action.default or value is None:
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:
            out.append(flag)
        elif isinstance(value, list):  # a repeated flag: once per value
            for item in value:
                out += [flag, str(item)]
        else:
            out += [flag, str(value)]
    return out


def reserve_port(host: str) -> socket.socket:
    """A free port for every worker to share: bound with SO_REUSEPORT (never listening)
    and held until the workers have bound it too."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host.strip("[]"), 0))
    return sock


class Worker:
    """One ``twistarena serve`` child (or another child of ``serve``: a runner); its
    output is passed on, but for its address line."""

    def __init__(self, argv: list[str], ready: threading.Semaphore, label: str = "worker",
                 env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.ready = ready
        self.label = label
        self.env = env
        self.process: subprocess.Popen[str] | None = None
        self.started_at = 0.0
        #: Exits in a row, each within ``STABLE_S`` of its start.
        self.crashes = 0
        #: When an exited worker is due to start again (None: running, or not planned).
        self.restart_at: float | None = None
        #: The thread passing the node's output on (ends with its output).
        self.forwarded: threading.Thread | None = None

    def start(self) -> None:
        """Start the node; it gets SIGTERM when the supervisor dies (so no node is
        orphaned), without Python run between fork and exec (``die_with_parent``)."""
        from .servers import die_with_parent

        self.process = subprocess.Popen(die_with_parent(self.argv), stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, env=self.env)
        self.started_at = time.monotonic()
        self.restart_at = None
        self.forwarded = threading.Thread(target=self._forward, args=(self.process,),
                                          daemon=True)
        self.forwarded.start()

    def plan_restart(self, now: float) -> float:
        """After an exit at ``now``: the seconds until it starts again, longer for
        each exit in a row that came soon after its start."""
        self.crashes = self.crashes + 1 if now - self.started_at < STABLE_S else 0
        delay = RESTARTS.delay(self.crashes)
        self.restart_at = now + delay
        return delay

    def _forward(self, process: subprocess.Popen[str]) -> None:
        from .servers import write_line  # whole lines, never inside one of this process's

        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(LISTENING):
                self.ready.release()
                continue
            write_line(line)

    def exited(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def terminate(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def run_workers(parser: argparse.ArgumentParser, args: argparse.Namespace,
                redis_url: str | None, node_id: str, runners: int = 0,
                runner_token: str | None = None, made_up_admin: str | None = None) -> int:
    """Supervise ``args.workers`` nodes (and ``runners`` runner processes, which
    authenticate with ``runner_token``) until SIGTERM/SIGINT. ``made_up_admin``: the
    admin token this ``serve`` made up, handed to its nodes and published here."""
    from . import admintoken
    from .runners import TOKEN_ENV, RunnerSet, local_address
    from .servers import EmbeddedValkey, write_line

    count: int = args.workers
    host: str = args.host
    held = reserve_port(host) if args.port == 0 else None
    port = held.getsockname()[1] if held is not None else args.port
    embedded = None
    if redis_url is None:
        embedded = EmbeddedValkey(args.data_dir, fsync=args.durability)
        redis_url = embedded.start()
    base = node_id or uuid.uuid4().hex[:8]
    common = [sys.executable, "-m", "twistarena.clients.cli", "serve",
              *passed_flags(parser, args), "--port", str(port), "--shared-port"]
    ready = threading.Semaphore(0)
    # The store's URL (the embedded one's holds its password) goes in the environment.
    env = {**os.environ, "TWISTARENA_REDIS_URL": redis_url}
    if runner_token:
        env[TOKEN_ENV] = runner_token
    if made_up_admin:
        env[admintoken.ENV] = made_up_admin
    workers = []
    for i in range(count):
        argv = [*common, "--node-id", f"{base}-{i}"]
        if args.metrics_port is not None:
            argv += ["--metrics-port", str(args.metrics_port + i if args.metrics_port else 0)]
        argv += ["--web-port", str(args.web_port)] if i == 0 and args.web_port is not None \
            else ["--no-web"]
        workers.append(Worker(argv, ready, env=env))
    stopping = threading.Event()

    def stop(signum: int, frame: object) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    runner_set = RunnerSet(runners, local_address(host, port), runner_token or "", args) \
        if runners else None
    try:
        for worker in workers:
            worker.start()
        if not _await_ready(ready, workers, stopping):
            print("twistarena serve: a worker exited before it listened", file=sys.stderr)
            return 1
        if held is not None:
            held.close()
        write_line(f"{LISTENING}{host}:{port}")
        if runner_set is not None:
            runner_set.start()
        with contextlib.ExitStack() as stack:
            if made_up_admin:
                stack.enter_context(admintoken.published(port, made_up_admin, args.data_dir))
            while not stopping.wait(0.1):
                restart_exited(workers, time.monotonic())
        return 0
    finally:
        if runner_set is not None:
            runner_set.stop()
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(args.drain_grace + 10)
        if embedded is not None:
            embedded.stop()


def restart_exited(workers: Sequence[Worker], now: float) -> None:
    """Start again, under its node id (it resumes the matches it held), each worker
    that exited and whose wait is over; plan the wait of one that just exited."""
    from .servers import write_line

    for i, worker in enumerate(workers):
        if not worker.exited():
            continue
        if worker.restart_at is None:
            code = worker.process.returncode if worker.process is not None else None
            delay = worker.plan_restart(now)
            write_line(f"twistarena serve: {worker.label} {i} exited with code {code}; "
                       f"starting it again in {delay:.1f} s", sys.stderr)
        elif now >= worker.restart_at:
            worker.start()


def _await_ready(ready: threading.Semaphore, workers: Sequence[Worker],
                 stopping: threading.Event, timeout: float = 120.0) -> bool:
    """Until every worker has printed its address (False: one died first, or a stop)."""
    deadline = time.monotonic() + timeout
    listening = 0
    while listening < len(workers):
        if ready.acquire(timeout=0.2):
            listening += 1
            continue
        if stopping.is_set() or time.monotonic() > deadline or \
                any(w.exited() for w in workers):
            return False
    return True
