"""A hosted seat's program, and what it did: the one place where the runner meets
the bridge's ``ProgramBot``.

The program runs in the sandbox (``twistarena.sandbox``): the version's
directory read-only at ``/bot``, its working directory, and an environment of
PATH, HOME and LANG only (nothing of the runner's: not its token, not its cache,
not the other versions). The messages tell it the game and its seat.
"""

from __future__ import annotations

from pathlib import Path

from twistarena.bridge import ProgramBot
from twistarena.hosted.entries import split_entry
from twistarena.sandbox import SandboxLimits
from twistarena.v1 import runners_pb2 as rpb

#: What one hosted program may use: the sandbox's defaults (1 GiB, 64 processes, one
#: core at once), 300 s of CPU per process (a match of long decisions fits), and 5 s
#: of CPU between its decisions (what a runtime's collector or compiler does then).
SEAT_LIMITS = SandboxLimits(cpu_seconds=300, cpu_cores=1.0, idle_cpu_seconds=5.0)


def seat_program(assignment: rpb.SeatAssignment, code_dir: Path, sandbox: str) -> ProgramBot:
    """The program of a hosted seat, ready to start (in ``sandbox``, its mode)."""
    form, argv = split_entry(assignment.entry)
    return ProgramBot(argv, form=form, sandbox=sandbox, code_dir=code_dir, env={},
                      limits=SEAT_LIMITS,
                      name=f"{assignment.agent_id}/{assignment.match_id}/{assignment.seat}")


def seat_stats(bot: ProgramBot) -> rpb.SeatStats:
    """What the seat's program did in its match, as ReportSeat carries it."""
    stats = bot.stats
    return rpb.SeatStats(decisions=stats.decisions, crashes=stats.crashes,
                         timeouts=stats.timeouts, illegal_outputs=stats.illegal_outputs,
                         restarts=stats.restarts, cpu_ms_total=stats.cpu_ms_total,
                         cpu_ms_max=stats.cpu_ms_max, stderr_tail=bytes(stats.stderr_tail),
                         decision_logs=[rpb.DecisionLog(decision_id=e.decision_id, text=e.text,
                                                        failure=e.failure, why=e.why)
                                        for e in stats.decision_logs.finish()])


def unstartable_stats(decisions: int, why: str) -> rpb.SeatStats:
    """The report of a seat whose program could not be started: one crash, every
    decision missed, the reason where the owner reads a program's stderr."""
    return rpb.SeatStats(decisions=decisions, crashes=1, timeouts=decisions,
                         stderr_tail=f"the runner could not start the program: {why}\n"
                         .encode()[-65536:])
