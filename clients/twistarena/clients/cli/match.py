"""``twistarena match create|get|list|cancel``: the match lifecycle from a terminal.

``match create --bots random,heuristic,...`` also fills every seat with a
sample bot playing over the network, which is the quickest end-to-end check
of a server. The helpers at the top are shared by the other network commands.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

import grpc.aio
from rich.console import Console
from rich.table import Table
from twistarena import engine, wire
from twistarena.bots import STRATEGIES
from twistarena.v1 import match_pb2

from ..sdk import AgentError, MatchClient, MatchEvent, MatchResult
from ..sdk.convert import REASONS, STATUSES, seed_text, struct_to_dict
from ..sdk.localbots import run_agents, seat_agents
from ..terminal import make_console, safe
from .command import CommandError, connect, print_json
from .options import add_actions, add_admin_token, add_cancel, add_connection_args, add_json

# -- helpers shared by bot, watch, replay and demo ------------------------------


def client_from(args: argparse.Namespace) -> MatchClient:
    """The Match client of a command's flags (with the admin token)."""
    return connect(MatchClient, args)


def event_text(game_id: str, kind: str, data: Mapping[str, Any], text: str) -> str | None:
    """The server's line for an event, or the engine's narration of its data, ready
    for a console (it may quote what a client wrote: ``safe``)."""
    if text:
        return safe(text, lines=True)
    try:
        line = engine.game(game_id).narrate({"kind": kind, **data})
    except Exception:  # narration is a nicety; never fail a command over it
        line = None
    return safe(line, lines=True) if line is not None else None


#: The result tables' column of each seat's missed decisions.
MISSED = "missed (fallback played)"


def result_table(result: MatchResult, names: Sequence[str], title: str, *,
                 missed: Sequence[int] | None) -> Table:
    """Scores and places by seat, with the decisions each seat missed (the match's
    fallback played them; None: the server's record could not be read). Every
    command's result table, the offline demo's too."""
    table = Table(title=title)
    for column in ("seat", "player", "score", "place", MISSED):
        table.add_column(column, justify="left" if column == "player" else "right")
    for seat, score in enumerate(result.scores):
        place = result.places[seat] if seat < len(result.places) else 0
        mark = " (winner)" if seat in result.winners else ""
        name = names[seat] if seat < len(names) else ""
        misses = str(missed[seat]) if missed is not None and seat < len(missed) else "?"
        table.add_row(str(seat), safe(name), str(score), f"{place}{mark}", misses)
    if result.reason != "COMPLETED" or result.detail:
        table.caption = safe(f"{result.reason}{': ' + result.detail if result.detail else ''}")
    return table


def seat_names(match: match_pb2.Match) -> list[str]:
    """Who plays each seat: its name, else its house bot, else 'seat N'."""
    names = []
    for i in range(match.options.num_players):
        seat = next((s for s in match.seats if s.seat == i), None)
        label = ""
        if seat is not None:
            label = seat.name or (f"house {seat.house_bot}" if seat.house_bot else "")
        names.append(label or f"seat {i}")
    return names


def missed_by_seat(match: match_pb2.Match) -> list[int]:
    """The decisions each seat missed so far (the fallback played them): the server's
    count, ``SeatInfo.timeouts``."""
    misses = {s.seat: s.timeouts for s in match.seats}
    return [misses.get(i, 0) for i in range(match.options.num_players)]


async def final_record(client: MatchClient, match_id: str) -> match_pb2.Match | None:
    """The server's record of a match that just ended (None if it cannot be read)."""
    try:
        return await client.get_match(match_id)
    except (AgentError, grpc.aio.AioRpcError):
        return None


def match_json(match: match_pb2.Match) -> dict[str, Any]:
    tc = match.options.time_control
    out: dict[str, Any] = {
        "match_id": match.match_id,
        "game_id": match.options.game_id,
        "num_players": match.options.num_players,
        # null while the server keeps it secret (0 on the wire; see seed_text).
        "seed": match.seed if match.seed or match.status in wire.MATCH_OVER else None,
        "status": STATUSES.get(match.status, str(match.status)),
        "actions": match.actions,
        # The options in force: the game's defaults with the match's overrides.
        "game_options": options_in_force(match),
        "time_control": {
            "decision_ms": tc.decision_ms,
            "fallback": match_pb2.Fallback.Name(tc.fallback).removeprefix("FALLBACK_"),
            "forfeit_after": tc.forfeit_after,
            "reconnect_grace_ms": tc.reconnect_grace_ms,
            "join_timeout_ms": tc.join_timeout_ms,
        },
        "seats": [{"seat": s.seat, "name": s.name, "house_bot": s.house_bot,
                   "connected": s.connected, "timeouts": s.timeouts} for s in match.seats],
    }
    if match.status in wire.MATCH_OVER:
        out["result"] = MatchResult.from_proto(match.result).to_json()
    return out


def options_in_force(match: match_pb2.Match) -> dict[str, Any]:
    """The game's option table as the match plays it (defaults, then its overrides)."""
    game_id = match.options.game_id
    defaults = dict(engine.game(game_id).defaults) if game_id in engine.GAME_IDS else {}
    return {**defaults, **struct_to_dict(match.options.game_options)}


def parse_house(text: str) -> tuple[int, str]:
    """``SEAT:STRATEGY`` (e.g. ``2:heuristic``)."""
    seat, sep, strategy = text.partition(":")
    if not sep or not seat.strip().isdigit() or not strategy.strip():
        raise argparse.ArgumentTypeError(f"expected SEAT:STRATEGY, got {text!r}")
    return int(seat), strategy.strip()


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value``; the value is read as JSON when it parses (3, true, [1,2]), else text."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


# -- the subcommand ---------------------------------------------------------------


def register(sub: Any) -> None:
    actions = add_actions(sub, "match", "create, inspect, list and cancel matches")

    create = actions.add_parser("create", help="create a match (and optionally play it)")
    add_connection_args(create)
    create.add_argument("--game", required=True, choices=engine.GAME_IDS)
    create.add_argument("--players", type=int, required=True)
    create.add_argument("--bots", default="",
                        help="comma-separated sample bots or house ladder rungs ("
                             f"{', '.join(STRATEGIES)}), one per seat, "
                             "cycled: play every remote seat in this process")
    create.add_argument("--house", type=parse_house, action="append", default=[],
                        metavar="SEAT:STRATEGY",
                        help="the server plays this seat with a house bot, e.g. 1:heuristic "
                             "(repeatable); the other seats are remote: tokens, or --bots")
    create.add_argument("--fallback", choices=("random", "forfeit"), default="",
                        help="when a seat misses a decision: a random legal action (the "
                             "server default), or that and forfeit after --forfeit-after misses")
    create.add_argument("--forfeit-after", type=int, default=0,
                        help="with --fallback forfeit: missed decisions that forfeit a seat "
                             "(0: server default, 3)")
    create.add_argument("--reconnect-grace-ms", type=int, default=0,
                        help="how long a dropped seat is held for its agent (0: server "
                             "default, 30000)")
    create.add_argument("--seed", type=int, default=None)
    create.add_argument("--decision-ms", type=int, default=0,
                        help="time per decision (0: server default)")
    create.add_argument("--join-timeout-ms", type=int, default=0,
                        help="abandon the match if its seats have not all joined this long "
                             "after creation (0: the server's --waiting-timeout)")
    create.add_argument("--option", type=parse_option, action="append", default=[],
                        metavar="KEY=VALUE", help="game option override (repeatable)")
    create.add_argument("--name", action="append", default=[], help="seat name (repeatable)")
    add_admin_token(create)
    create.add_argument("--quiet", action="store_true", help="with --bots: no narration")
    add_json(create, "one object: the match (and its seat tokens, or its result)")
    create.set_defaults(run=run_create)

    get = actions.add_parser("get", help="show one match")
    add_connection_args(get)
    get.add_argument("match_id")
    add_json(get, "one object")
    get.set_defaults(run=run_get)

    lst = actions.add_parser("list", help="list matches, newest first")
    add_connection_args(lst)
    lst.add_argument("--game", default="", choices=["", *engine.GAME_IDS])
    lst.add_argument("--status", action="append", default=[],
                     choices=["waiting", "running", "finished", "cancelled"])
    lst.add_argument("--limit", type=int, default=50)
    add_json(lst, "one object")
    lst.set_defaults(run=run_list)

    cancel = add_cancel(actions, "match", "end a match that has not finished")
    add_json(cancel, "one object")
    cancel.set_defaults(run=run_cancel)


def run_create(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json)
    strategies = [s.strip() for s in args.bots.split(",") if s.strip()]
    try:
        return asyncio.run(_create(args, console, strategies))
    except ValueError as error:  # --house, --bots and the game's options, checked
        raise CommandError(str(error)) from error


async def _create(args: argparse.Namespace, console: Console, strategies: list[str]) -> int:
    client = client_from(args)
    house = dict(args.house)
    if any(not 0 <= seat < args.players for seat in house):
        raise ValueError(f"--house seats are 0..{args.players - 1}")
    house_bots = [house.get(i, "") for i in range(args.players)] if house else []
    names = list(args.name) or ([house.get(i) or strategies[i % len(strategies)]
                                 for i in range(args.players)] if strategies else [])
    created = await client.create_match(
        args.game, args.players, seed=args.seed, decision_ms=args.decision_ms,
        join_timeout_ms=args.join_timeout_ms, fallback=args.fallback,
        forfeit_after=args.forfeit_after, reconnect_grace_ms=args.reconnect_grace_ms,
        game_options=dict(args.option), seat_names=names, house_bots=house_bots)
    match = created.match
    if strategies and not created.seat_tokens:
        raise ValueError("--bots has no seat to play: every seat is a house bot")
    if not strategies:
        if args.json:
            out = match_json(match)
            out["seat_tokens"] = [{"seat": t.seat, "token": t.token} for t in created.seat_tokens]
            print_json(out)
            return 0
        console.print(f"match [bold]{match.match_id}[/bold]: {match.options.game_id}, "
                      f"{match.options.num_players} players, {seed_text(match)}", highlight=False)
        table = Table(title="Seat tokens (secret: whoever holds one plays the seat)")
        table.add_column("seat", justify="right")
        table.add_column("token")
        table.add_column("play it with")
        for t in sorted(created.seat_tokens, key=lambda t: t.seat):
            table.add_row(str(t.seat), t.token,
                          f"twistarena bot --server {args.server} --match {match.match_id} "
                          f"--token {t.token} --strategy random")
        console.print(table)
        return 0

    game_id = match.options.game_id

    narrator = min(t.seat for t in created.seat_tokens)

    def narrate(seat: int, event: MatchEvent) -> None:
        if seat != narrator or args.quiet or args.json:
            return
        line = event_text(game_id, event.kind, event.data, event.text)
        if line:
            console.print(f"[dim]{event.seq:>4}[/dim] {line}", highlight=False)

    if not args.json:
        console.rule(f"{engine.game(game_id).name}: match {match.match_id}, "
                     f"{args.players} players, {seed_text(match)}")
    agents = seat_agents(args.server, created, strategies, seed=args.seed, on_event=narrate,
                         root_cert=client.root_cert, tls=args.tls)
    result = await run_agents(agents)
    record = await final_record(client, match.match_id)
    if args.json:
        # The server's record of the finished match (actions, timeouts, status);
        # the agents' own view of the result if it cannot be read.
        out = match_json(record) if record is not None else {
            **match_json(match), "status": "FINISHED", "actions": None}
        out["result"] = result.to_json()
        out["bots"] = names or seat_names(match)
        print_json(out)
        return 0
    console.print(result_table(result, names or seat_names(match),
                               f"Final result of {match.match_id}",
                               missed=missed_by_seat(record) if record is not None else None))
    return 0


def run_get(args: argparse.Namespace) -> int:
    print_match(asyncio.run(client_from(args).get_match(args.match_id)), args.json)
    return 0


def print_match(match: match_pb2.Match, as_json: bool) -> None:
    """A match as ``match get`` and ``match cancel`` show it."""
    if as_json:
        print_json(match_json(match))
        return
    console = make_console()
    status = STATUSES.get(match.status, str(match.status))
    console.print(f"match [bold]{match.match_id}[/bold]: {match.options.game_id}, "
                  f"{match.options.num_players} players, {seed_text(match)}, {status}, "
                  f"{match.actions} actions", highlight=False)
    table = Table(title="Seats")
    for column in ("seat", "name", "house bot", "connected", "timeouts"):
        table.add_column(column)
    for s in match.seats:
        table.add_row(str(s.seat), safe(s.name), safe(s.house_bot), "yes" if s.connected else "no",
                      str(s.timeouts))
    console.print(table)
    if match.status in wire.MATCH_OVER:
        console.print(result_table(MatchResult.from_proto(match.result), seat_names(match),
                                   "Result", missed=missed_by_seat(match)))


def run_list(args: argparse.Namespace) -> int:
    matches = asyncio.run(client_from(args).list_matches(args.game, args.status, args.limit))
    if args.json:
        print_json({"matches": [match_json(m) for m in matches]})
        return 0
    table = Table(title=f"Matches ({len(matches)})")
    for column in ("match", "game", "players", "status", "actions", "result"):
        table.add_column(column)
    for m in matches:
        result = ""
        if m.status == match_pb2.MATCH_STATUS_FINISHED:
            result = "scores " + " ".join(str(s) for s in m.result.scores)
        elif m.status == match_pb2.MATCH_STATUS_CANCELLED:
            result = REASONS.get(m.result.reason, "")
        table.add_row(m.match_id, m.options.game_id, str(m.options.num_players),
                      STATUSES.get(m.status, str(m.status)), str(m.actions), result)
    make_console().print(table)
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    print_match(asyncio.run(client_from(args).cancel_match(args.match_id, args.reason)),
                args.json)
    return 0
