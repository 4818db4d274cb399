"""Multiplayer ratings with uncertainty: the Plackett-Luce model of Weng & Lin
(2011), "A Bayesian Approximation Method for Online Ranking", Algorithm 4, as the
``openskill`` package implements it (one player per team here; tied places share
the update through the tie counts).

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
    """The model's constants; the defaults are the openskill ones (mu 25, sigma 25/3)."""

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    kappa: float = 0.0001
    tau: float = 25.0 / 300.0

    def rating(self) -> Rating:
        return Rating(self.mu, self.sigma)

    def rate(self, ratings: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
        """New ratings after one match; ``places``: 1 = first, equal places are ties."""
        if len(ratings) != len(places):
            raise ValueError("one place per rating")
        if len(ratings) < 2:
            return list(ratings)
        sig2 = [r.sigma ** 2 + self.tau ** 2 for r in ratings]
        mus = [r.mu for r in ratings]
        n = len(ratings)
        c = math.sqrt(sum(s + self.beta ** 2 for s in sig2))
        expo = [math.exp(m / c) for m in mus]
        # sum_q: strength of everyone placed at or below q; a_q: how many share q's place.
        sum_q = [sum(expo[i] for i in range(n) if places[i] >= places[q]) for q in range(n)]
        a = [sum(1 for i in range(n) if places[i] == places[q]) for q in range(n)]
        out = []
        for i in range(n):
            omega = 0.0
            delta = 0.0
            for q in range(n):
                if places[q] > places[i]:
                    continue
                quotient = expo[i] / sum_q[q]
                delta += quotient * (1.0 - quotient) / a[q]
                omega += ((1.0 - quotient) if q == i else -quotient) / a[q]
            omega *= sig2[i] / c
            gamma = math.sqrt(sig2[i]) / c
            delta *= gamma * sig2[i] / c ** 2
            mu = mus[i] + omega
            sigma = math.sqrt(sig2[i]) * math.sqrt(max(1.0 - delta, self.kappa))
            out.append(Rating(mu, sigma))
        return out

    def win_probabilities(self, ratings: Sequence[Rating]) -> list[float]:
        """Chance of each player finishing first under the model (for upsets, displays)."""
        c = math.sqrt(sum(r.sigma ** 2 + self.beta ** 2 for r in ratings))
        expo = [math.exp(r.mu / c) for r in ratings]
        total = sum(expo)
        return [e / total for e in expo]
