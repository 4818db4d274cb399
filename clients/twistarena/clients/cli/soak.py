"""``twistarena soak``: a long bounded run sampling the node for growth (see tools/soak.py),
or, with ``--hosted``, hosted play on a local cluster checked at the end
(tools/hostedsoak.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from twistarena.engine import GAME_IDS

from ..terminal import make_console
from .command import FAILED, CommandError, print_json
from .options import add_flag_table, add_json

if TYPE_CHECKING:
    from twistarena.tools import hostedsoak, soak


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
    parser.add_argument("--game", choices=GAME_IDS, default=None,
                        help="the game (default tricky_twist; with --hosted twisted)")
    parser.add_argument("--players", type=int, default=0,
                        help="seats per match (default: the game's smallest table; with "
                             "--hosted 3, or the nearest the game allows)")
    parser.add_argument("--retain-finished", type=float, default=None, metavar="SECONDS",
                        help="passed to the node's serve (default: its own default)")
    add_json(parser, "the report, one line at the end")
    hosted = parser.add_argument_group(
        "hosted", "--hosted: a local cluster (twistarena cluster) with its runners, "
                  "instant hosted bots in tournaments kept going, checked at the end")
    hosted.add_argument("--hosted", action="store_true",
                        help="hosted play on a local cluster instead of one node's growth")
    add_flag_table(hosted, (
        ("--nodes", {"default": 3}, "cluster nodes (default 3)"),
        ("--runners", {"default": 2}, "runners (default 2)"),
        ("--agents", {"default": 3}, "hosted instant bots in each tournament (default 3)"),
        ("--games-per-pairing", {"default": 20},
         "of each tournament (three bots at a table of three: one pairing, three games "
         "each; default 20): small, so that the last ones finish soon after the load stops"),
    ), type=int)
    hosted.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                        help="how the runners run the bots (default bwrap)")
    hosted.add_argument("--keep-dir", type=Path, default=None,
                        help="keep the cluster's logs and data here (default: a temp dir, "
                             "removed at the end)")
    parser.set_defaults(run=run)


def _describe(parser: argparse.ArgumentParser) -> None:
    """The tools' own descriptions, loaded only when this command is parsed."""
    from twistarena.tools import hostedsoak, soak

    parser.description = f"{soak.__doc__}\n--hosted:\n{hostedsoak.__doc__}"


def run(args: argparse.Namespace) -> int:
    from twistarena import engine
    from twistarena.tools import soak

    if args.duration <= 0 or args.interval <= 0 or args.concurrency < 1:
        raise CommandError("--duration, --interval and --concurrency must be positive")
    if args.hosted:
        return run_hosted(args)
    args.game = args.game or "tricky_twist"
    players = args.players or engine.game(args.game).min_players
    # The soak is the node's only client: the per-client creation quotas, meant
    # for strangers, would throttle it and turn a soak into a rate-limit test.
    serve_args = ["--creates-per-minute", "0", "--live-per-client", "0"]
    if args.retain_finished is not None:
        serve_args += ["--retain-finished", str(args.retain_finished)]
    with progress_bar("soak", args.duration, "", args.json) as (console, update):

        def on_sample(sample: soak.Sample) -> None:
            update(sample.t_s, f"rss {sample.rss_bytes / 2**20:.1f} MiB, {sample.fds} fds, "
                               f"store {sample.store_memory_bytes / 2**20:.1f} MiB, "
                               f"{sample.store_keys} keys")

        report = asyncio.run(soak.run_soak(args.duration, args.concurrency, args.game,
                                           players, args.interval, serve_args,
                                           on_sample=on_sample))
    console.print(report_table(report))
    if args.json:
        print_json(report)
    return 0 if report["matches_completed"] and report["samples"] else FAILED


@contextlib.contextmanager
def progress_bar(label: str, total: float, first: str, to_stderr: bool
                 ) -> Iterator[tuple[Console, Callable[[float, str], None]]]:
    """A bar of ``total`` seconds (on stderr when stdout is for --json), and how to
    move it: (seconds so far, what to show beside it)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    console = make_console(stderr=to_stderr)
    with Progress(TextColumn(label), BarColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[last]}"), console=console, transient=True) as bar:
        task = bar.add_task(label, total=total, last=first)

        def update(t_s: float, last: str) -> None:
            bar.update(task, completed=min(t_s, total), last=last)

        yield console, update


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


def run_hosted(args: argparse.Namespace) -> int:
    """``soak --hosted``: 0 when every check held."""
    from twistarena import engine
    from twistarena.tools import hostedsoak

    if args.nodes < 1 or args.runners < 1 or args.agents < 2:
        raise CommandError("--hosted needs --nodes >= 1, --runners >= 1, --agents >= 2")
    if args.keep_dir is not None and args.keep_dir.exists() and any(args.keep_dir.iterdir()):
        raise CommandError(f"--keep-dir {args.keep_dir} is not empty (its logs are "
                           "read at the end)")
    game = engine.game(args.game or "twisted")
    players = args.players or min(max(3, game.min_players), game.max_players)
    if args.agents < players or args.games_per_pairing < 1:
        raise CommandError(f"--hosted needs --agents >= {players} (the table) and "
                           "--games-per-pairing >= 1")
    plan = hostedsoak.HostedSoakPlan(args.duration, args.nodes, args.runners, args.agents,
                                     game.id, players, args.sandbox, args.keep_dir,
                                     args.games_per_pairing)
    with progress_bar("hosted soak", args.duration, "starting the cluster",
                      args.json) as (console, update):

        def on_progress(now: hostedsoak.Progress) -> None:
            update(now.t_s, f"{now.games_done} matches, {now.tournaments} tournaments")

        report = asyncio.run(hostedsoak.run_hosted_soak(plan, on_progress))
    console.print(hosted_table(report))
    if args.json:
        print_json(report)
    return 0 if hostedsoak.passed(report) else FAILED


def hosted_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"hosted soak: {report['duration_s']:g} s, {report['nodes']} nodes, "
                        f"{report['runners']} runners, {report['game']} x{report['players']}")
    table.add_column("")
    table.add_column("value", justify="right")
    table.add_column("wanted", justify="right")
    table.add_row("matches played", f"{report['matches_played']:,}", "> 0")
    table.add_row("of which played on after their tournament's cancel",
                  f"{report.get('matches_played_after_cancel', 0):,}", "")
    table.add_row("matches a second", f"{report['matches_per_s']:g}", "")
    for version in report["versions"]:
        table.add_row(f"{version['agent_id']} {version['version_id'][:12]}: stats / played",
                      f"{version['stats_matches']:,} / {version['matches_played']:,}", "equal")
    table.add_row("runner calls refused (node metrics)", str(report["reports_refused"]), "0")
    table.add_row("reports failed (runner logs)", str(report["reports_failed_on_runners"]), "0")
    table.add_row("reports of seats handed over (node logs)",
                  str(report["reports_handed_over"]), "")
    table.add_row("matches left WAITING", str(report["matches_waiting"]), "0")
    late = report["latecomer"]
    table.add_row("version submitted during the load: its practice match",
                  f"{late['reason']} in {late['played_in_s']:g} s", "over")
    table.add_row("seats played twice", str(report["seats_played_twice"]), "0")
    table.add_row("seats handed out again", str(report["seats_handed_again"]), "")
    table.add_row("tournaments (all finished)",
                  f"{report['tournaments']} ({'yes' if report['drained'] else 'no'})", "")
    return table
