"""``twistarena bot``: play one seat of a match with a sample strategy, or bridge it.

With ``--strategy`` it is the same thing a bot author's program does with the
SDK, so a host can fill a seat (or test a server) without writing any code.
With ``--exec "CMD ARGS"`` any program plays the seat over stdin/stdout (JSON
lines, or ``--text``), with ``--http URL`` any HTTP endpoint (docs/bots.md).
``--sandbox`` runs the program in the sandbox (someone else's program: only its
folder, no network, limits; ``twistarena.clients.sandbox``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from rich.console import Console
from twistarena.bots import STRATEGIES

from ..bridge import TEXT_FORM, Bridged, HttpBot, ProgramBot, bridged_agent, run_bridged
from ..bridge.messages import JSON_FORM
from ..sandbox import MODES, SandboxUnavailable, sandbox_mode
from ..sdk import Agent, AgentError, MatchEvent, MatchResult
from ..sdk.hosting import configure_logging, strategy_agent
from ..terminal import make_console
from .match import add_server_args, event_text, fail, result_table


def register(sub: Any) -> None:
    parser = sub.add_parser("bot", help="play one seat of a match with a sample bot")
    add_server_args(parser)
    parser.add_argument("--match", required=True, help="match id")
    parser.add_argument("--token", required=True, help="the seat's token from match create")
    add_bridge_args(parser, default="random",
                    helptext="sample bot or house ladder rung (default random): random, "
                             "heuristic, ismcts-fast, ismcts, ismcts-strong")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--events", action="store_true", help="print this seat's events")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.set_defaults(run=run)


def add_bridge_args(parser: argparse.ArgumentParser, default: str,
                    helptext: str) -> argparse._MutuallyExclusiveGroup:
    """Who plays the seat: a sample strategy, a program (--exec) or an endpoint (--http).
    Returns the group, for commands that offer one more alternative."""
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--strategy", default=default, choices=sorted(STRATEGIES), help=helptext)
    who.add_argument("--exec", dest="exec_command", metavar='"CMD ARGS"', default=None,
                     help="run this program and play its answers (stdin/stdout, one line "
                          "per message, docs/bots.md); its stderr goes to the log")
    who.add_argument("--http", dest="http_url", metavar="URL", default=None,
                     help="POST each decision to URL/move and play the answer (docs/bots.md)")
    parser.add_argument("--text", action="store_true",
                        help="with --exec: the plain-text messages instead of JSON lines")
    parser.add_argument("--sandbox", nargs="?", const="bwrap", default=None,
                        choices=MODES, metavar="MODE",
                        help="with --exec: run the program in the sandbox (bubblewrap: its "
                             "folder read-only, no network, limits); 'none' runs it bare "
                             "with a warning")
    return who


def sandbox_of(requested: str | None) -> str | None:
    """The sandbox mode a command asked for (None: the host's own program, run bare);
    a host that cannot sandbox is refused with the package to install."""
    if requested is None:
        return None
    try:
        return sandbox_mode(requested)
    except SandboxUnavailable as error:
        raise AgentError(str(error)) from error


def seat_agent(args: argparse.Namespace, **agent_options: Any) -> tuple[Agent, Bridged | None]:
    """The agent that plays a seat as the arguments say, and its bridge if it has one."""
    bridged: Bridged | None = None
    if args.exec_command:
        try:
            bridged = ProgramBot(args.exec_command, form=TEXT_FORM if args.text else JSON_FORM,
                                 sandbox=sandbox_of(args.sandbox))
        except ValueError as error:
            raise AgentError(str(error)) from error
    elif args.http_url:
        bridged = HttpBot(args.http_url)
    if bridged is not None:
        return bridged_agent(bridged, **agent_options), bridged
    return strategy_agent(args.strategy, args.seed, **agent_options), None


async def run_seat(agent: Agent, bridged: Bridged | None) -> MatchResult:
    return await (agent.run() if bridged is None else run_bridged(agent, bridged))


def player_name(args: argparse.Namespace) -> str:
    """How the result table names the bot of this seat."""
    return str(args.exec_command or args.http_url or args.strategy)


def run(args: argparse.Namespace) -> int:
    console = make_console()
    configure_logging(args.verbose)
    try:
        result, seat = asyncio.run(_play(args, console))
    except AgentError as error:
        return fail(console, error)
    if args.json:
        out = result.to_json()
        out["seat"] = seat
        print(json.dumps(out))
    else:
        console.print(result_table(result, [f"{player_name(args)} (this bot)" if i == seat else ""
                                            for i in range(len(result.scores))],
                                   f"Match {args.match}: seat {seat}"))
    return 0


async def _play(args: argparse.Namespace, console: Console) -> tuple[MatchResult, int]:
    def show(event: MatchEvent) -> None:
        if args.events and not args.json:
            line = event_text(agent.game_id, event.kind, event.data, event.text)
            if line:
                console.print(f"[dim]{event.seq:>4}[/dim] {line}", highlight=False)

    agent, bridged = seat_agent(args, server=args.server, match_id=args.match,
                                token=args.token, root_cert=args.root_cert, tls=args.tls,
                                on_event=show, no_events=not args.events)
    result = await run_seat(agent, bridged)
    return result, agent.seat if agent.seat is not None else -1
