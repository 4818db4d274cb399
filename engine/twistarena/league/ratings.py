"""Multiplayer ratings with uncertainty: the Plackett-Luce model of Weng & Lin
(2011), "A Bayesian Approximation Method for Online Ranking", Algorithm 4, from
the ``openskill`` package (one player per team here; tied places share the
update through the tie counts). This module keeps the league's own small types
(``Rating``, the model's constants) so that the rest of the code does not
depend on the package's classes.

A rating is a Gaussian belief ``mu +- sigma`` about a player's skill. After a
match, each player's ``mu`` moves by how much better or worse it placed than the
model expected, scaled by its own uncertainty, and its ``sigma`` shrinks; ``tau``
adds a little uncertainty before each match so that ratings can still follow a
player that changes. Leaderboards sort by the conservative ``mu - 3 sigma``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce as OpenSkillPlackettLuce


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """A skill the player very probably exceeds (about 99.9% one-sided)."""
        return self.mu - 3.0 * self.sigma


@dataclass(frozen=True, slots=True)
class PlackettLuce:
    """The model's constants; the defaults are openskill's (mu 25, sigma 25/3)."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    kappa: float = 0.0001
    tau: float = 25.0 / 300.0

    def rating(self) -> Rating:
        """The rating every new player starts from: the one named place for it."""
        return Rating(self.mu, self.sigma)

    def rate(self, ratings: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
        """New ratings after one match; ``places``: 1 = first, equal places are ties."""
        if len(ratings) != len(places):
            raise ValueError("one place per rating")
        if len(ratings) < 2:
            return list(ratings)
        model = OpenSkillPlackettLuce(mu=self.mu, sigma=self.sigma, beta=self.beta,
                                      kappa=self.kappa, tau=self.tau)
        teams = [[model.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
        rated = model.rate(teams, ranks=[float(p) for p in places])
        return [Rating(team[0].mu, team[0].sigma) for team in rated]

    def win_probabilities(self, ratings: Sequence[Rating]) -> list[float]:
        """Chance of each player finishing first under the model (for upsets, displays).

        The Plackett-Luce first-place probability itself, ``exp(mu_i / c)`` over
        the sum; openskill's ``predict_win`` is a pairwise approximation of it."""
        c = math.sqrt(sum(r.sigma ** 2 + self.beta ** 2 for r in ratings))
        expo = [math.exp(r.mu / c) for r in ratings]
        total = sum(expo)
        return [e / total for e in expo]
