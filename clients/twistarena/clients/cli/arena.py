"""``twistarena arena``: arenas, the server's continuous rated play.

``create`` opens one for a game and player count (admin), ``update``
changes its house rungs and rates, ``pause`` and ``resume`` stop and restart
its tables, ``close`` ends its play for good (its leaderboard stays),
``enroll`` puts an agent in it (the agent's api token, or the admin's; it
warns when no table can form), ``list`` shows every arena and ``show`` its
leaderboard (house rungs marked). docs/arenas.md has the rules of the ratings.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from google.protobuf.json_format import MessageToDict
from rich.table import Table
from twistarena.engine import GAME_IDS
from twistarena.v1 import arenas_pb2

from ..sdk.arenas import ArenaLadderClient
from ..terminal import make_console, safe
from . import admintoken
from .command import connect, print_json
from .options import (
    API_TOKEN_ENV,
    add_actions,
    add_admin_token,
    add_api_token,
    add_connection_args,
    add_json,
)


def register(sub: Any) -> None:
    actions = add_actions(sub, "arena", "arenas: continuous rated play and leaderboards",
                          __doc__)
    create = actions.add_parser("create", help="open an arena for a game and player count")
    add_connection_args(create)
    create.add_argument("--game", required=True, choices=GAME_IDS)
    create.add_argument("--players", type=int, required=True)
    create.add_argument("--house", default="",
                        help="comma-separated house rungs that fill short tables "
                             "(e.g. random,heuristic,ismcts-fast)")
    _rate_args(create, "default 60", "default 2")
    add_admin_token(create)
    create.set_defaults(run=run_create)
    listing = actions.add_parser("list", help="every arena")
    add_connection_args(listing)
    add_json(listing, "a list of the arenas")
    listing.set_defaults(run=run_list)
    show = actions.add_parser("show", help="an arena's leaderboard")
    add_connection_args(show)
    show.add_argument("arena_id")
    show.add_argument("--rows", type=int, default=50, help="rows shown (default 50)")
    add_json(show, "the leaderboard")
    show.set_defaults(run=run_show)
    update = actions.add_parser("update", help="change an arena's house rungs or rates")
    add_connection_args(update)
    update.add_argument("arena_id")
    update.add_argument("--house", default=None,
                        help="comma-separated house rungs replacing the arena's ('none': "
                             "no rungs; default: unchanged)")
    _rate_args(update, "default: unchanged", "default: unchanged")
    add_admin_token(update)
    update.set_defaults(run=run_update)
    close = actions.add_parser("close", help="stop an arena's play for good (its "
                                             "leaderboard and history stay readable)")
    add_connection_args(close)
    close.add_argument("arena_id")
    add_admin_token(close)
    close.set_defaults(run=run_close)
    for name, paused in (("pause", True), ("resume", False)):
        p = actions.add_parser(name, help=f"{name} forming tables (running matches finish)")
        add_connection_args(p)
        p.add_argument("arena_id")
        add_admin_token(p)
        p.set_defaults(run=run_pause, paused=paused)
    enroll = actions.add_parser("enroll", help="enroll an agent's hosted version")
    add_connection_args(enroll)
    enroll.add_argument("arena_id")
    enroll.add_argument("agent_id")
    enroll.add_argument("--withdraw", action="store_true", help="take it out instead")
    add_api_token(enroll, f"the agent's api token (default: ${API_TOKEN_ENV}; else the "
                          "admin token)")
    add_admin_token(enroll)
    enroll.set_defaults(run=run_enroll)


def _rate_args(parser: argparse.ArgumentParser, per_minute: str, concurrent: str) -> None:
    """An arena's rates (0: the default, or unchanged)."""
    parser.add_argument("--matches-per-minute", type=int, default=0,
                        help=f"new matches a minute at most ({per_minute})")
    parser.add_argument("--max-concurrent-per-agent", type=int, default=0,
                        help=f"live matches of one agent at once ({concurrent})")


def _client(args: argparse.Namespace, token: str | None = None) -> ArenaLadderClient:
    """The Arenas client; it sends ``token`` (an agent's), else the admin token."""
    return connect(ArenaLadderClient, args,
                   admin_token=token or admintoken.from_args(args))


def _arena_json(arena: arenas_pb2.Arena) -> dict[str, Any]:
    return MessageToDict(arena, preserving_proto_field_name=True,
                         always_print_fields_with_no_presence=True)


def _plural(count: int, word: str, words: str = "") -> str:
    """"1 agent", "2 agents" ("1 rated match", "3 rated matches")."""
    return f"{count} {word if count == 1 else words or word + 's'}"


def _print_arena(arena: arenas_pb2.Arena) -> int:
    status = arenas_pb2.ArenaStatus.Name(arena.status).removeprefix("ARENA_STATUS_").lower()
    make_console().print(
        f"arena [bold]{arena.arena_id}[/bold]: {status}, "
        f"{_plural(arena.enrolled, 'agent')} enrolled, "
        f"{_plural(arena.matches_played, 'rated match', 'rated matches')}, "
        f"house {', '.join(arena.house_bots) or '-'}, {arena.matches_per_minute} matches a "
        f"minute, {arena.max_concurrent_per_agent} at once per agent", highlight=False)
    return 0


def house_list(text: str) -> list[str]:
    """A --house list: comma-separated rungs, 'none' for none."""
    return [] if text.strip() == "none" else [h.strip() for h in text.split(",") if h.strip()]


def run_create(args: argparse.Namespace) -> int:
    return _print_arena(asyncio.run(_client(args).create(
        args.game, args.players, house_list(args.house), args.matches_per_minute,
        args.max_concurrent_per_agent)))


def run_update(args: argparse.Namespace) -> int:
    house = None if args.house is None else house_list(args.house)
    return _print_arena(asyncio.run(_client(args).update(
        args.arena_id, house, args.matches_per_minute, args.max_concurrent_per_agent)))


def run_close(args: argparse.Namespace) -> int:
    return _print_arena(asyncio.run(_client(args).close(args.arena_id)))


def run_pause(args: argparse.Namespace) -> int:
    return _print_arena(asyncio.run(_client(args).set_paused(args.arena_id, args.paused)))


def run_enroll(args: argparse.Namespace) -> int:
    client = _client(args, args.api_token)
    done = asyncio.run(client.enroll(args.arena_id, args.agent_id, args.withdraw))
    what = "enrolled in" if done.enrolled else "withdrawn from"
    make_console().print(f"{args.agent_id} {what} {done.arena.arena_id} "
                         f"({_plural(done.agents, 'agent')} enrolled)", highlight=False)
    if done.enrolled and done.warning:
        make_console().print(f"warning: {done.warning}", highlight=False)
    return 0


def run_list(args: argparse.Namespace) -> int:
    arenas = asyncio.run(_client(args).list())
    if args.json:
        print_json([_arena_json(a) for a in arenas])
        return 0
    table = Table(title="Arenas")
    for column in ("arena", "status", "agents", "rated matches", "house rungs", "per minute",
                   "driven by"):
        table.add_column(column)
    for a in arenas:
        table.add_row(a.arena_id, arenas_pb2.ArenaStatus.Name(a.status)
                      .removeprefix("ARENA_STATUS_").lower(), str(a.enrolled),
                      str(a.matches_played), ", ".join(a.house_bots) or "-",
                      str(a.matches_per_minute), a.driver or "-")
    make_console().print(table)
    return 0


def run_show(args: argparse.Namespace) -> int:
    board = asyncio.run(_client(args).leaderboard(args.arena_id, page_size=args.rows))
    if args.json:
        print_json(MessageToDict(board, preserving_proto_field_name=True))
        return 0
    _print_arena(board.arena)
    table = Table(title=f"Leaderboard of {board.arena.arena_id}")
    for column in ("rank", "agent", "version", "mu-3sigma", "mu", "sigma", "games",
                   "win share"):
        table.add_column(column, justify="right" if column != "agent" else "left")
    for r in board.rows:
        name = f"{safe(r.name)} (house anchor)" if r.house else \
            f"{safe(r.name)} \\[{safe(r.agent_id)}]"
        table.add_row(str(r.rank), name, str(r.version) if r.version else "-",
                      f"{r.conservative:.2f}", f"{r.mu:.2f}", f"{r.sigma:.2f}", str(r.games),
                      f"{r.win_share:.0%}")
    make_console().print(table)
    return 0
