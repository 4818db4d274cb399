"""``twistarena bot``: play one seat of a match with a sample strategy, or bridge it.

With ``--strategy`` it is the same thing a bot author's program does with the
SDK, so a host can fill a seat (or test a server) without writing any code.
With ``--exec "CMD ARGS"`` any program plays the seat over stdin/stdout (JSON
lines, or ``--text``), with ``--http URL`` any HTTP endpoint (docs/bots.md).
``--sandbox`` runs the program in the sandbox (someone else's program: only its
folder, no network, limits; ``twistarena.sandbox``).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from rich.console import Console
from rich.markup import escape
from twistarena.bots import STRATEGIES
from twistarena.bridge import TEXT_FORM, Bridged, HttpBot, ProgramBot, bridged_agent, run_bridged
from twistarena.bridge.messages import JSON_FORM
from twistarena.sandbox import MODES, SandboxUnavailable, sandbox_mode
from twistarena.v1 import match_pb2

from ..sdk import Agent, AgentError, MatchEvent, MatchResult
from ..sdk.localbots import configure_logging, strategy_agent
from ..sdk.policies import load_policy, policy_agent
from ..terminal import make_console
from .command import FAILED, CommandError, print_json
from .match import client_from, event_text, final_record, missed_by_seat, result_table, seat_names
from .options import add_connection_args, add_json


def register(sub: Any) -> None:
    parser = sub.add_parser("bot", help="play one seat of a match with a sample bot")
    add_connection_args(parser)
    parser.add_argument("--match", required=True, help="match id")
    parser.add_argument("--token", required=True, help="the seat's token from match create")
    who = add_bridge_args(parser, default="random",
                          helptext="sample bot or house ladder rung (default random): random, "
                                   "heuristic, ismcts-fast, ismcts, ismcts-strong")
    who.add_argument("--policy", default=None, metavar="MODULE:CALLABLE",
                     help="a trained policy (tensor, mask) -> index, e.g. "
                          "examples/twisted_reinforce.py:policy (docs/rl.md; needs the rl extra)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--events", action="store_true", help="print this seat's events")
    add_json(parser, "the result, one line")
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


async def checked_bridge(args: argparse.Namespace) -> Bridged | None:
    """The program or endpoint that plays the seat (None: a sample strategy), once it is
    known able to play: a command that cannot start or an endpoint that does not answer
    is an error at once, before any match (a broken bot must not look like a success)."""
    bridged: Bridged | None = None
    if args.exec_command:
        try:
            bridged = ProgramBot(args.exec_command, form=TEXT_FORM if args.text else JSON_FORM,
                                 sandbox=sandbox_of(args.sandbox))
        except ValueError as error:
            raise AgentError(str(error)) from error
    elif args.http_url:
        bridged = HttpBot(args.http_url)
    problem = await bridged.unusable() if bridged is not None else ""
    if problem:
        raise AgentError(problem)
    return bridged


def seat_agent(args: argparse.Namespace, bridged: Bridged | None,
               **agent_options: Any) -> Agent:
    """The agent that plays a seat: with ``bridged``, or the sample strategy."""
    if bridged is not None:
        return bridged_agent(bridged, **agent_options)
    if getattr(args, "policy", None):
        return policy_agent(getattr(args, "loaded_policy", None) or load_policy(args.policy),
                            **agent_options)
    return strategy_agent(args.strategy, args.seed, **agent_options)


async def run_seat(agent: Agent, bridged: Bridged | None) -> MatchResult:
    """Play the seat to the end; the outcome the store keeps (a result heard in
    MatchOver may be voided later, see ``Agent.stored_result``), else the heard one."""
    heard = await (agent.run() if bridged is None else run_bridged(agent, bridged))
    return await agent.stored_result() or heard


def seat_report(console: Console, result: MatchResult, record: match_pb2.Match | None,
                seat: int, mine: str, title: str, bridged: Bridged | None) -> int:
    """The result table (every seat by name, with its missed decisions) and the exit
    code: 1 when a bridged bot answered none of its decisions."""
    names = seat_names(record) if record is not None else [""] * len(result.scores)
    names[seat] = mine
    console.print(result_table(result, names, title,
                               missed=missed_by_seat(record) if record is not None else None))
    return FAILED if never_played(console, bridged) else 0


def never_played(console: Console, bridged: Bridged | None) -> bool:
    """Say so when a bridged bot failed every decision it was asked."""
    if bridged is None or not bridged.answered_nothing():
        return False
    console.print("[red]error:[/red] the bot answered none of its decisions: the match's "
                  "fallback played them all (the log says why)", highlight=False)
    return True


def player_name(args: argparse.Namespace) -> str:
    """How the result table names the bot of this seat."""
    return str(args.exec_command or args.http_url or getattr(args, "policy", None)
               or args.strategy)


def run(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json)
    configure_logging(args.verbose)
    if getattr(args, "policy", None):
        try:  # a policy that cannot load is an error before the seat is joined
            args.loaded_policy = load_policy(args.policy)
        except Exception as error:
            raise CommandError(f"cannot load the policy {args.policy}: {error}") from error
    result, agent, record, bridged = asyncio.run(_play(args, console))
    seat = agent.seat if agent.seat is not None else -1
    if args.json:
        out = result.to_json()
        out["seat"] = seat
        out["bot_errors"] = agent.bot.errors
        if record is not None:
            out["missed"] = missed_by_seat(record)
        print_json(out)
        return FAILED if never_played(console, bridged) or raised(console, agent) else 0
    code = seat_report(console, result, record, seat, f"{player_name(args)} (this bot)",
                       f"Match {args.match}: seat {seat}", bridged)
    return FAILED if raised(console, agent) else code


def raised(console: Console, agent: Agent) -> bool:
    """Say so when the bot raised on any decision (the first legal action was played
    for it, which a result table alone would pass off as the bot's own play)."""
    if not agent.bot.errors:
        return False
    console.print(f"[red]error:[/red] the bot raised on {agent.bot.errors} of its decisions"
                  f" (first: {escape(agent.bot.first_error or '')}); the first legal action was"
                  " played instead", highlight=False)
    return True


async def _play(args: argparse.Namespace, console: Console
                ) -> tuple[MatchResult, Agent, match_pb2.Match | None, Bridged | None]:
    def show(event: MatchEvent) -> None:
        if args.events and not args.json:
            line = event_text(agent.game_id, event.kind, event.data, event.text)
            if line:
                console.print(f"[dim]{event.seq:>4}[/dim] {line}", highlight=False)

    bridged = await checked_bridge(args)
    agent = seat_agent(args, bridged, server=args.server, match_id=args.match,
                       token=args.token, root_cert=args.root_cert, tls=args.tls,
                       on_event=show, no_events=not args.events)
    result = await run_seat(agent, bridged)
    record = await final_record(client_from(args), args.match)
    return result, agent, record, bridged
