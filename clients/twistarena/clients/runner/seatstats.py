"""A hosted seat's program, and what it did: the one place where the runner meets
the bridge's ``ProgramBot``.

The program runs with the version's directory as its working directory and an
environment of PATH, HOME, LANG only (nothing of the runner's: not its token,
not its cache), under the bridge's limits.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from twistarena.v1 import runners_pb2 as rpb

from ..bridge import JSON_FORM, TEXT_FORM, Limits, ProgramBot

#: The only environment a hosted program gets.
PROGRAM_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}


#: An entry may name the form of the messages its program reads first:
#: ``text: ./bot`` for the plain-text form (as ``twistarena bot --exec ./bot
#: --text``); ``json:`` or nothing for JSON lines.
FORM_PREFIXES = {"text:": TEXT_FORM, "json:": JSON_FORM}


def entry_command(entry: str) -> tuple[list[str], str]:
    """(argv, message form) of a version's entry command."""
    for prefix, form in FORM_PREFIXES.items():
        if entry.startswith(prefix):
            return shlex.split(entry[len(prefix):]), form
    return shlex.split(entry), JSON_FORM


def seat_program(assignment: rpb.SeatAssignment, code_dir: Path, sandbox: str) -> ProgramBot:
    """The program of a hosted seat, ready to start."""
    argv, form = entry_command(assignment.entry)
    return ProgramBot(argv, form=form, limits=Limits(), cwd=str(code_dir), env=PROGRAM_ENV,
                      name=f"{assignment.agent_id}/{assignment.match_id}/{assignment.seat}")


def seat_stats(agent: Any, bot: ProgramBot) -> rpb.SeatStats:
    """What the seat's program did in its match, as ReportSeat carries it."""
    return rpb.SeatStats(decisions=agent.decisions, timeouts=bot.failures,
                         restarts=bot.restarts)
