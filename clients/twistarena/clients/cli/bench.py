"""``twistarena bench engine``: speed figures of the rules engine."""

from __future__ import annotations

import argparse
import functools
from typing import Any

from rich.progress import Progress
from rich.table import Table
from twistarena.engine import GAME_IDS

from ..terminal import make_console
from .command import print_json
from .options import add_json


def register(sub: Any) -> None:
    parser = sub.add_parser("bench",
                            help="measure speed (engine, service, web, ladder, rl, sandbox)")
    parser.defer(_targets)  # the tools declare their targets: loaded when bench is parsed


def _targets(parser: argparse.ArgumentParser) -> None:
    from twistarena.tools.ladder import add_cli as add_ladder
    from twistarena.tools.rl import add_cli as add_rl
    from twistarena.tools.sandbox import add_cli as add_sandbox
    from twistarena.tools.servicecli import add_cli as add_service
    from twistarena.tools.web import add_cli as add_web

    targets = parser.add_subparsers(dest="target", required=True, metavar="TARGET")
    eng = targets.add_parser("engine", help="random full games per game and player count")
    eng.add_argument("--game", choices=GAME_IDS, action="append",
                     help="only this game (repeatable; default: all)")
    eng.add_argument("--games", type=int, default=50, help="at least this many games per case")
    eng.add_argument("--seconds", type=float, default=1.0, help="and at least this long per case")
    add_json(eng, "all figures, one line at the end")
    eng.set_defaults(run=run_engine)
    add_service(targets)
    add_web(targets)
    add_ladder(targets)
    add_rl(targets)
    add_sandbox(targets)


def run_engine(args: argparse.Namespace) -> int:
    from twistarena.tools import engine as bench_engine

    console = make_console(stderr=args.json)
    cases = bench_engine.cases(args.game)
    figures: list[bench_engine.Figure] = []
    with Progress(console=console, transient=True) as progress:
        ref_task = progress.add_task("reference loop", total=args.games)
        ref = bench_engine.reference(args.games, args.seconds)
        progress.update(ref_task, completed=args.games)
        for game_id, players in cases:
            task = progress.add_task(f"{game_id} x{players}", total=args.games)
            figures.append(bench_engine.measure(
                (game_id, players),
                functools.partial(bench_engine.engine_game, game_id, players),
                args.games, args.seconds, functools.partial(progress.advance, task)))
    table = Table(title="Random full games (engine API: to_act, legal_action_ids, apply)")
    for column in ("game", "players", "games", "games/s", "decisions/s", "µs/decision",
                   "x reference"):
        table.add_column(column, justify="right" if column != "game" else "left")
    table.add_row("reference loop", "4", str(ref.games), f"{ref.games_per_s:,.0f}",
                  f"{ref.decisions_per_s:,.0f}", f"{ref.us_per_decision:.2f}", "1.00")
    for f in figures:
        table.add_row(f.game_id, str(f.players), str(f.games), f"{f.games_per_s:,.1f}",
                      f"{f.decisions_per_s:,.0f}", f"{f.us_per_decision:.2f}",
                      f"{f.us_per_decision / ref.us_per_decision:.2f}")
    console.print(table)
    if args.json:
        out: dict[str, Any] = {"reference": ref.to_json(), "games": []}
        for f in figures:
            row = f.to_json()
            row["ratio_to_reference"] = round(f.us_per_decision / ref.us_per_decision, 3)
            out["games"].append(row)
        print_json(out)
    return 0
