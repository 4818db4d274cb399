"""Child processes for benchmarks and system tests: a server, its CPU and memory.

The server under test runs in its own process so that its CPU time and RSS
can be read from ``/proc`` apart from the load generator's.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

LISTENING = re.compile(r"listening on (\S+:\d+)")
#: The metrics port in a node's ``listening`` log line (JSON or key=value).
METRICS_PORT = re.compile(r"metrics_port\"?[=:] ?(\d+)")
CLI = "import sys; from twistarena.clients.cli import main; sys.exit(main())"
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    """User + system CPU of one process (not its children), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def syscalls(pid: int) -> int:
    """Read plus write system calls of one process so far (``/proc/PID/io``): how many
    messages share a system call shows in their count per decision."""
    try:
        fields = dict(line.split(": ", 1)
                      for line in Path(f"/proc/{pid}/io").read_text().splitlines())
    except OSError:
        return 0
    return int(fields.get("syscr", 0)) + int(fields.get("syscw", 0))


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return 0


def children(pid: int) -> list[int]:
    """Direct children of every thread of ``pid`` (a helper may be started from a thread)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out.extend(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return out


def is_helper(pid: int) -> bool:
    """Whether a server's child is a helper (the embedded Valkey, a runner), not a node."""
    try:
        if Path(f"/proc/{pid}/comm").read_text().startswith("valkey"):
            return True
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"twistarena.clients.cli" in argv and b"runner" in argv


def own_cpu_seconds() -> float:
    """CPU of this process (the load generator)."""
    t = os.times()
    return t.user + t.system


class ServerProcess:
    """``twistarena serve`` (or any command printing ``listening on HOST:PORT``) as a child.

    Its output is drained by a thread (kept in ``lines``, bounded) so that a
    chatty log never blocks the server on a full pipe.
    """

    def __init__(self, argv: Sequence[str], env: dict[str, str] | None = None,
                 keep_lines: int = 2000) -> None:
        self.argv = list(argv)
        self.env = env
        self.keep_lines = keep_lines
        self.process: subprocess.Popen[str] | None = None
        self.address = ""
        self.lines: list[str] = []
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def serve(cls, *args: str, env: dict[str, str] | None = None) -> ServerProcess:
        """``twistarena serve --host 127.0.0.1 --port 0`` plus ``args`` (no runners unless
        ``args`` asks for them: they would share the machine being measured)."""
        runners = () if "--runners" in args else ("--runners", "0")
        # A measured server is this machine's own: its matches are created from here.
        admin = () if "--admin-token" in args else ("--open-local-admin",)
        return cls([sys.executable, "-c", CLI, "serve", "--host", "127.0.0.1", "--port", "0",
                    *runners, *admin, *args], env=env)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 60.0) -> str:
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.process = subprocess.Popen(self.argv, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, env=env,
                                        start_new_session=True)
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or not self.address:
            tail = "\n".join(self.lines[-30:])
            self.kill()
            raise RuntimeError(f"server did not report its address within {timeout}s:\n{tail}")
        return self.address

    def _drain(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            if len(self.lines) < self.keep_lines:
                self.lines.append(line.rstrip())
            if not self.address:
                found = LISTENING.search(line)
                if found:
                    self.address = found.group(1)
                    self._ready.set()
        self._ready.set()

    def _children(self, helpers: bool) -> list[int]:
        """The server's children: its helpers (the embedded Valkey), or the rest
        (the node processes of ``serve --workers``)."""
        return [c for c in children(self.pid) if is_helper(c) == helpers]

    def cpu_seconds(self) -> float:
        """CPU of the server: this process and its worker processes, if any."""
        return cpu_seconds(self.pid) + sum(cpu_seconds(c) for c in self._children(False))

    def helper_cpu_seconds(self) -> float:
        """CPU of the server's helpers (the embedded Valkey)."""
        return sum(cpu_seconds(c) for c in self._children(True))

    def syscalls(self) -> int:
        """Read and write system calls of the server and its worker processes."""
        return syscalls(self.pid) + sum(syscalls(c) for c in self._children(False))

    def helper_syscalls(self) -> int:
        """Read and write system calls of the server's helpers (the embedded Valkey):
        about one read per pipeline that reaches it."""
        return sum(syscalls(c) for c in self._children(True))

    def metrics_ports(self) -> list[int]:
        """The Prometheus ports the server's nodes logged (``serve --metrics-port 0``)."""
        return sorted({int(m.group(1)) for line in self.lines
                       if (m := METRICS_PORT.search(line))})

    def rss_bytes(self) -> int:
        return rss_bytes(self.pid) + sum(rss_bytes(c) for c in self._children(False))

    def helper_rss_bytes(self) -> int:
        return sum(rss_bytes(c) for c in self._children(True))

    def kill(self) -> None:
        """SIGKILL, as a crash would: no drain, nothing flushed."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (graceful drain), then SIGKILL if it takes too long."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        if self._thread is not None:
            self._thread.join(2)
