"""Leagues between bots, as pure logic: schedules (round robin, Swiss, gauntlet,
duplicate deals), the arenas' ladder (``ladder``), Plackett-Luce ratings,
standings with confidence intervals, paired comparisons and CSV/JSON export.

Nothing here does I/O or networking, and everything is deterministic from its
seeds: the server's tournaments and matchmaking and the clients' in-process
runner (``twistarena.league``) share it. It imports only the engine."""

from .ladder import Rung, next_version_rating, pick_tables, rate_table
from .ratings import PlackettLuce, Rating
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
    "Comparison",
    "GameResult",
    "PairedTest",
    "PlackettLuce",
    "Rating",
    "Rung",
    "ScheduledGame",
    "Standing",
    "compute_standings",
    "deal_seed",
    "games_for_tables",
    "gauntlet",
    "lineup",
    "mean_ci",
    "next_version_rating",
    "paired_test",
    "pairwise",
    "per_block",
    "pick_tables",
    "rate_results",
    "rate_table",
    "report_from_json",
    "report_json",
    "round_robin",
    "seatings",
    "sign_test",
    "standings_from_csv",
    "standings_to_csv",
    "swiss_tables",
    "wilson_ci",
]
