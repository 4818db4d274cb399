"""Free loopback ports for the processes a deployment starts: the node's
embedded store, the nodes and runners of ``cluster`` and of the tools.

A port is drawn below the kernel's ephemeral range when there is room: a
port in that range can meanwhile become the local end of an outgoing
connection, and a process restarted on "its" port (a store after a crash, a
node after kill -9) could not bind it. Socket calls only, nothing of ours:
the node and the tools both use it, and neither needs the other for it.
"""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_low() -> int:
    """The first port the kernel may give an outgoing connection (Linux; 32768
    elsewhere or when unreadable, the usual start of that range)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_run(span: tuple[int, int], count: int = 1, host: str = "127.0.0.1") -> int | None:
    """The first of ``count`` consecutive ports of ``span`` (low, high) free on
    ``host`` right now, drawn at random; None when 200 draws find none."""
    low, high = span
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(low, high - count + 1)
        with contextlib.ExitStack() as held:
            try:
                for port in range(base, base + count):
                    held.enter_context(socket.socket()).bind((host, port))
            except OSError:
                continue
            return base
    return None
