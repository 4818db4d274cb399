"""``twistarena evaluate``: bot kinds play duplicate deals in-process, and the
standings say which is stronger and how sure that is.

Every deal is played in every seating of the table, so each kind plays the same
hands from every seat; per-deal score differences between two kinds are then
paired, and a paired t-test and an exact sign test give their p-values.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from twistarena import engine
from twistarena.bots import ISMCTS_ITERATIONS, STRATEGIES, Bot, make_bot
from twistarena.bots.ismcts import ROLLOUTS, IsmctsBot, IsmctsConfig
from twistarena.league import (
    Comparison,
    GameResult,
    ScheduledGame,
    Standing,
    compute_standings,
    games_for_tables,
    lineup,
    pairwise,
    report_json,
    round_robin,
    standings_to_csv,
)

from ..sdk.policies import POLICY_KIND, load_policy, policy_bot_of
from ..terminal import make_console
from ..tournament import play_game, rich_progress
from .command import CommandError
from .options import add_json

#: Seats per game when --players is not given.
DEFAULT_PLAYERS = {"tricky_twist": 4, "twisted": 3, "twhist": 4}


def register(sub: Any) -> None:
    parser = sub.add_parser("evaluate",
                            help="bot kinds play duplicate deals in-process; standings, p-values")
    parser.add_argument("--game", choices=engine.GAME_IDS, required=True)
    parser.add_argument("--players", type=int, default=None,
                        help="seats per game (default: 4, 3 for twisted)")
    parser.add_argument("--bots", default="ismcts,heuristic,random",
                        help="comma-separated bot kinds (distinct); with fewer kinds than seats"
                             " the rest are --fill, with more every group of kinds meets; a"
                             " trained policy is policy:MODULE:CALLABLE (docs/rl.md)")
    parser.add_argument("--fill", default=None,
                        help="kind for the seats left over (default: the last of --bots)")
    parser.add_argument("--deals", type=int, default=4,
                        help="deals, each played in every seating (default 4: about a minute "
                             "or two on 2 cores with the default ismcts budget)")
    parser.add_argument("--seatings", choices=("rotations", "permutations"), default="rotations")
    parser.add_argument("--iterations", type=int, default=ISMCTS_ITERATIONS["ismcts"],
                        help="ismcts simulations per decision (default: the ismcts rung's,"
                             f" {ISMCTS_ITERATIONS['ismcts']})")
    parser.add_argument("--time-ms", type=float, default=None,
                        help="ismcts time per decision (ms); with --iterations the first wins")
    parser.add_argument("--rollout", choices=ROLLOUTS, default="heuristic",
                        help="ismcts rollout policy (default heuristic: the ladder's search)")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="worker processes (default: one per core)")
    parser.add_argument("--csv", default=None, metavar="PATH", help="also write standings as CSV")
    parser.add_argument("--out", default=None, metavar="PATH",
                        help="also write the full JSON report (standings, tests, every game)")
    add_json(parser, "the report without the games (--out writes them too)")
    parser.set_defaults(run=run)


@dataclass(frozen=True, slots=True)
class Factory:
    """Builds each seat's bot; a picklable value so that worker processes can use it."""

    iterations: int | None
    time_ms: float | None
    rollout: str

    def __call__(self, entrant: str, game_id: str, seed: int) -> Bot:
        if entrant == "ismcts":
            config = IsmctsConfig(iterations=self.iterations, time_ms=self.time_ms,
                                  rollout=self.rollout)
            return IsmctsBot(game_id, seed, config)
        if entrant.startswith(POLICY_KIND):
            return policy_bot_of(entrant.removeprefix(POLICY_KIND))
        return make_bot(entrant, game_id, seed)


def schedule(game_id: str, players: int, kinds: Sequence[str], deals: int, seed: int,
             fill: str | None = None, how: str = "rotations") -> list[ScheduledGame]:
    """One table of all kinds (filled up) when they fit, else a round robin of them."""
    if len(kinds) <= players:
        return games_for_tables([lineup(kinds, players, fill)], deals, seed, how=how)
    return round_robin(kinds, players, deals, seed, how)


def _play(args: tuple[ScheduledGame, str, Factory]) -> tuple[GameResult, list[float]]:
    """One game, and the CPU seconds of every ismcts decision that searched in it."""
    game, game_id, factory = args
    made: list[Bot] = []

    def recording(entrant: str, game_id: str, seed: int) -> Bot:
        made.append(factory(entrant, game_id, seed))
        return made[-1]

    result = play_game(game, game_id, recording)
    return result, [s for bot in made if isinstance(bot, IsmctsBot) for s in bot.search_seconds]


def run(args: argparse.Namespace) -> int:
    console = make_console(stderr=True)
    game_id: str = args.game
    info = engine.game(game_id)
    players = args.players or DEFAULT_PLAYERS.get(game_id, info.min_players)
    if not info.min_players <= players <= info.max_players:
        raise CommandError(f"{game_id} is for {info.min_players}-{info.max_players} players")
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    fill = args.fill
    unknown = [k for k in [*kinds, *([fill] if fill else [])]
               if k not in STRATEGIES and not k.startswith(POLICY_KIND)]
    if unknown or len(set(kinds)) != len(kinds) or not kinds:
        raise CommandError(f"--bots must be distinct kinds among {', '.join(STRATEGIES)}"
                           f" or {POLICY_KIND}MODULE:CALLABLE")
    for kind in kinds:
        if kind.startswith(POLICY_KIND):
            try:
                load_policy(kind.removeprefix(POLICY_KIND))
            except ValueError as error:
                raise CommandError(f"{kind}: {error}") from error
    if args.deals < 1 or (args.iterations is not None and args.iterations < 1):
        raise CommandError("--deals and --iterations must be at least 1")
    games = schedule(game_id, players, kinds, args.deals, args.seed, fill, args.seatings)
    factory = Factory(args.iterations, args.time_ms, args.rollout)
    started, cpu0 = time.perf_counter(), _cpu()
    results: list[GameResult] = []
    seconds: list[float] = []
    jobs = max(1, min(args.jobs, len(games)))
    # The rate is taken after the first result (which also pays for starting the
    # workers and loading the bots) over enough games that workers running ahead of
    # the results, which arrive in order, do not make it look faster than it is.
    sample = min(len(games) - 1, max(2 * jobs + 1, len(games) // 20))
    console.print(f"{len(games)} games ({args.deals} deals x {len(games) // args.deals} "
                  f"seatings) on {jobs} worker{'s' if jobs > 1 else ''}; an estimate follows "
                  f"the first {sample}", highlight=False)
    first_done: list[float] = []

    def estimate(done: int, total: int, result: GameResult) -> None:
        """The time left, from the rate of the games after the first."""
        now = time.perf_counter()
        if done == 1:
            first_done.append(now)
        elif done == sample > 1:
            left = (now - first_done[0]) / (done - 1) * (total - done)
            console.print(f"estimate: about {_duration(left)} more for the {total} games "
                          "(--deals and --iterations set the budget)", highlight=False)

    with rich_progress(f"{game_id} x{players}", transient=args.json, total=len(games),
                       console=console) as on_game:
        if jobs > 1:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                work = [(g, game_id, factory) for g in games]
                for result, spent in pool.map(_play, work):
                    results.append(result)
                    seconds += spent
                    estimate(len(results), len(games), result)
                    on_game(len(results), len(games), result)
        else:
            for g in games:
                result, spent = _play((g, game_id, factory))
                results.append(result)
                seconds += spent
                estimate(len(results), len(games), results[-1])
                on_game(len(results), len(games), results[-1])
    wall, cpu = time.perf_counter() - started, _cpu() - cpu0
    standings = compute_standings(results)
    comparisons = pairwise(results, kinds)
    meta = {"game": game_id, "players": players, "bots": kinds, "fill": fill,
            "deals": args.deals, "games": len(results), "seatings": args.seatings,
            "iterations": args.iterations, "time_ms": args.time_ms, "rollout": args.rollout,
            "seed": args.seed, "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "search_decisions": len(seconds),
            "search_seconds_mean": round(sum(seconds) / len(seconds), 4) if seconds else None,
            "search_seconds_max": round(max(seconds), 4) if seconds else None}
    if args.csv:
        with open(args.csv, "w", encoding="utf-8") as f:
            f.write(standings_to_csv(standings))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(report_json(standings, results, comparisons, meta))
    if args.json:
        print(report_json(standings, (), comparisons, meta))
        return 0
    out = make_console()
    out.print(standings_table(standings, f"{game_id}, {players} players, {args.deals} deals x"
                                         f" {len(results) // args.deals} seatings"))
    out.print(comparisons_table(comparisons))
    searched = ""
    if "ismcts" in {*kinds, fill}:  # the entrant these flags configure
        searched = (f" (ismcts: {args.iterations} iterations"
                    f"{f', {args.time_ms:g} ms' if args.time_ms else ''} per decision)")
    out.print(f"{len(results)} games in {wall:.0f} s wall, {cpu:.0f} s CPU{searched}")
    if seconds:
        out.print(f"ismcts CPU seconds per searched decision: mean {meta['search_seconds_mean']},"
                  f" max {meta['search_seconds_max']} over {len(seconds)} decisions")
    return 0


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _cpu() -> float:
    """CPU seconds of this process and its finished workers."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def standings_table(standings: Sequence[Standing], title: str) -> Table:
    table = Table(title=title)
    for column in ("bot", "seats", "mean score [95% CI]", "win share [95% CI]", "mean place",
                   "rating mu ± sigma", "mu - 3 sigma"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for s in standings:
        table.add_row(
            s.entrant, str(s.games),
            f"{s.mean_score:.2f} [{s.score_ci_low:.2f}, {s.score_ci_high:.2f}]",
            f"{s.win_share:.3f} [{s.win_ci_low:.3f}, {s.win_ci_high:.3f}]",
            f"{s.mean_place:.2f}", f"{s.mu:.2f} ± {s.sigma:.2f}", f"{s.conservative:.2f}")
    return table


def comparisons_table(comparisons: Sequence[Comparison]) -> Table:
    table = Table(title="Paired by deal: A - B score per deal")
    for column in ("A vs B", "deals", "mean diff [95% CI]", "t-test p", "deals won-lost-tied",
                   "sign test p", "verdict"):
        table.add_column(column, justify="left" if column in ("A vs B", "verdict") else "right")
    for c in comparisons:
        t = c.test
        table.add_row(f"{c.a} vs {c.b}", str(t.n),
                      f"{t.mean_diff:+.2f} [{t.ci_low:+.2f}, {t.ci_high:+.2f}]", _p(t.t_p),
                      f"{t.wins}-{t.losses}-{t.ties}", _p(t.sign_p), _verdict(c)["verdict"])
    return table


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def _verdict(c: Comparison) -> dict[str, Any]:
    t = c.test
    if t.t_p < 0.05:
        verdict = f"{c.a} > {c.b}" if t.mean_diff > 0 else f"{c.b} > {c.a}"
    else:
        verdict = "not significant"
    return {"a": c.a, "b": c.b, "deals": t.n, "mean_diff": round(t.mean_diff, 3),
            "t_p": t.t_p, "sign_p": t.sign_p, "verdict": verdict}
