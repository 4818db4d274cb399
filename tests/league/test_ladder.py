"""The ladder: who the arena seats next and how results move the ratings.

The goal check of the arenas runs ``twistarena.league.ladder`` (the table
picking and rating functions the server's arena scheduler calls) with the
same bots played in-process on the engine, as ``twistarena evaluate`` plays
them: the ranking the arena reaches is decided by this code, not by the
network around it, and in-process play keeps the check affordable.
"""

from __future__ import annotations

import random

from twistarena.bots import make_bot
from twistarena.clients.local import play_local
from twistarena.league import PlackettLuce, Rating
from twistarena.league.ladder import (
    NEW_VERSION_SIGMA_SHARE,
    Rung,
    next_version_rating,
    pick_tables,
    rate_table,
)

MODEL = PlackettLuce()
#: One round of Twisted: the same game, half as long.
OPTIONS = {"rounds": 1}


class InProcessArena:
    """An arena of Twisted with 2 players whose matches are played on the engine."""

    def __init__(self, bots: dict[str, str], seed: int) -> None:
        self.bots = dict(bots)
        self.ratings = {key: MODEL.rating() for key in bots}
        self.games = dict.fromkeys(bots, 0)
        self.rng = random.Random(seed)
        self.played = 0

    def play_one(self) -> list[str]:
        """Let the ladder pick the next table, play it, rate it; returns its seats."""
        rungs = [Rung(k, self.ratings[k], self.games[k]) for k in self.bots]
        [table] = pick_tables(rungs, players=2, max_concurrent=2, tables=1, rng=self.rng)
        self.played += 1
        bots = [make_bot(self.bots[k], "twisted", self.played * 7 + i)
                for i, k in enumerate(table)]
        state = play_local("twisted", 2, self.played, bots=bots, options=OPTIONS)
        new = rate_table(MODEL, [self.ratings[k] for k in table], state.places())
        for key, rating in zip(table, new, strict=True):
            self.ratings[key] = rating
            self.games[key] += 1
        return table

    def new_version(self, old: str, new: str, bot: str) -> None:
        """``old`` leaves the ladder; ``new`` enters with the head start of a version."""
        del self.bots[old]
        self.bots[new] = bot
        self.ratings[new] = next_version_rating(self.ratings[old], MODEL)
        self.games[new] = 0


def ranked_as_known(r: dict[str, Rating]) -> bool:
    """random and its copy below heuristic below ismcts-fast by mu, the copies
    within one sigma of each other."""
    copies_close = abs(r["random@1"].mu - r["copy@1"].mu) <= min(r["random@1"].sigma,
                                                                 r["copy@1"].sigma)
    return (max(r["random@1"].mu, r["copy@1"].mu) < r["heuristic@1"].mu
            < r["ismcts@1"].mu and copies_close)


def test_arena_ranks_known_strengths_and_a_strengthened_version_climbs() -> None:
    arena = InProcessArena({"random@1": "random", "copy@1": "random",
                            "heuristic@1": "heuristic", "ismcts@1": "ismcts-fast"}, seed=1)
    streak = 0
    while streak < 5:  # the order has held for 5 matches in a row
        assert arena.played < 150, f"not ranked after 150 matches: {arena.ratings}"
        arena.play_one()
        streak = streak + 1 if ranked_as_known(arena.ratings) else 0
    weakest = arena.ratings["random@1"]
    arena.new_version("random@1", "random@2", "ismcts-fast")
    assert arena.ratings["random@2"].mu == weakest.mu < arena.ratings["heuristic@1"].mu
    streak = 0
    while streak < 3:  # above the heuristic for 3 of its matches in a row
        assert arena.games["random@2"] < 50, f"did not climb in 50 matches: {arena.ratings}"
        if "random@2" in arena.play_one():
            above = arena.ratings["random@2"].mu > arena.ratings["heuristic@1"].mu
            streak = streak + 1 if above else 0
    # Meanwhile the others played on: their order still holds, within 150 matches.
    r = arena.ratings
    assert r["copy@1"].mu < r["heuristic@1"].mu < r["ismcts@1"].mu, r
    assert arena.played <= 150


def test_a_new_version_keeps_mu_and_gets_its_uncertainty_back() -> None:
    settled = Rating(31.0, 1.5)
    start = next_version_rating(settled, MODEL)
    assert start.mu == 31.0
    assert start.sigma == MODEL.sigma * NEW_VERSION_SIGMA_SHARE
    assert next_version_rating(Rating(20.0, 8.0), MODEL).sigma == 8.0  # never lowered
    assert next_version_rating(None, MODEL) == MODEL.rating()


def test_tables_respect_the_cap_prefer_uncertain_and_close_players() -> None:
    rungs = [Rung("a@1", Rating(25, 8)), Rung("b@1", Rating(40, 2), playing=2),
             Rung("c@1", Rating(24, 3)), Rung("d@1", Rating(10, 3)),
             Rung("house:random", Rating(5, 1), house=True)]
    tables = pick_tables(rungs, players=2, max_concurrent=2, tables=10,
                         rng=random.Random(0))
    seats = [k for t in tables for k in t]
    assert "b@1" not in seats  # at its cap
    assert all(seats.count(k) <= 2 for k in ("a@1", "c@1", "d@1"))
    assert sorted(tables[0]) == ["a@1", "c@1"] or sorted(tables[0]) == ["a@1", "d@1"]
    assert all(len(set(t)) == 2 for t in tables)


def test_two_versions_of_one_agent_never_share_a_table() -> None:
    """The caller names each rung's agent; the ladder does not read it off the key."""
    rungs = [Rung("a@1", Rating(25, 8), agent_id="a"), Rung("a@2", Rating(25, 8), agent_id="a"),
             Rung("b@1", Rating(25, 8), agent_id="b")]
    tables = pick_tables(rungs, players=2, max_concurrent=5, tables=10, rng=random.Random(0))
    assert tables and all(sorted(t) != ["a@1", "a@2"] for t in tables)


def test_house_rungs_fill_only_when_agents_run_short() -> None:
    house = [Rung("house:random", Rating(15, 1), house=True),
             Rung("house:heuristic", Rating(30, 1), house=True)]
    alone = pick_tables([Rung("a@1", Rating(28, 8)), *house], players=3, max_concurrent=1,
                        tables=5, rng=random.Random(0))
    assert len(alone) == 1 and sorted(alone[0]) == ["a@1", "house:heuristic", "house:random"]
    many = pick_tables([Rung(f"x{i}@1", Rating(25, 8)) for i in range(6)] + house,
                       players=3, max_concurrent=1, tables=2, rng=random.Random(0))
    assert len(many) == 2 and not any(k.startswith("house:") for t in many for k in t)
    assert pick_tables(house, players=2, max_concurrent=1, tables=3,
                       rng=random.Random(0)) == []


def test_an_anchored_rung_keeps_its_rating_and_still_moves_its_opponents() -> None:
    from twistarena.league.anchors import ANCHOR_SIGMA, expected_win_share

    rung, agent = Rating(30.0, ANCHOR_SIGMA), MODEL.rating()
    pinned = rate_table(MODEL, [agent, rung], [1, 2], fixed=[False, True])
    free = rate_table(MODEL, [agent, rung], [1, 2])
    assert pinned[1] == rung and free[1] != rung
    assert pinned[0] == free[0] and pinned[0].mu > agent.mu
    # Stronger agents are expected to win more against the same rung.
    shares = [expected_win_share(mu, rung, 2) for mu in (20.0, 30.0, 40.0)]
    assert shares[0] < 0.5 < shares[2] and abs(shares[1] - 0.5) < 1e-9
