"""House rungs as fixed anchors of an arena's scale.

A house rung (the server's own bot) never changes code, so once its strength
is measured its rating need not move: results against it move only the
agents, and a ``mu`` then means the same strength in every arena of a game
and over time. The measurement: ``twistarena evaluate --bots
random,heuristic,ismcts-fast`` plays duplicate deals (every deal in every
rotation of the seats, so the cards favour nobody) between the rungs alone
and rates them with the ladder's own model from the newcomer's rating; each
rung's ``mu`` from that run is its anchor, with ``ANCHOR_SIGMA``.
``CALIBRATED`` keeps the runs (docs/arenas.md has the commands and the
expected win shares); an arena copies its rungs' anchors when it is opened or
its rungs change, and keeps them. A rung without a calibration for its
game and player count is rated like an agent.
"""

from __future__ import annotations

from .ratings import PlackettLuce, Rating

#: An anchor's sigma: small, as its strength is known; it widens the model's
#: expected-result curve a little, as any player's sigma does.
ANCHOR_SIGMA = 1.0

#: (game, players) -> rung -> calibrated mu (see the module's docstring): the
#: OpenSkill mu of each rung in ``twistarena evaluate --game G --players N
#: --bots random,heuristic,ismcts-fast --deals D --seed 2026 --jobs 1``,
#: measured 2026-11-29 (D and the games played in the comments; few deals, so
#: the two upper rungs' order is not settled where they are close).
CALIBRATED: dict[tuple[str, int], dict[str, float]] = {
    ("twisted", 2): {"random": 8.8, "heuristic": 32.9, "ismcts-fast": 35.5},  # 4 deals, 24 games
    ("twisted", 3): {"random": 11.9, "heuristic": 33.2, "ismcts-fast": 30.1},  # 2 deals, 6 games
    ("tricky_twist", 3): {"random": 11.5, "heuristic": 27.2,
                          "ismcts-fast": 36.8},  # 2 deals, 6 games
    ("twhist", 3): {"random": 13.9, "heuristic": 35.1, "ismcts-fast": 25.8},  # 3 deals, 9 games
}


def anchor(game_id: str, players: int, bot: str) -> Rating | None:
    """A house rung's fixed rating in arenas of the game and player count (None:
    not calibrated there)."""
    mu = CALIBRATED.get((game_id, players), {}).get(bot)
    return None if mu is None else Rating(mu, ANCHOR_SIGMA)


def expected_win_share(mu: float, rung: Rating, players: int,
                       model: PlackettLuce | None = None) -> float:
    """The model's chance that an agent of skill ``mu`` (a settled sigma, the
    anchor's) finishes first at a table with ``players - 1`` copies of ``rung``."""
    model = model or PlackettLuce()
    agent = Rating(mu, ANCHOR_SIGMA)
    return model.win_probabilities([agent, *([rung] * (players - 1))])[0]
