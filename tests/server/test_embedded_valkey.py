"""``serve`` with its embedded Valkey starts quietly (no gRPC fork warning: the Valkey
child is started without running Python between fork and exec) and still takes
that Valkey down with it when it is killed."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tests.clients.helpers import run
from tests.support.process import ServeProcess
from tests.support.waiting import wait_until


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def test_serve_starts_without_fork_warnings_and_its_valkey_dies_with_it() -> None:
    with tempfile.TemporaryDirectory(prefix="ta-embedded-") as data_dir:
        proc = ServeProcess(["--port", "0", "--no-web", "--data-dir", data_dir]).start()
        try:
            assert "fork" not in proc.output(), proc.output()[-2000:]
            pid = int((Path(data_dir) / "valkey.pid").read_text())
            assert _alive(pid) and b"valkey" in Path(f"/proc/{pid}/cmdline").read_bytes()
            proc.kill()
            run(wait_until(lambda: not _alive(pid), "the embedded valkey to exit", 10))
            assert "fork" not in proc.output()
        finally:
            proc.cleanup()


