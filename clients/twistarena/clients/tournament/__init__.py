"""Tournaments between bots, as pure logic: schedules (round robin, Swiss, gauntlet,
duplicate deals), Plackett-Luce ratings, standings with confidence intervals,
paired comparisons, CSV/JSON export, and an in-process runner on local bots.

Nothing here does I/O or networking, and everything is deterministic from its
seeds, so a server can run the same tournaments with remote agents."""

from .ratings import PlackettLuce, Rating
from .runner import BotFactory, play_game, rich_progress, run_games, run_swiss, strategy_factory
from .schedule import (
    ScheduledGame,
    deal_seed,
    games_for_tables,
    gauntlet,
    lineup,
    round_robin,
    seatings,
    swiss_tables,
)
from .standings import (
    Comparison,
    GameResult,
    Standing,
    compute_standings,
    pairwise,
    per_block,
    rate_results,
    report_from_json,
    report_json,
    standings_from_csv,
    standings_to_csv,
)
from .stats import PairedTest, mean_ci, paired_test, sign_test, wilson_ci

__all__ = [
    "BotFactory",
    "Comparison",
    "GameResult",
    "PairedTest",
    "PlackettLuce",
    "Rating",
    "ScheduledGame",
    "Standing",
    "compute_standings",
    "deal_seed",
    "games_for_tables",
    "gauntlet",
    "lineup",
    "mean_ci",
    "paired_test",
    "pairwise",
    "per_block",
    "play_game",
    "rate_results",
    "report_from_json",
    "report_json",
    "rich_progress",
    "round_robin",
    "run_games",
    "run_swiss",
    "seatings",
    "sign_test",
    "standings_from_csv",
    "standings_to_csv",
    "strategy_factory",
    "swiss_tables",
    "wilson_ci",
]
