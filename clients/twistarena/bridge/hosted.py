"""Submitted programs as tournament entrants, run by the host in the sandbox.

``tournament create --entrants exec:PATH,...`` registers one agent per program,
creates the tournament with those agent ids, and plays each agent's matches
here: queue on the tournament, run the program for the assigned seat (a fresh
sandbox per match, with the program's folder as its code, see
``sandbox.spec_for_command``), repeat until the tournament is over.

``exec:NAME=COMMAND`` names the entrant; without a name it is the file name of
the program: the first argument that is a file (``perl uploads/a/bot.pl`` is
``bot.pl``), else the command's own. A name taken by an earlier entrant gets
``#2``, ``#3``... so that standings tell them apart.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
from twistarena.clients.sdk import AgentError, TournamentEnded, parse_servers, queue, register_agent
from twistarena.sandbox import SandboxLimits

from . import play_bridged
from .messages import JSON_FORM
from .program import ProgramBot

log = structlog.get_logger("twistarena.bridge")

EXEC_PREFIX = "exec:"
#: ``NAME=`` before an ``exec:`` command: a name has no space, slash or quote.
NAMED = re.compile(r"^([\w.#+-]{1,100})=(.+)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class HostedEntrant:
    """A program entering a tournament as a registered agent."""

    command: str
    agent_id: str
    api_token: str
    name: str


def program_name(command: str) -> str:
    """The default name of a program: the file name of its first argument that is a file,
    else of the command itself."""
    words = shlex.split(command)
    for word in words[1:]:
        if not word.startswith("-") and os.path.isfile(word):
            return Path(word).name
    return Path(words[0]).name if words else "program"


def parse_exec(entrant: str) -> tuple[str, str]:
    """(name, command) of an ``exec:[NAME=]COMMAND`` entrant."""
    text = entrant.removeprefix(EXEC_PREFIX)
    named = NAMED.match(text)
    if named:
        return named.group(1), named.group(2)
    return program_name(text), text


def program_commands(entrants: Sequence[str]) -> list[str]:
    """The commands of the ``exec:`` entrants, in order."""
    return [parse_exec(e)[1] for e in entrants if e.startswith(EXEC_PREFIX)]


async def register_programs(server: str, entrants: Sequence[str], *,
                            admin_token: str | None = None,
                            **tls: Any) -> tuple[list[str], list[HostedEntrant]]:
    """Register an agent for every ``exec:`` entrant; returns the entrant list with their
    agent ids in place, and the hosted entrants. A program that cannot be started is an
    ``AgentError`` before anything is registered."""
    for entrant in entrants:
        if entrant.startswith(EXEC_PREFIX):
            problem = await ProgramBot(parse_exec(entrant)[1]).unusable()
            if problem:
                raise AgentError(f"{entrant}: {problem}")
    hosted: list[HostedEntrant] = []
    out: list[str] = []
    for entrant in entrants:
        if not entrant.startswith(EXEC_PREFIX):
            out.append(entrant)
            continue
        name, command = parse_exec(entrant)
        name = name[:96]  # the server keeps 100 characters, "#N" included
        taken = {h.name for h in hosted}
        unique = name
        for n in range(2, len(hosted) + 2):
            if unique not in taken:
                break
            unique = f"{name}#{n}"
        agent_id, token = await register_agent(server, unique, admin_token=admin_token, **tls)
        hosted.append(HostedEntrant(command, agent_id, token, unique))
        out.append(agent_id)
    return out, hosted


async def play_hosted(entrant: HostedEntrant, *, server: str, tournament_id: str, game: str,
                      players: int, limits: SandboxLimits, sandbox: str,
                      form: str = JSON_FORM,
                      **tls: Any) -> int:
    """Play every match the tournament assigns to ``entrant``; returns how many."""
    played = 0
    while True:
        try:
            assigned = await queue(server, entrant.api_token, game, players,
                                   tournament_only=True, tournament_id=tournament_id, **tls)
        except TournamentEnded:
            log.info("hosted entrant done", entrant=entrant.name, matches=played)
            return played
        bot = ProgramBot(entrant.command, form=form, sandbox=sandbox, limits=limits,
                         name=f"{entrant.name}/{assigned.match_id}")
        servers = [assigned.server_address, *(s for s in parse_servers(server)
                                              if s != assigned.server_address)]
        await play_bridged(bot, server=servers, match_id=assigned.match_id,
                           token=assigned.seat_token, no_events=True, **tls)
        played += 1
