"""Play a league schedule in-process with local bots (``play_local``), one game at a time.

Deterministic: each game's seed comes from the schedule and each seat's bot seed
from the game seed and the seat, so a tournament replays exactly. The server-side
runner can reuse the schedules, results and standings and play games remotely.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from twistarena.bots import Bot, make_bot
from twistarena.league import (
    GameResult,
    ScheduledGame,
    compute_standings,
    games_for_tables,
    seatings,
    swiss_tables,
)

from .local import play_local

#: (entrant name, game id, bot seed) -> the bot that plays that entrant's seat.
BotFactory = Callable[[str, str, int], Bot]
#: Called after each game with (games done, games planned, the result).
OnGame = Callable[[int, int, GameResult], None]


def strategy_factory(entrant: str, game_id: str, seed: int) -> Bot:
    """Entrants named after ``STRATEGIES`` (random, heuristic, ismcts)."""
    return make_bot(entrant, game_id, seed)


def bot_seed(game: ScheduledGame, seat: int) -> int:
    return (game.seed * 31 + seat) & 0xFFFFFFFFFFFF


def play_game(game: ScheduledGame, game_id: str, factory: BotFactory = strategy_factory,
              options: Mapping[str, Any] | None = None) -> GameResult:
    bots = [factory(name, game_id, bot_seed(game, seat)) for seat, name in enumerate(game.seats)]
    state = play_local(game_id, len(game.seats), game.seed,
                       options=dict(options) if options else None, bots=bots)
    return GameResult.of(game, state.scores(), state.places())


def run_games(games: Sequence[ScheduledGame], game_id: str,
              factory: BotFactory = strategy_factory, options: Mapping[str, Any] | None = None,
              on_game: OnGame | None = None) -> list[GameResult]:
    results = []
    for game in games:
        results.append(play_game(game, game_id, factory, options))
        if on_game is not None:
            on_game(len(results), len(games), results[-1])
    return results


def run_swiss(entrants: Sequence[str], game_id: str, num_players: int, rounds: int,
              deals: int = 1, seed: int = 0, factory: BotFactory = strategy_factory,
              options: Mapping[str, Any] | None = None, how: str = "rotations",
              on_game: OnGame | None = None) -> list[GameResult]:
    """A Swiss tournament: each round pairs entrants by the standings so far (the
    entrants' given order before the first round), every table played in every
    seating on ``deals`` duplicate deals."""
    results: list[GameResult] = []
    met: set[frozenset[str]] = set()
    byes: list[str] = []
    order = list(entrants)
    per_table = len(seatings([str(i) for i in range(num_players)], how))
    per_round = len(entrants) // num_players * deals * per_table
    total = per_round * rounds
    for r in range(rounds):
        if results:
            ranked = [s.entrant for s in compute_standings(results)]
            order = ranked + [e for e in entrants if e not in ranked]
        tables, out = swiss_tables(order, num_players, met, byes)
        byes += out
        for table in tables:
            met.update(frozenset(p) for p in _pairs(table))
        games = games_for_tables(tables, deals, seed, r, how)

        def step(done: int, planned: int, result: GameResult, offset: int = len(results)) -> None:
            if on_game is not None:
                on_game(offset + done, total, result)

        results += run_games(games, game_id, factory, options, step)
    return results


def _pairs(table: Sequence[str]) -> Iterator[tuple[str, str]]:
    for i, a in enumerate(table):
        for b in table[i + 1:]:
            yield (a, b)


@contextmanager
def rich_progress(description: str = "games", transient: bool = False,
                  total: int | None = None, console: Any = None) -> Iterator[OnGame]:
    """A rich progress bar as an ``on_game`` callback (shows the last game's result)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[last]}"),
                  transient=transient, console=console) as progress:
        task = progress.add_task(description, total=total, last="")

        def on_game(done: int, total: int, result: GameResult) -> None:
            last = " ".join(f"{n}:{s}" for n, s in zip(result.seats, result.scores, strict=True))
            progress.update(task, completed=done, total=total, last=last)

        yield on_game
