"""``twistarena loadtest``: many real agents against running servers (see bench/load.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from typing import Any

from rich.table import Table
from twistarena.engine import GAME_IDS

from ..bench import load
from ..terminal import make_console


def register(sub: Any) -> None:
    parser = sub.add_parser("loadtest", help="load a running server with real gRPC agents",
                            description=load.__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default=os.environ.get("TWISTARENA_SERVER",
                                                           "127.0.0.1:50051"),
                        help="HOST:PORT[,HOST:PORT...]: slots spread over them")
    parser.add_argument("--game", choices=GAME_IDS, default="tricky_twist")
    parser.add_argument("--players", type=int, default=0,
                        help="seats per match (default: the game's smallest table)")
    parser.add_argument("--matches", type=int, default=1000,
                        help="stop after this many matches (default 1000)")
    parser.add_argument("--concurrency", type=int, default=32,
                        help="matches in flight at once, over all processes (default 32)")
    parser.add_argument("--duration", type=float, default=60.0,
                        help="stop after this many seconds at most (default 60)")
    parser.add_argument("--processes", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default min(2, cores))")
    parser.add_argument("--decision-ms", type=int, default=0,
                        help="decision clock of the matches (default: the server's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--admin-token", default=os.environ.get("TWISTARENA_ADMIN_TOKEN"),
                        help="for CreateMatch (default: $TWISTARENA_ADMIN_TOKEN)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from twistarena import engine

    players = args.players or engine.game(args.game).min_players
    if args.matches < 1 or args.concurrency < 1 or args.duration <= 0:
        print("twistarena loadtest: --matches, --concurrency and --duration must be positive")
        return 2
    console = make_console(stderr=args.json)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[rate]}"), console=console,
                  transient=True) as bar:
        task = bar.add_task(f"{args.game} x{players}", total=args.matches, rate="")

        def progress(done: int, total: int, decisions: int) -> None:
            bar.update(task, completed=done, rate=f"{decisions:,} decisions")

        report = asyncio.run(load.run_load(
            args.server.split(","), args.game, players, args.matches, args.concurrency,
            args.duration, args.processes, args.seed, args.decision_ms, args.admin_token,
            progress))
    console.print(report_table(report))
    if args.json:
        print(json.dumps(report))
    return 0 if report["matches_completed"] else 1


def report_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"loadtest: {report['game']} x{report['players']}, "
                        f"{report['concurrency']} in flight, {report['processes']} processes")
    table.add_column("figure")
    table.add_column("value", justify="right")
    lat, ovh = report["latency_ms"], report["server_overhead_ms"]
    rows = [
        ("matches completed", f"{report['matches_completed']} / {report['matches_requested']}"),
        ("elapsed s", f"{report['elapsed_s']:.2f}"),
        ("matches/s", f"{report['matches_per_s']:,.2f}"),
        ("decisions/s", f"{report['decisions_per_s']:,.0f}"),
        ("decision round trip p50/p95/p99 ms",
         f"{lat['p50']:.2f} / {lat['p95']:.2f} / {lat['p99']:.2f}"),
        ("server overhead p50/p95/p99 ms",
         f"{ovh['p50']:.2f} / {ovh['p95']:.2f} / {ovh['p99']:.2f}"),
        ("errors", ", ".join(f"{k}: {v}" for k, v in report["errors"].items()) or "none"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table
