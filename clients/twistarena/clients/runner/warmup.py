"""Warming a hosted program up before its seat joins.

A match starts as soon as its last seat joins, and its first decision follows
at once: a program still loading its interpreter (a JVM, Python with its
imports) then misses it, and at 200 ms per decision it may miss several and be
restarted. So the runner starts the program first and joins the seat once the
program is ready: when its processes have stopped using CPU, which is what a
program blocked reading its first message looks like, provided none of its
threads is waiting for a CPU either (on a busy machine a loading program may
use no CPU for a while only because it gets none). The wait is bounded
(``WARM_UP_MAX_S``); a program that keeps computing is joined anyway.

CPU is read from the sandbox's cgroup where there is one, else summed over the
program's process tree in /proc (Linux), where the threads' states are read.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from ..bridge import ProgramBot
from ..sandbox import cpu_ns

#: Longest wait for a program to be ready.
WARM_UP_MAX_S = 10.0
#: How often its CPU time is read...
POLL_S = 0.02
#: ...and how long it must stay (almost) still to count as waiting for input.
STILL_S = 0.06
#: CPU it may still use meanwhile (the kernel's accounting, a stray timer).
STILL_CPU_NS = 2_000_000
_TICK_NS = 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def tree_state(pid: int) -> tuple[int, bool]:
    """(CPU ns, user + system, of a process and its descendants; whether any of
    their threads is running or waiting for a CPU), from /proc."""
    total, running = 0, False
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) * _TICK_NS
            for task in Path(f"/proc/{current}/task").iterdir():
                state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
                running = running or state == "R"
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, IndexError, ValueError):
            continue
    return total, running


async def warm_up(bot: ProgramBot) -> float:
    """Start the program and wait until it waits for input (or exits, or the bound
    passes); returns the seconds it took."""
    began = time.monotonic()
    await bot.seated()
    proc = bot.process
    if proc is None:
        return time.monotonic() - began

    def sample() -> tuple[int, bool]:
        cpu, running = tree_state(proc.pid)
        measured = cpu_ns(proc)
        return (measured if measured is not None else cpu), running

    last, still_since = sample()[0], time.monotonic()
    while proc.returncode is None and time.monotonic() - began < WARM_UP_MAX_S:
        await asyncio.sleep(POLL_S)
        now, (cpu, running) = time.monotonic(), sample()
        if cpu - last > STILL_CPU_NS or running:
            last, still_since = cpu, now
        elif now - still_since >= STILL_S:
            break
    return time.monotonic() - began
