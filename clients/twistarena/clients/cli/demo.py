"""``twistarena demo``: sample bots play every game over real gRPC, with live progress.

By default a real server starts in this process on a free loopback port with
its embedded Valkey, and one match of each game is played by SDK agents over
the network: the whole system, end to end, with one command. ``--offline``
plays one game straight on the engine instead, narrated event by event.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from twistarena import engine

from ..local import play_local
from ..sdk import MatchClient, MatchEvent, MatchResult
from ..sdk.localbots import configure_logging, run_agents, seat_agents
from ..terminal import make_console
from . import admintoken
from .match import event_text, final_record, missed_by_seat, result_table
from .web import DEFAULT_WEB_PORT

#: Seats per game in the network demo (within each game's range).
DEMO_PLAYERS = {"tricky_twist": 4, "twisted": 3, "twhist": 4}


def register(sub: Any) -> None:
    parser = sub.add_parser("demo", help="sample bots play every game over gRPC (or --offline)")
    parser.add_argument("--offline", action="store_true",
                        help="play in-process on the engine, without a server")
    parser.add_argument("--game", choices=engine.GAME_IDS, action="append", default=None,
                        help="only this game (repeatable; default: every game, "
                             "tricky_twist with --offline)")
    parser.add_argument("--players", type=int, default=None,
                        help="seats per match (default: 4, 3 for twisted)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--bots", default="heuristic,random,heuristic,random",
                        help="comma-separated strategies, one per seat (cycled)")
    parser.add_argument("--server", default=None,
                        help="play on this server (HOST:PORT) instead of starting one")
    parser.add_argument("--narrate", action="store_true",
                        help="print every event of the network games as it happens")
    parser.add_argument("--web", action="store_true",
                        help="also serve the web face, print its URL and keep the server "
                             "and the site up after the games until Ctrl-C")
    parser.add_argument("--web-port", type=int, default=DEFAULT_WEB_PORT,
                        help=f"port of the web face with --web (default {DEFAULT_WEB_PORT}; "
                             "0: a free one)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show server logs")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    strategies = [s.strip() for s in args.bots.split(",") if s.strip()]
    if args.offline:
        return run_offline(args, strategies)
    console = make_console()
    configure_logging(args.verbose)
    return asyncio.run(run_network(args, strategies, console))


def run_offline(args: argparse.Namespace, strategies: list[str]) -> int:
    console = make_console()
    game_id = (args.game or ["tricky_twist"])[0]
    players = args.players or 4
    names = [strategies[i % len(strategies)] for i in range(players)]
    console.rule(f"{engine.game(game_id).name}: {players} players, seed {args.seed}")
    state = play_local(game_id, players, args.seed, names,
                       on_event=lambda line: console.print(line, highlight=False))
    # Played on the engine alone: no clock, so no seat misses a decision.
    console.print(result_table(MatchResult.of_engine(state.scores(), state.places()), names,
                               "Final result", missed=[0] * players))
    winners = ", ".join(f"seat {s} ({names[s]})" for s in state.winners())
    console.print(f"Winner: {winners}")
    return 0


async def run_network(args: argparse.Namespace, strategies: Sequence[str],
                      console: Console) -> int:
    games = args.game or list(engine.GAME_IDS)
    async with contextlib.AsyncExitStack() as stack:
        if args.server:
            address = args.server
            admin = admintoken.admin_token(None, address)
        else:
            from .servers import local_server

            admin = admintoken.server_token(None)
            address = await stack.enter_async_context(local_server(console, admin))
        if args.web:
            from .servers import running_web

            url = await stack.enter_async_context(running_web(address, port=args.web_port))
            console.print(f"web face on [bold]{url}[/bold]: watch the matches there",
                          highlight=False)
        client = MatchClient(address, admin_token=admin)
        summary = Table(title="Demo summary: one match per game over gRPC")
        for column in ("game", "seats", "match", "actions", "secs", "actions/s", "winner"):
            summary.add_column(column, no_wrap=True,
                               justify="left" if column in ("game", "match", "winner")
                               else "right")
        for i, game_id in enumerate(games):
            info = engine.game(game_id)
            players = args.players or DEMO_PLAYERS.get(game_id, info.min_players)
            players = max(info.min_players, min(info.max_players, players))
            names = [strategies[s % len(strategies)] for s in range(players)]
            result, match_id, actions, seconds = await play_one(
                client, address, game_id, players, args.seed + i, names, args.narrate, console)
            record = await final_record(client, match_id)
            console.print(result_table(
                result, names, f"{info.name}: final result",
                missed=missed_by_seat(record) if record is not None else None))
            winners = ", ".join(f"{s} ({names[s]})" for s in result.winners)
            summary.add_row(info.name, str(players), match_id[:8], str(actions), f"{seconds:.2f}",
                            f"{actions / seconds:,.0f}" if seconds else "-", winners)
        console.print(summary)
        if args.web:
            console.print(f"the server and {url} stay up; Ctrl-C stops them", highlight=False)
            await wait_for_interrupt()
    return 0


async def wait_for_interrupt() -> None:
    """Until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


async def play_one(client: MatchClient, address: str, game_id: str, players: int, seed: int,
                   names: Sequence[str], narrate: bool,
                   console: Console) -> tuple[MatchResult, str, int, float]:
    """Create one match, fill its seats with agents, show progress until it ends."""
    info = engine.game(game_id)
    created = await client.create_match(game_id, players, seed=seed, seat_names=names)
    match_id = created.match.match_id
    console.rule(f"{info.name}: {players} players ({', '.join(names)}), seed {seed}, "
                 f"match {match_id}")
    progress = Progress(SpinnerColumn(), TextColumn("[bold]{task.fields[game]}"),
                        BarColumn(bar_width=None), TextColumn("{task.completed:>5.0f} actions"),
                        TextColumn("[dim]{task.fields[line]}"), TimeElapsedColumn(),
                        console=console, transient=True)
    task = progress.add_task("match", total=None, game=info.name, line="")

    def on_event(seat: int, event: MatchEvent) -> None:
        if seat != 0:
            return
        line = event_text(game_id, event.kind, event.data, event.text)
        if line:
            if narrate:
                progress.console.print(f"[dim]{event.seq:>4}[/dim] {line}", highlight=False)
            progress.update(task, line=line.splitlines()[0][:60])

    agents = seat_agents(address, created, list(names), seed=seed, on_event=on_event)
    start = time.perf_counter()
    with progress:
        runner = asyncio.ensure_future(run_agents(agents))
        while not runner.done():
            progress.update(task, completed=sum(len(a.accepted) for a in agents))
            await asyncio.wait({runner}, timeout=0.1)
        result = runner.result()
    seconds = time.perf_counter() - start
    actions = sum(len(a.accepted) for a in agents)
    return result, match_id, actions, seconds
