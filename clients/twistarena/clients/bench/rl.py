"""``twistarena bench rl``: steps per second of the PettingZoo AEC environments
against the raw engine loop, random legal actions in both.

The raw loop is ``bench engine``'s (``to_act``, ``legal_action_ids``, ``apply``).
The environment is measured twice: as a learner uses it (``env.last()`` builds
the observation tensor and the mask every step) and with the mask only
(``env.last(observe=False)`` and ``env.action_mask(agent)``), which is what a
random or a scripted opponent needs. The goal is half the raw rate or better.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
from typing import Any

from rich.table import Table
from twistarena import engine

from ..terminal import make_console
from . import engine as bench_engine

MODES = ("observe", "mask")


def add_cli(targets: Any) -> None:
    """Register the ``rl`` target under ``twistarena bench``."""
    parser = targets.add_parser("rl", help="AEC environment steps/s against the raw engine",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=engine.GAME_IDS, action="append",
                        help="only this game (repeatable; default: all)")
    parser.add_argument("--games", type=int, default=20, help="at least this many games per case")
    parser.add_argument("--seconds", type=float, default=1.0, help="and at least this long")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.set_defaults(run=run_cli)


def aec_game(env: Any, observe: bool, seed: int) -> int:
    """One match of ``env`` with random legal actions; the steps taken (the agents'
    closing steps with ``None`` are not counted). The action is drawn as the raw
    loop draws it: ``random.Random(seed).choice`` over the legal ones (here the
    mask's nonzero indices)."""
    env.reset(seed=seed)
    choice = random.Random(seed).choice
    last, step, action_mask = env.last, env.step, env.action_mask
    steps = 0
    for agent in env.agent_iter():
        if observe:
            obs, _, done, _, _ = last()
            mask = obs["action_mask"]
        else:
            _, _, done, _, _ = last(observe=False)
            mask = None if done else action_mask(agent)
        if done:
            step(None)
            continue
        step(int(choice(mask.nonzero()[0])))
        steps += 1
    return steps


def run_cli(args: argparse.Namespace) -> int:
    from twistarena.rl import aec_env

    console = make_console(stderr=False)
    table = Table(title="Random legal actions: AEC environment against the raw engine loop")
    for column in ("game", "players", "raw steps/s", "AEC observe steps/s", "ratio",
                   "AEC mask steps/s", "ratio"):
        table.add_column(column, justify="left" if column == "game" else "right")
    rows = []
    for game_id, players in bench_engine.cases(args.game):
        raw = bench_engine.measure((game_id, players),
                                   functools.partial(bench_engine.engine_game, game_id, players),
                                   args.games, args.seconds)
        row: dict[str, Any] = {"game": game_id, "players": players,
                               "raw_steps_per_s": round(raw.decisions_per_s, 1)}
        for mode in MODES:
            env = aec_env(game_id, players)
            figure = bench_engine.measure((game_id, players),
                                          functools.partial(aec_game, env, mode == "observe"),
                                          args.games, args.seconds)
            row[f"{mode}_steps_per_s"] = round(figure.decisions_per_s, 1)
            row[f"{mode}_ratio"] = round(figure.decisions_per_s / raw.decisions_per_s, 3)
        rows.append(row)
        table.add_row(game_id, str(players), f"{row['raw_steps_per_s']:,.0f}",
                      f"{row['observe_steps_per_s']:,.0f}", f"{row['observe_ratio']:.2f}",
                      f"{row['mask_steps_per_s']:,.0f}", f"{row['mask_ratio']:.2f}")
    console.print(table)
    console.print("ratio: the environment's rate over the raw loop's (goal: 0.5 or more)")
    if args.json:
        print(json.dumps({"cases": rows}))
    return 0
