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
#: --bots random,heuristic,ismcts-fast --deals D --seed 2026 --jobs 1`` (with 4
#: or 5 seats the extra ones are ismcts-fast, evaluate's fill), measured
#: 2026-11-29, D and the games played in the comments. Few deals: where the
#: two upper rungs are close their order is not settled.
CALIBRATED: dict[tuple[str, int], dict[str, float]] = {
    ("twisted", 2): {"random": 8.8, "heuristic": 32.9, "ismcts-fast": 35.5},  # 4, 24
    ("twisted", 3): {"random": 4.0, "heuristic": 36.4, "ismcts-fast": 34.2},  # 6, 18
    ("twisted", 4): {"random": 0.6, "heuristic": 31.7, "ismcts-fast": 33.9},  # 4, 16
    ("tricky_twist", 3): {"random": 6.0, "heuristic": 33.1, "ismcts-fast": 35.7},  # 6, 18
    ("tricky_twist", 4): {"random": 2.1, "heuristic": 33.0, "ismcts-fast": 32.6},  # 4, 16
    ("twhist", 3): {"random": 12.9, "heuristic": 34.0, "ismcts-fast": 27.7},  # 6, 18
    ("twhist", 4): {"random": 7.1, "heuristic": 26.8, "ismcts-fast": 33.5},  # 4, 16
    ("twhist", 5): {"random": 14.6, "heuristic": 28.8, "ismcts-fast": 27.3},  # 3, 15
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
