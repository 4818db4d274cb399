"""Schedules are complete and fair: seats, seatings, duplicate deals, Swiss pairing."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from twistarena.league import (
    games_for_tables,
    gauntlet,
    lineup,
    round_robin,
    seatings,
    swiss_tables,
)

ENTRANTS = ["a", "b", "c", "d", "e"]


@pytest.mark.parametrize("how", ["rotations", "permutations"])
@pytest.mark.parametrize(("entrants", "players"), [(ENTRANTS, 3), (ENTRANTS[:4], 4),
                                                   (ENTRANTS[:3], 2), (ENTRANTS, 2)])
def test_round_robin_every_entrant_in_every_seat_equally(entrants: list[str], players: int,
                                                          how: str) -> None:
    deals = 2
    games = round_robin(entrants, players, deals, seed=1, how=how)
    per_table = players if how == "rotations" else math.factorial(players)
    assert len(games) == math.comb(len(entrants), players) * per_table * deals
    seat_counts = Counter((name, seat) for g in games for seat, name in enumerate(g.seats))
    assert len(set(seat_counts.values())) == 1  # every (entrant, seat) equally often
    assert {name for name, _ in seat_counts} == set(entrants)
    # every entrant set meets
    sets = {frozenset(g.seats) for g in games}
    assert sets == {frozenset(c) for c in itertools.combinations(entrants, players)}
    assert all(len(set(g.seats)) == players for g in games)


def test_duplicate_deals_play_each_seed_in_every_rotation() -> None:
    games = round_robin(ENTRANTS[:4], 4, deals=3, seed=9)
    by_seed: dict[int, list[tuple[str, ...]]] = {}
    for g in games:
        by_seed.setdefault(g.seed, []).append(g.seats)
    assert len(by_seed) == 3
    for orders in by_seed.values():
        assert sorted(orders) == sorted(seatings(ENTRANTS[:4]))
        for seat in range(4):  # every entrant plays this hand from every seat
            assert {o[seat] for o in orders} == set(ENTRANTS[:4])
    blocks = Counter(g.block for g in games)
    assert len(blocks) == 3 and set(blocks.values()) == {4}


def test_non_duplicate_games_get_distinct_seeds_and_schedules_are_deterministic() -> None:
    games = round_robin(ENTRANTS, 3, deals=2, seed=5, duplicate=False)
    assert len({g.seed for g in games}) == len(games)
    assert games == round_robin(ENTRANTS, 3, deals=2, seed=5, duplicate=False)
    assert round_robin(ENTRANTS, 3, 2, seed=5) != round_robin(ENTRANTS, 3, 2, seed=6)


def test_gauntlet_puts_the_hero_at_every_table_in_every_seat() -> None:
    games = gauntlet("hero", ["x", "y", "z"], 3, deals=2, seed=3)
    assert all("hero" in g.seats for g in games)
    assert Counter(g.seats.index("hero") for g in games) == {0: 6, 1: 6, 2: 6}
    assert {frozenset(g.seats) - {"hero"} for g in games} == {
        frozenset(c) for c in itertools.combinations("xyz", 2)}
    with pytest.raises(ValueError):
        gauntlet("x", ["x", "y"], 2)


def test_lineup_fills_the_table() -> None:
    assert lineup(["i", "h", "r"], 4) == ["i", "h", "r", "r"]
    assert lineup(["i", "h"], 4, fill="h") == ["i", "h", "h", "h"]
    with pytest.raises(ValueError):
        lineup(["a", "b", "c"], 2)
    table = lineup(["i", "h", "r"], 4)
    games = games_for_tables([table], 2, seed=1)
    seat_counts = Counter((name, seat) for g in games for seat, name in enumerate(g.seats))
    assert all(seat_counts[(k, s)] == 2 for k in "ih" for s in range(4))


def test_swiss_pairs_neighbours_in_the_standings() -> None:
    order = ["a", "b", "c", "d", "e", "f"]
    tables, byes = swiss_tables(order, 2)
    assert tables == [["a", "b"], ["c", "d"], ["e", "f"]] and byes == []
    tables3, _ = swiss_tables(order, 3)
    assert tables3 == [["a", "b", "c"], ["d", "e", "f"]]


def test_swiss_avoids_repeats_while_possible() -> None:
    order = ["a", "b", "c", "d"]
    met = {frozenset("ab"), frozenset("cd")}
    tables, _ = swiss_tables(order, 2, met)
    assert tables == [["a", "c"], ["b", "d"]]
    met |= {frozenset("ac"), frozenset("bd")}
    tables, _ = swiss_tables(order, 2, met)
    assert tables == [["a", "d"], ["b", "c"]]
    met |= {frozenset("ad"), frozenset("bc")}  # everyone has met: repeats are unavoidable
    tables, _ = swiss_tables(order, 2, met)
    assert sorted(p for t in tables for p in t) == order


def test_swiss_rounds_have_no_repeats_for_a_field_that_allows_it() -> None:
    entrants = [f"p{i}" for i in range(8)]
    met: set[frozenset[str]] = set()
    for r in range(7):  # 8 players, 7 rounds: a round robin is possible
        order = entrants[r:] + entrants[:r]
        tables, byes = swiss_tables(order, 2, met)
        assert byes == []
        pairs = {frozenset(t) for t in tables}
        assert not pairs & met, f"round {r} repeats {pairs & met}"
        met |= pairs
    assert len(met) == 28


def test_swiss_byes_go_to_the_bottom_once_each() -> None:
    order = ["a", "b", "c", "d", "e"]
    tables, byes = swiss_tables(order, 2)
    assert byes == ["e"] and tables == [["a", "b"], ["c", "d"]]
    _, byes2 = swiss_tables(order, 2, byes=["e"])
    assert byes2 == ["d"]
