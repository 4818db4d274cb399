"""``twistarena soak``: a long bounded run sampling the node for growth (see tools/soak.py)."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from rich.table import Table
from twistarena.engine import GAME_IDS

from ..terminal import make_console
from .command import FAILED, CommandError, print_json
from .options import add_json, add_players

if TYPE_CHECKING:
    from twistarena.tools import soak


def register(sub: Any) -> None:
    parser = sub.add_parser("soak", help="run a node under load for a while; sample its "
                            "RSS, file descriptors, store memory and keys")
    parser.defer(_describe)
    parser.add_argument("--duration", type=float, default=300.0,
                        help="seconds of load (default 300)")
    parser.add_argument("--interval", type=float, default=5.0,
                        help="seconds between samples (default 5)")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="matches in flight at once (default 16)")
    parser.add_argument("--game", choices=GAME_IDS, default="tricky_twist")
    add_players(parser)
    parser.add_argument("--retain-finished", type=float, default=None, metavar="SECONDS",
                        help="passed to the node's serve (default: its own default)")
    add_json(parser, "the report, one line at the end")
    parser.set_defaults(run=run)


def _describe(parser: argparse.ArgumentParser) -> None:
    """The tool's own description, loaded only when this command is parsed."""
    from twistarena.tools import soak

    parser.description = soak.__doc__


def run(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from twistarena import engine
    from twistarena.tools import soak

    if args.duration <= 0 or args.interval <= 0 or args.concurrency < 1:
        raise CommandError("--duration, --interval and --concurrency must be positive")
    players = args.players or engine.game(args.game).min_players
    # The soak is the node's only client: the per-client creation quotas, meant
    # for strangers, would throttle it and turn a soak into a rate-limit test.
    serve_args = ["--creates-per-minute", "0", "--live-per-client", "0"]
    if args.retain_finished is not None:
        serve_args += ["--retain-finished", str(args.retain_finished)]
    console = make_console(stderr=args.json)
    with Progress(TextColumn("soak"), BarColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), console=console, transient=True) as bar:
        task = bar.add_task("soak", total=args.duration, last="")

        def on_sample(sample: soak.Sample) -> None:
            bar.update(task, completed=min(sample.t_s, args.duration),
                       last=f"rss {sample.rss_bytes / 2**20:.1f} MiB, {sample.fds} fds, "
                            f"store {sample.store_memory_bytes / 2**20:.1f} MiB, "
                            f"{sample.store_keys} keys")

        report = asyncio.run(soak.run_soak(args.duration, args.concurrency, args.game,
                                           players, args.interval, serve_args,
                                           on_sample=on_sample))
    console.print(report_table(report))
    if args.json:
        print_json(report)
    return 0 if report["matches_completed"] and report["samples"] else FAILED


def report_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"soak: {report['duration_s']:g} s, {report['concurrency']} matches "
                        f"in flight, {report['matches_completed']} completed")
    for column in ("", "first", "after warm-up", "last", "max", "growth after warm-up"):
        table.add_column(column, justify="right")
    for name in ("rss", "fds", "store_memory", "store_keys"):
        g = report[name]
        if g:
            table.add_row(name, *(f"{g[k]:,}" for k in ("first", "warm", "last", "max")),
                          f"{g['growth_after_warm_up']:.1%}")
    return table
