"""A hosted seat's program, and what it did: the one place where the runner meets
the bridge's ``ProgramBot``.

The program runs with the version's directory as its working directory and an
environment of PATH, HOME, LANG only (nothing of the runner's: not its token,
not its cache), under the bridge's limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from twistarena.v1 import runners_pb2 as rpb

from ..bridge import Limits, ProgramBot

#: The only environment a hosted program gets.
PROGRAM_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}


def seat_program(assignment: rpb.SeatAssignment, code_dir: Path, sandbox: str) -> ProgramBot:
    """The program of a hosted seat, ready to start."""
    return ProgramBot(assignment.entry, limits=Limits(), cwd=str(code_dir), env=PROGRAM_ENV,
                      name=f"{assignment.agent_id}/{assignment.match_id}/{assignment.seat}")


def seat_stats(agent: Any, bot: ProgramBot) -> rpb.SeatStats:
    """What the seat's program did in its match, as ReportSeat carries it."""
    return rpb.SeatStats(decisions=agent.decisions, timeouts=bot.failures,
                         restarts=bot.restarts)
