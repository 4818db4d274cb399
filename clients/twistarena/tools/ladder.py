"""``twistarena bench ladder``: CPU seconds per decision of the house's search rungs.

For every game and player count, heuristic bots play a few games; at every
decision of seat 0 that has a real choice, each ISMCTS rung of the ladder decides
from that seat's observation (as it does over the network), and the CPU time of
that one call is recorded (``time.process_time``: other processes on a shared
machine slow the wall clock, not this figure). The target is at most one second
per decision on one core.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from rich.table import Table
from twistarena import engine
from twistarena.bots import ISMCTS_ITERATIONS, make_bot
from twistarena.clients.cli.options import add_json
from twistarena.clients.terminal import make_console


def decision_seconds(strategy: str, game_id: str, players: int, games: int,
                     seed: int) -> list[float]:
    """CPU seconds of each searched decision of ``strategy`` at seat 0."""
    out: list[float] = []
    for g in range(games):
        state = engine.make(game_id, players, seed + g)
        bot = make_bot(strategy, game_id, seed + g)
        others = make_bot("heuristic", game_id, seed + g)
        while not state.is_terminal():
            seat = state.to_act()[0]
            obs, legal = state.observation(seat), state.legal_actions(seat)
            if seat == 0 and len(legal) > 1:
                start = time.process_time()
                bot(obs, legal)
                out.append(time.process_time() - start)
            state.apply(seat, others(obs, legal))
    return out


def add_cli(targets: Any) -> None:
    """Register the ``ladder`` target under ``twistarena bench``."""
    parser = targets.add_parser("ladder", help="CPU seconds per decision of each ismcts rung",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=engine.GAME_IDS, action="append",
                        help="only this game (repeatable; default: all)")
    parser.add_argument("--games", type=int, default=1, help="games per case (default 1)")
    parser.add_argument("--rung", choices=sorted(ISMCTS_ITERATIONS), action="append",
                        help="only this rung (repeatable; default: all ismcts rungs)")
    parser.add_argument("--seed", type=int, default=1)
    add_json(parser, "the figures, one line at the end")
    parser.set_defaults(run=run_cli)


def run_cli(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json)
    infos = [engine.game(g) for g in args.game] if args.game else engine.games()
    rungs = args.rung or list(ISMCTS_ITERATIONS)
    table = Table(title="CPU seconds per searched decision (seat 0, heuristic play)")
    for column in ("game", "players", "rung", "iterations", "decisions", "mean s", "max s"):
        table.add_column(column, justify="left" if column in ("game", "rung") else "right")
    rows = []
    for info in infos:
        for players in range(info.min_players, info.max_players + 1):
            for rung in rungs:
                times = decision_seconds(rung, info.id, players, args.games, args.seed)
                row = {"game": info.id, "players": players, "rung": rung,
                       "iterations": ISMCTS_ITERATIONS[rung], "decisions": len(times),
                       "mean_s": round(sum(times) / max(len(times), 1), 4),
                       "max_s": round(max(times, default=0.0), 4)}
                rows.append(row)
                table.add_row(info.id, str(players), rung, str(row["iterations"]),
                              str(len(times)), f"{row['mean_s']:.3f}", f"{row['max_s']:.3f}")
    console.print(table)
    if args.json:
        print(json.dumps({"rows": rows}))
    return 0

