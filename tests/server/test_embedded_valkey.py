"""``serve`` with its embedded Valkey starts quietly (no gRPC fork warning: the Valkey
child is started without running Python between fork and exec), on a port no
outgoing connection can hold, and still takes that Valkey down with it when it is
killed."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from twistarena import ports
from twistarena.server import embedded

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
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            assert _alive(pid) and b"valkey" in cmdline
            # Below the kernel's ephemeral range: a restart after a crash finds it free.
            # (valkey-server shows "host:port" as its title)
            title = re.search(rb"127\.0\.0\.1:(\d+)", cmdline)
            assert title is not None, cmdline
            port = int(title.group(1))
            low, high = embedded.STORE_PORTS
            assert low <= port < high < ports.ephemeral_low()
            proc.kill()
            run(wait_until(lambda: not _alive(pid), "the embedded valkey to exit", 10))
            assert "fork" not in proc.output()
        finally:
            proc.cleanup()


def test_the_store_port_is_drawn_below_the_ephemeral_range_when_there_is_room(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kernel_low = ports.ephemeral_low()  # this machine's own range
    ranges = tmp_path / "ip_local_port_range"
    monkeypatch.setattr(ports, "EPHEMERAL_RANGE", ranges)
    ranges.write_text("32768\t60999\n")
    low, high = embedded.STORE_PORTS
    assert all(low <= embedded.free_port() < high for _ in range(20))
    # No room below the range: the kernel picks, from its own range.
    ranges.write_text("1024\t65535\n")
    assert ports.ephemeral_low() == 1024
    assert all(embedded.free_port() >= kernel_low for _ in range(20))
