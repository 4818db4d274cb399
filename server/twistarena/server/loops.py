"""Stopping a component's background loops, within a bound.

A loop's cancel can be lost: the cluster's heartbeat loop and the tournament
director's loop were each found still looping a second after their cancel,
the cancel still requested; a second cancel ended them. Waiting for such a
loop held a draining node to the end of its grace. So every component stops
its loops here: cancelled again every ``RECANCEL_S`` until they end, for at
most ``LOOP_STOP_S``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from . import logs

log = logs.get("twistarena.loops")

#: How long a stopping component waits for its cancelled loops, at most.
LOOP_STOP_S = 1.0
#: How often a loop still running is cancelled again meanwhile.
RECANCEL_S = 0.05


async def stop_loops(tasks: Iterable[asyncio.Task[Any]], owner: str,
                     within_s: float = LOOP_STOP_S) -> None:
    """Cancel ``tasks`` (again every ``RECANCEL_S``) and wait at most
    ``within_s`` for them to end. One still running then is named in the log
    (``loop_did_not_stop``) and left behind. The caller's own cancel is
    passed on, never swallowed (``asyncio.wait`` does not catch it)."""
    pending = set(tasks)
    deadline = asyncio.get_running_loop().time() + within_s
    while pending:
        for task in pending:
            task.cancel()
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            break
        done, pending = await asyncio.wait(pending, timeout=min(RECANCEL_S, left))
        for task in done:
            if not task.cancelled():
                task.exception()  # retrieved: it ended, which is all that counts here
    for task in pending:
        log.warning("loop_did_not_stop", owner=owner, task=task.get_name(),
                    waited_s=within_s, cancels=task.cancelling(),
                    at=[f"{f.f_code.co_name}:{f.f_lineno}" for f in task.get_stack()])
