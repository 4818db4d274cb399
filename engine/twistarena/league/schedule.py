"""Who plays whom, in which seat, on which deal. Pure functions of their inputs.

A *table* is an ordered group of entrants; a table is played as several games,
one per *seating* (the entrants rotated, or permuted, around the seats) on each
*deal* (a seed). With duplicate deals every seating of a table gets the same
seeds, so every entrant plays every hand from every seat and the luck of the
cards cancels out, as in duplicate bridge.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: How a table's entrants go round the seats: N rotations, or all N! orders.
SEATINGS = ("rotations", "permutations")


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game to play: ``seats[i]`` is the entrant in seat ``i``.

    ``deal`` names the hand being played (games of the same table and deal share
    ``seed`` when dealing is duplicate); results are paired per (round, table, deal).
    """

    round: int
    table: int
    deal: int
    seed: int
    seats: tuple[str, ...]

    @property
    def block(self) -> str:
        """Key of the games that share a hand: the unit of paired comparisons."""
        return f"{self.round}/{self.table}/{self.deal}"


def seatings(table: Sequence[str], how: str = "rotations") -> list[tuple[str, ...]]:
    """The orders of ``table`` round the seats: each entrant once in every seat
    (rotations) or every order (permutations); duplicates removed, order kept."""
    if how == "rotations":
        orders = [tuple(table[i:]) + tuple(table[:i]) for i in range(len(table))]
    elif how == "permutations":
        orders = list(itertools.permutations(table))
    else:
        raise ValueError(f"seatings must be one of {SEATINGS}, got {how!r}")
    return list(dict.fromkeys(orders))


def deal_seed(base: int, *parts: int) -> int:
    """A seed for one deal, derived from the tournament seed and the deal's position."""
    rng = random.Random("/".join(str(x) for x in (base, *parts)))  # str seeds are stable
    return rng.getrandbits(48)


def games_for_tables(tables: Sequence[Sequence[str]], deals: int, seed: int, round_no: int = 0,
                     how: str = "rotations", duplicate: bool = True) -> list[ScheduledGame]:
    """Every seating of every table on ``deals`` deals. With ``duplicate`` the seatings
    of one deal share its seed; without it each game has its own seed."""
    if deals < 1:
        raise ValueError("deals must be at least 1")
    out: list[ScheduledGame] = []
    for t, table in enumerate(tables):
        orders = seatings(table, how)
        for d in range(deals):
            for k, order in enumerate(orders):
                s = deal_seed(seed, round_no, t, d) if duplicate else deal_seed(
                    seed, round_no, t, d, k + 1)
                out.append(ScheduledGame(round_no, t, d, s, order))
    return out


def round_robin(entrants: Sequence[str], num_players: int, deals: int = 1, seed: int = 0,
                how: str = "rotations", duplicate: bool = True) -> list[ScheduledGame]:
    """Every set of ``num_players`` distinct entrants meets at a table, in every
    seating, on ``deals`` deals each: every entrant sits in every seat equally often."""
    _check_entrants(entrants, num_players)
    tables = [list(c) for c in itertools.combinations(entrants, num_players)]
    return games_for_tables(tables, deals, seed, 0, how, duplicate)


def gauntlet(hero: str, field: Sequence[str], num_players: int, deals: int = 1, seed: int = 0,
             how: str = "rotations", duplicate: bool = True) -> list[ScheduledGame]:
    """``hero`` meets every group of ``num_players - 1`` entrants of ``field``."""
    if hero in field:
        raise ValueError(f"{hero!r} is both the hero and in the field")
    _check_entrants([hero, *field], num_players)
    tables = [[hero, *c] for c in itertools.combinations(field, num_players - 1)]
    return games_for_tables(tables, deals, seed, 0, how, duplicate)


def lineup(kinds: Sequence[str], num_players: int, fill: str | None = None) -> list[str]:
    """A table of ``num_players`` seats from fewer ``kinds``: one seat each, the rest
    filled with ``fill`` (default: the last kind). Used to evaluate bot kinds."""
    if not kinds:
        raise ValueError("no entrants")
    if len(kinds) > num_players:
        raise ValueError("more kinds than seats: use round_robin")
    extra = fill if fill is not None else kinds[-1]
    return [*kinds, *[extra] * (num_players - len(kinds))]


def swiss_tables(order: Sequence[str], num_players: int,
                 met: Iterable[frozenset[str]] = (), byes: Iterable[str] = (),
                 max_nodes: int = 20000) -> tuple[list[list[str]], list[str]]:
    """One Swiss round: tables of ``num_players`` from entrants sorted best first.

    Neighbours in the standings meet, with as few repeated pairs (two entrants
    who already shared a table) as possible: a depth-first search in standing
    order accepts the first complete round with no repeats, else the fewest.
    When the field does not divide into tables, the lowest-placed entrants who
    have not had a bye sit out. Returns (tables, entrants with a bye).
    """
    _check_entrants(order, num_players)
    met_pairs = set(met)
    had_bye = set(byes)
    spare = len(order) % num_players
    sitting_out: list[str] = []
    if spare:
        for name in reversed(order):
            if len(sitting_out) < spare and name not in had_bye:
                sitting_out.append(name)
        for name in reversed(order):  # everyone had one: start again from the bottom
            if len(sitting_out) < spare and name not in sitting_out:
                sitting_out.append(name)
    players = [p for p in order if p not in sitting_out]

    best: tuple[int, list[list[str]]] | None = None
    nodes = 0

    def repeats(group: Sequence[str]) -> int:
        return sum(1 for a, b in itertools.combinations(group, 2)
                   if frozenset((a, b)) in met_pairs)

    def search(rest: list[str], tables: list[list[str]], cost: int) -> bool:
        nonlocal best, nodes
        if best is not None and cost >= best[0]:
            return False
        if not rest:
            best = (cost, [list(t) for t in tables])
            return cost == 0
        nodes += 1
        if nodes > max_nodes:
            return best is not None
        head, others = rest[0], rest[1:]
        for partners in itertools.combinations(others, num_players - 1):
            group = [head, *partners]
            left = [p for p in others if p not in partners]
            if search(left, [*tables, group], cost + repeats(group)):
                return True
        return False

    search(players, [], 0)
    assert best is not None
    return best[1], sitting_out


def _check_entrants(entrants: Sequence[str], num_players: int) -> None:
    if num_players < 1:
        raise ValueError("num_players must be at least 1")
    if len(set(entrants)) != len(entrants):
        raise ValueError("entrant names must be distinct")
    if len(entrants) < num_players:
        raise ValueError(f"{len(entrants)} entrants cannot fill a table of {num_players}")
