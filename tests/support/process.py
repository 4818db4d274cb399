"""`twistarena serve` as a subprocess: start it, read its address, kill it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LISTENING = re.compile(r"^listening on (\S+):(\d+)$", re.MULTILINE)
ROOT = Path(__file__).resolve().parents[2]
#: Runs the console script's entry point with this interpreter.
ENTRY = "import sys; from twistarena.clients.cli import main; sys.exit(main())"


def read_until(proc: subprocess.Popen[str], marker: str, seen: str = "",
               timeout: float = 120.0) -> str:
    """``seen`` and the lines ``proc`` prints until one holds ``marker`` (it must not
    exit first, nor take longer than ``timeout``: start-up on a busy 2-core machine)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while marker not in seen:
        line = proc.stdout.readline()
        assert line, f"exited before printing {marker!r}: {seen}"
        seen += line
        assert time.monotonic() < deadline, seen
    return seen


def json_records(text: str) -> list[dict[str, Any]]:
    """The JSON log records (one per line) in a server's output."""
    out = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` now (from /proc: what the OS sees,
    not what a log said)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it exited meanwhile
            continue
        # The command name (in parentheses) may hold spaces: the fields follow it.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` in the process tree now."""
    out, todo = [], [pid]
    while todo:
        children = child_pids(todo.pop())
        out.extend(children)
        todo.extend(children)
    return out


def command_line(pid: int) -> str:
    """The process's command line, its arguments joined by spaces ('' once it exited)."""
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


class ServeProcess:
    def __init__(self, args: Sequence[str], env: dict[str, str] | None = None,
                 secure_default: bool = False) -> None:
        # Runners (serve --runners) only where a test asks for them: each is a
        # process of its own, and most tests have no hosted agent to play.
        self.args = list(args) if "--runners" in args else [*args, "--runners", "0"]
        # Most tests create matches from this machine without a token; the tests
        # of a default serve (its own admin token) say so.
        if not secure_default and "--admin-token" not in args:
            self.args.append("--open-local-admin")
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        fd, name = tempfile.mkstemp(prefix="ta-serve-", suffix=".log")
        os.close(fd)
        self.log_path = Path(name)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> ServeProcess:
        env = dict(os.environ if self.env is None else self.env)
        paths = [str(ROOT / d) for d in ("engine", "proto", "server", "clients")]
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
        with self.log_path.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", ENTRY, "serve", *self.args],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                cwd=str(ROOT),
            )
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
            matches = list(LISTENING.finditer(text))
            if len(matches) > seen and matches:
                self.port = int(matches[-1].group(2))
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited with {self.proc.returncode}:\n{text[-3000:]}")
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"serve did not print its address:\n{self.output()[-3000:]}")

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: a crash, no drain."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM: graceful drain; returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return int(self.proc.returncode)

    def cleanup(self) -> None:
        self.kill()
        self.log_path.unlink(missing_ok=True)
