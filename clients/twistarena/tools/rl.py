"""``twistarena bench rl``: steps per second of the PettingZoo AEC environments
against the raw engine loop, random legal actions in both.

Each loop plays whole matches of the game's default options, one
``random.Random(seed)`` per match, and draws every action with its ``choice``
over the legal ones; a step is one decision taken. What each loop includes:

- raw: ``bench engine``'s loop: ``engine.make``, then per decision ``to_act``,
  ``legal_action_ids`` (a list) and ``apply`` (which validates the action).
- mask: ``env.reset(seed=...)``, then per step ``env.agent_iter()``,
  ``env.last(observe=False)``, ``env.action_mask(agent)`` (a fresh int8 array),
  the mask's nonzero indices (as a list) and ``env.step(index)``; at the end
  each agent's closing ``env.step(None)``. What a random or scripted opponent
  needs.
- observe: the same with ``env.last()``, which also builds the observation:
  the seat's tensor (a new array, since a learner keeps it: written from the
  state by the compiled writer, or, where that was not built, kept up to date
  in Python and copied) and the mask. What a learner uses. The JSON's
  ``compiled`` says which (``--python-tensors``: the Python paths).

The loops take turns (``--turns``, each turn a share of ``--games`` and
``--seconds`` of CPU time of this process). A rate is the median of the loop's
turns; a ratio is the median over the turns of the environment's rate over the
raw loop's in the same turn, so that the load of a machine shared with other
work, which changes from second to second, falls on both sides of each ratio
alike. The goal is half the raw rate or better.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
from collections.abc import Callable
from typing import Any

from rich.table import Table
from twistarena import engine
from twistarena.clients.cli.options import add_json
from twistarena.clients.terminal import make_console

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
    parser.add_argument("--seconds", type=float, default=1.8, help="and at least this long")
    parser.add_argument("--turns", type=int, default=9,
                        help="the loops take turns this many times (medians are reported)")
    parser.add_argument("--python-tensors", action="store_true",
                        help="the environments with the compiled writers off (the Python paths)")
    parser.add_argument("--peers", action="store_true",
                        help="beside OpenSpiel's C++ trick-taking games in the same process:"
                             " ratios of every path to theirs (needs the openspiel extra;"
                             " tools/peers.py says what is measured)")
    add_json(parser, "the figures, one line at the end")
    parser.set_defaults(run=run_cli)


def aec_game(env: Any, observe: bool, seed: int) -> int:
    """One match of ``env`` with random legal actions; the steps taken (the agents'
    closing steps with ``None`` are not counted). The action is drawn as the raw
    loop draws it: ``random.Random(seed).choice`` over a list of the legal ones
    (here the mask's nonzero indices, as Python ints; the int8 mask is read as
    bool, for which numpy finds them faster)."""
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
        step(choice(mask.view("?").nonzero()[0].tolist()))  # "?": bool
        steps += 1
    return steps


def _seed_from(play: Callable[[int], int], first: int, i: int) -> int:
    return play(first + i)


def in_turns(label: tuple[str, int], plays: dict[str, Callable[[int], int]], games: int,
             seconds: float, turns: int) -> dict[str, list[bench_engine.Figure]]:
    """Each of ``plays`` measured in ``turns`` turns, the plays taking turns (each
    turn a share of ``games`` and ``seconds``, new seeds every turn): per play,
    its figure of every turn."""
    turns = max(1, turns)
    figures: dict[str, list[bench_engine.Figure]] = {name: [] for name in plays}
    played = dict.fromkeys(plays, 0)
    for _ in range(turns):
        for name, play in plays.items():
            figure = bench_engine.measure(label, functools.partial(_seed_from, play, played[name]),
                                          -(-games // turns), seconds / turns)
            played[name] += figure.games
            figures[name].append(figure)
    return figures


def run_cli(args: argparse.Namespace) -> int:
    """``bench rl`` (``--python-tensors``: with the compiled writers off while it runs;
    they are back as they were when it returns, as it may be run in-process)."""
    from twistarena.rl import native

    before = native.use_compiled(native.in_use() and not args.python_tensors)
    try:
        console = make_console(stderr=args.json)
        if args.peers:
            return run_peers(args, console)
        return run_aec(args, console)
    finally:
        native.use_compiled(before)


def run_aec(args: argparse.Namespace, console: Any) -> int:
    """Every case's AEC loops against the raw engine loop, in turns."""
    from twistarena.rl import aec_env, native

    table = Table(title="Random legal actions: AEC environment against the raw engine loop")
    for column in ("game", "players", "raw steps/s", "AEC observe steps/s", "ratio",
                   "AEC mask steps/s", "ratio"):
        table.add_column(column, justify="left" if column == "game" else "right")
    rows = []
    for game_id, players in bench_engine.cases(args.game):
        plays: dict[str, Callable[[int], int]] = {
            "raw": functools.partial(bench_engine.engine_game, game_id, players)}
        for mode in MODES:
            plays[mode] = functools.partial(aec_game, aec_env(game_id, players),
                                            mode == "observe")
        figures = in_turns((game_id, players), plays, args.games, args.seconds, args.turns)
        raw = [f.decisions_per_s for f in figures["raw"]]
        row: dict[str, Any] = {"game": game_id, "players": players,
                               "raw_steps_per_s": round(statistics.median(raw), 1),
                               "raw_us_per_step": round(1e6 / statistics.median(raw), 3)}
        for mode in MODES:
            rates = [f.decisions_per_s for f in figures[mode]]
            row[f"{mode}_steps_per_s"] = round(statistics.median(rates), 1)
            row[f"{mode}_ratio"] = round(statistics.median(
                [rate / raw_rate for rate, raw_rate in zip(rates, raw, strict=True)]), 3)
            row[f"{mode}_us_per_step"] = round(1e6 / statistics.median(rates), 3)
        rows.append(row)
        table.add_row(game_id, str(players), f"{row['raw_steps_per_s']:,.0f}",
                      f"{row['observe_steps_per_s']:,.0f}", f"{row['observe_ratio']:.2f}",
                      f"{row['mask_steps_per_s']:,.0f}", f"{row['mask_ratio']:.2f}")
    console.print(table)
    console.print("ratio: the environment's rate over the raw loop's (goal: 0.5 or more);"
                  f" tensors {'compiled' if native.in_use() else 'in Python'}")
    if args.json:
        print(json.dumps({"cases": rows, "compiled": native.in_use(),
                          "load_average": os.getloadavg()[0]}))
    return 0


#: the goals of each path, as a median ratio to the peers (tools/peers.py)
PEER_GOALS = {"raw": 1.0, "observe": 0.7, "mask": None, "spiel": None, "spiel_tensor": 0.5,
              "clone": 0.25}


def run_peers(args: argparse.Namespace, console: Any) -> int:
    """Every path of every case against OpenSpiel's trick-taking games, in turns."""
    import pyspiel
    from twistarena import engine as rules
    from twistarena.rl import aec_env, native, register_openspiel

    from . import peers as bench_peers

    register_openspiel()
    loaded = bench_peers.peer_plays()
    cases = bench_engine.cases(args.game)
    turns = max(1, args.turns)
    seconds = args.seconds / turns
    ours: dict[tuple[str, int], dict[str, list[float]]] = {
        case: {path: [] for path in bench_peers.AGAINST} for case in cases}
    spiel_games = {(g, n): pyspiel.load_game(f"twistarena_{g}", {"players": n})
                   for g, n in cases}
    envs = {case: aec_env(*case) for case in cases}
    peer_turns: list[dict[str, float]] = []
    for turn in range(turns):
        seed = 1000 * turn
        peer_turns.append(bench_peers.peer_turn(loaded, seconds, seed))
        for case in cases:
            game = spiel_games[case]
            plays: dict[str, Callable[[int], int]] = {
                "raw": functools.partial(bench_engine.engine_game, *case),
                "observe": functools.partial(aec_game, envs[case], True),
                "mask": functools.partial(aec_game, envs[case], False),
                "spiel": functools.partial(bench_peers.spiel_game, game, False),
                "spiel_tensor": functools.partial(bench_peers.spiel_game, game, True)}
            for path, play in plays.items():
                ours[case][path].append(bench_peers.rate(play, seconds, seed))
            ours[case]["clone"].append(
                bench_peers.clones(bench_peers.midgame(game, seed), seconds))
    table = Table(title="Our paths over OpenSpiel's trick-taking games (median ratio of turns)")
    table.add_column("game", justify="left")
    table.add_column("players", justify="right")
    for path in bench_peers.AGAINST:
        table.add_column(path, justify="right")
    rows: list[dict[str, Any]] = []
    for case in cases:
        ratio = bench_peers.ratios(ours[case], peer_turns)
        rows.append({"game": case[0], "players": case[1], "ratios": ratio,
                     "rates": {p: round(statistics.median(r), 1) for p, r in ours[case].items()}})
        table.add_row(case[0], str(case[1]),
                      *(f"{ratio.get(p, 0):.2f}" for p in bench_peers.AGAINST))
    overall = {p: round(statistics.median(r["ratios"][p] for r in rows), 3)
               for p in bench_peers.AGAINST if all(p in r["ratios"] for r in rows)}
    table.add_row("median", "", *(f"{overall.get(p, 0):.2f}" for p in bench_peers.AGAINST))
    console.print(table)
    peer_rates = {kind: round(statistics.median(t[kind] for t in peer_turns), 1)
                  for kind in ("random", "tensor", "clone") if all(kind in t for t in peer_turns)}
    console.print(f"peers: {', '.join(loaded)}; their median decisions per CPU-second:"
                  f" random {peer_rates.get('random', 0):,.0f}, with a tensor"
                  f" {peer_rates.get('tensor', 0):,.0f}; hearts clones/s"
                  f" {peer_rates.get('clone', 0):,.0f}. Goals: "
                  + ", ".join(f"{p} >= {g}" for p, g in PEER_GOALS.items() if g is not None)
                  + f"; engine {'compiled' if rules.compiled() else 'interpreted'},"
                  f" tensors {'compiled' if native.in_use() else 'in Python'}")
    if args.json:
        print(json.dumps({"peers": list(loaded), "peer_rates": peer_rates, "cases": rows,
                          "median": overall, "turns": turns,
                          "engine_compiled": rules.compiled(), "compiled": native.in_use(),
                          "load_average": os.getloadavg()[0]}))
    return 0
