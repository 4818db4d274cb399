"""``twistarena demo``: whole games between sample bots, narrated event by event."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from twistarena import engine

from ..local import play_local


def register(sub: Any) -> None:
    parser = sub.add_parser("demo", help="watch sample bots play, narrated")
    parser.add_argument("--offline", action="store_true",
                        help="play in-process on the engine, without a server")
    parser.add_argument("--game", choices=engine.GAME_IDS, default="tricky_twist")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--bots", default="heuristic,random,heuristic,random",
                        help="comma-separated strategies, one per seat (cycled)")
    parser.set_defaults(run=run)


def result_table(state: engine.State, names: list[str], title: str) -> Table:
    table = Table(title=title)
    for column in ("seat", "bot", "score", "place"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    places = state.places()
    for seat, score in enumerate(state.scores()):
        mark = " (winner)" if places[seat] == 1 else ""
        table.add_row(str(seat), names[seat], str(score), f"{places[seat]}{mark}")
    return table


def run(args: argparse.Namespace) -> int:
    console = Console()
    strategies = [s.strip() for s in args.bots.split(",") if s.strip()]
    names = [strategies[i % len(strategies)] for i in range(args.players)]
    console.rule(f"{engine.game(args.game).name}: {args.players} players, seed {args.seed}")
    state = play_local(args.game, args.players, args.seed, names,
                       on_event=lambda line: console.print(line, highlight=False))
    console.print(result_table(state, names, "Final result"))
    winners = ", ".join(f"seat {s} ({names[s]})" for s in state.winners())
    console.print(f"Winner: {winners}")
    return 0
