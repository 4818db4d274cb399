"""``twistarena bot``: play one seat of a match with a sample strategy.

The same thing a bot author's program does with the SDK, so a host can fill a
seat (or test a server) without writing any code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from rich.console import Console
from twistarena.bots import STRATEGIES

from ..sdk import AgentError, MatchEvent, MatchResult
from ..sdk.hosting import configure_logging, strategy_agent
from .match import add_server_args, event_text, fail, result_table


def register(sub: Any) -> None:
    parser = sub.add_parser("bot", help="play one seat of a match with a sample bot")
    add_server_args(parser)
    parser.add_argument("--match", required=True, help="match id")
    parser.add_argument("--token", required=True, help="the seat's token from match create")
    parser.add_argument("--strategy", default="random", choices=sorted(STRATEGIES),
                        help="sample bot (default random); ismcts searches only with the "
                             "engine state, so over the network it plays the heuristic")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--events", action="store_true", help="print this seat's events")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    console = Console()
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
        console.print(result_table(result, [f"{args.strategy} (this bot)" if i == seat else ""
                                            for i in range(len(result.scores))],
                                   f"Match {args.match}: seat {seat}"))
    return 0


async def _play(args: argparse.Namespace, console: Console) -> tuple[MatchResult, int]:
    def show(event: MatchEvent) -> None:
        if args.events and not args.json:
            line = event_text(agent.game_id, event.kind, event.data, event.text)
            if line:
                console.print(f"[dim]{event.seq:>4}[/dim] {line}", highlight=False)

    agent = strategy_agent(args.strategy, args.seed, server=args.server, match_id=args.match,
                           token=args.token, root_cert=args.root_cert, tls=args.tls,
                           on_event=show, no_events=not args.events)
    result = await agent.run()
    return result, agent.seat if agent.seat is not None else -1
