"""``twistarena queue``: play what matchmaking assigns, as a registered agent.

Waits in the server's queue for ``--game``/``--players`` with the agent's api
token, plays the assigned seat with a sample strategy, a program (``--exec``)
or an HTTP endpoint (``--http``, docs/bots.md), and repeats ``--matches``
times. ``--tournament ID`` plays that tournament's matches for the agent until
the tournament is over. ``--arena ID`` plays rated arena matches: it enrolls
the agent if it is not, holds the arena's queue and plays each table it is
given, ``--matches`` of them (default: until interrupted), printing each
result with the agent's arena rating after it (docs/arenas.md). Matchmaking
without ``--arena`` is unrated. With ``--hosted`` the arena's runners play
each seat with the agent's active version (docs/runners.md): this command
only queues, and prints each match it was given.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from rich.console import Console
from twistarena.engine import GAME_IDS

from ..sdk import TournamentEnded, join_arena, parse_servers, queue
from ..sdk.arenas import arena_rating_json
from ..sdk.localbots import configure_logging
from ..sdk.matchmaking import rating_after
from ..terminal import make_console, safe
from .bot import add_bridge_args, checked_bridge, player_name, run_seat, seat_agent
from .command import CommandError, print_json, tls_of
from .options import add_api_token, add_connection_args, add_json, add_players


def register(sub: Any) -> None:
    parser = sub.add_parser("queue", help="play the matches matchmaking assigns to an agent",
                            description=__doc__)
    add_connection_args(parser)
    add_api_token(parser)
    parser.add_argument("--game", choices=GAME_IDS,
                        help="the queue's game (required without --arena)")
    add_players(parser)
    who = add_bridge_args(parser, default="heuristic",
                          helptext="sample strategy that plays the seats (default heuristic)")
    who.add_argument("--hosted", action="store_true",
                     help="the runners play the seats with the agent's active version")
    parser.add_argument("--seed", type=int, default=None, help="seed of a sample strategy")
    parser.add_argument("--matches", type=int, default=None,
                        help="matches to play (default 1; with --arena: until interrupted)")
    parser.add_argument("--house-fill-after", type=float, default=None, metavar="SECONDS",
                        help="house bots fill the empty seats after this long "
                             "(default: the server's)")
    parser.add_argument("--tournament", default="", metavar="ID",
                        help="play this tournament's matches until it is over")
    parser.add_argument("--arena", default="", metavar="ID",
                        help="play this arena's rated matches (enrolls the agent if need be)")
    add_json(parser, "one line per match")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    configure_logging(args.verbose)
    if not args.api_token:
        raise CommandError("an api token is needed: --api-token or $TWISTARENA_API_TOKEN "
                           "(from RegisterAgent)")
    if args.arena and (args.hosted or args.tournament or args.game):
        raise CommandError("--arena names the game itself; hosted agents are seated by the "
                           "arena (arena enroll), not by queue")
    if not args.arena and not args.game:
        raise CommandError("--game is needed (or --arena ID for an arena's rated matches)")
    try:
        return asyncio.run(_run(args, make_console(stderr=args.json)))
    except KeyboardInterrupt:  # the end of a run with no --matches
        return 0


async def _run(args: argparse.Namespace, console: Console) -> int:
    from twistarena import engine

    tls = tls_of(args)
    agent_id = ""
    if args.arena:
        agent_id, arena, warning = await join_arena(args.server, args.api_token, args.arena,
                                                    **tls)
        game, players, matches = arena.game_id, arena.num_players, args.matches or 0
        console.print(f"agent {agent_id} enrolled in {arena.arena_id}; waiting for tables"
                      + (f" ({warning})" if warning else ""), highlight=False)
    else:
        game, matches = args.game, args.matches if args.matches is not None else 1
        players = args.players or engine.game(game).min_players
    played = 0
    while args.tournament or not matches or played < matches:
        bridged = await checked_bridge(args)  # a fresh program for every match
        try:
            assigned = await queue(args.server, args.api_token, game, players,
                                   house_fill_after=args.house_fill_after,
                                   tournament_only=bool(args.tournament or args.arena),
                                   tournament_id=args.tournament, hosted=args.hosted, **tls)
        except TournamentEnded as ended:
            console.print(safe(str(ended)), highlight=False)
            break
        if args.hosted:
            played += 1
            if args.json:
                print_json({"match_id": assigned.match_id, "seat": assigned.seat,
                            "tournament_id": assigned.tournament_id, "hosted": True})
            else:
                console.print(f"match {assigned.match_id}: the runners play seat "
                              f"{assigned.seat} with the agent's active version",
                              highlight=False)
            continue
        servers = [assigned.server_address, *(s for s in parse_servers(args.server)
                                              if s != assigned.server_address)]
        agent = seat_agent(args, bridged, server=servers, match_id=assigned.match_id,
                           token=assigned.seat_token, no_events=True, **tls)
        result = await run_seat(agent, bridged)
        played += 1
        rating = (await rating_after(args.server, agent_id, args.arena, assigned.match_id,
                                     **tls) if args.arena else None)
        if args.json:
            print_json({"match_id": assigned.match_id, "seat": assigned.seat,
                        "tournament_id": assigned.tournament_id, **result.to_json(),
                        **({"arena_id": args.arena, "rating": None if rating is None
                            else arena_rating_json(rating)} if args.arena else {})})
        else:
            console.print(f"match {assigned.match_id}: {player_name(args)} played seat "
                          f"{assigned.seat}; scores {list(result.scores)}, places "
                          f"{list(result.places)}" + (_rating_words(rating) if args.arena
                                                      else ""), highlight=False)
    return 0


def _rating_words(rating: Any) -> str:
    """"; rating mu .. sigma .. (mu-3sigma ..) after N games" once the match is rated."""
    if rating is None:
        return "; not rated yet"
    return (f"; rating mu {rating.mu:.2f} sigma {rating.sigma:.2f} "
            f"(mu-3sigma {rating.mu - 3 * rating.sigma:.2f}) after {rating.games} games")
