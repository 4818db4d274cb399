"""``twistarena practice``: a match against house bots, in one command.

The server creates the match at once (house bots of ``--strength`` in the
other seats) and returns one seat's token; this command then plays that seat
with a sample strategy, a program (``--exec``) or an HTTP endpoint
(``--http``, see docs/bots.md), or, with ``--node``, prints the match id, the token
and the exact command that plays it with the Node.js sample agent. With
``--hosted`` the arena's runners play the seat with the active version of the
api token's agent (docs/runners.md), and this command waits for the result.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
from pathlib import Path
from typing import Any

from rich.console import Console
from twistarena.bots import LADDER
from twistarena.engine import GAME_IDS
from twistarena.wire import MATCH_OVER

from ..sdk import MatchClient, MatchResult, practice
from ..sdk.localbots import configure_logging
from ..terminal import make_console
from .bot import (
    add_bridge_args,
    checked_bridge,
    never_played,
    player_name,
    run_seat,
    seat_agent,
    seat_report,
)
from .command import FAILED, print_json, tls_of
from .match import final_record, missed_by_seat, result_table
from .options import add_api_token, add_connection_args, add_json, add_players

NODE_AGENT = Path("clients") / "node" / "agent.js"
#: How often a hosted practice match is looked at until it is over.
HOSTED_POLL_S = 0.5


def register(sub: Any) -> None:
    parser = sub.add_parser("practice", help="play a practice match against house bots",
                            description=__doc__)
    add_connection_args(parser)
    parser.add_argument("--game", required=True, choices=GAME_IDS)
    add_players(parser)
    parser.add_argument("--strength", default="heuristic", choices=LADDER,
                        help="house bots of the other seats, a rung of the house ladder "
                             "(default heuristic; docs/bots.md has their ratings)")
    who = add_bridge_args(parser, default="heuristic",
                          helptext="sample strategy that plays your seat (default heuristic)")
    who.add_argument("--node", action="store_true",
                     help="do not play: print the command for clients/node/agent.js")
    who.add_argument("--hosted", action="store_true",
                     help="the runners play the seat with your agent's active version "
                          "(needs --api-token); wait for the result")
    parser.add_argument("--seed", type=int, default=None, help="seed of the match")
    parser.add_argument("--decision-ms", type=int, default=0,
                        help="time per decision (default: the server's)")
    add_api_token(parser, "api token (needed from another machine; "
                          "default: $TWISTARENA_API_TOKEN)")
    add_json(parser, "one line at the end")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.verbose)
    return asyncio.run(_run(args, make_console(stderr=args.json)))


async def _run(args: argparse.Namespace, console: Console) -> int:
    bridged = await checked_bridge(args)
    created = await practice(args.server, args.game, args.players, strength=args.strength,
                             seed=args.seed, api_token=args.api_token,
                             decision_ms=args.decision_ms, hosted=args.hosted,
                             **tls_of(args))
    match = created.match
    address = created.server_address or args.server
    players = match.options.num_players
    if args.hosted:
        return await _follow_hosted(args, console, match.match_id, created.seat, players)
    if args.node:
        command = ["node", str(NODE_AGENT), "--server", address, "--match", match.match_id,
                   "--token", created.seat_token]
        if args.json:
            print_json({"match_id": match.match_id, "seat": created.seat,
                        "token": created.seat_token, "server": address,
                        "command": shlex.join(command)})
        else:
            console.print(f"practice match [bold]{match.match_id}[/bold]: {args.game}, "
                          f"{players} players, you are seat {created.seat}; house bots: "
                          f"{args.strength}", highlight=False)
            console.print(f"seat token: {created.seat_token}", highlight=False)
            console.print("play it with:", highlight=False)
            print(shlex.join(command))
        return 0
    if not args.json:
        console.print(f"practice match {match.match_id}: {args.game}, {players} players; "
                      f"{player_name(args)} plays seat {created.seat} against {args.strength} "
                      "house bots", highlight=False)
    agent = seat_agent(args, bridged, server=address, match_id=match.match_id,
                       token=created.seat_token, no_events=True, **tls_of(args))
    result: MatchResult = await run_seat(agent, bridged)
    record = await final_record(MatchClient(address, **tls_of(args)), match.match_id)
    if args.json:
        out = result.to_json()
        out.update({"match_id": match.match_id, "seat": created.seat})
        if record is not None:
            out["missed"] = missed_by_seat(record)
        print_json(out)
        return FAILED if never_played(console, bridged) else 0
    return seat_report(console, result, record, created.seat, f"{player_name(args)} (you)",
                       f"Practice {match.match_id}", bridged)


async def _follow_hosted(args: argparse.Namespace, console: Console, match_id: str, seat: int,
                         players: int) -> int:
    """Wait for the end of a practice match that a runner plays; print its result."""
    client = MatchClient(args.server, **tls_of(args))
    if not args.json:
        console.print(f"practice match {match_id}: {args.game}, {players} players; your "
                      f"hosted agent plays seat {seat} against {args.strength} house bots "
                      "(watch it: twistarena watch)", highlight=False)
    with console.status("waiting for the end of the match..."):
        while True:
            match = await client.get_match(match_id)
            if match.status in MATCH_OVER:
                break
            await asyncio.sleep(HOSTED_POLL_S)
    result = MatchResult.from_proto(match.result)
    if args.json:
        out = result.to_json()
        out.update({"match_id": match_id, "seat": seat})
        print_json(out)
    else:
        names = ["your hosted agent" if s == seat else f"house {args.strength}"
                 for s in range(players)]
        console.print(result_table(result, names, f"Practice {match_id}",
                                   missed=missed_by_seat(match)))
    return 0
