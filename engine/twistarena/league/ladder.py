"""The ladder of an arena, as pure logic: who plays whom next, and how a result
moves the ratings. The server's arena scheduler and in-process evaluations
both call these functions, so what a test measures here is what the arena does.

An arena is one game and player count. Everyone in it holds one rating per
arena *and per version* (an agent's new version is a new player that inherits
a head start, see ``next_version_rating``); house rungs (the server's own bots)
never change code: calibrated ones hold a fixed rating (``anchors``) that
results never move, so they anchor the scale and show where a newcomer stands.

Rules, decided here and documented in docs/arenas.md:

- Ranking: the conservative ``mu - 3 sigma`` (``Rating.conservative``).
- A new version starts from its previous version's ``mu`` with ``sigma``
  raised to at least ``NEW_VERSION_SIGMA_SHARE`` of a newcomer's: it keeps
  its place to begin with, yet moves fast if the new code plays differently.
- Results: a finished match is rated by its places, a forfeit included (the
  result already puts the forfeiting seat last: a crash or a timeout is the
  agent's loss). A voided or cancelled match (not finished) changes no
  rating: nobody's play decided it.
- Tables: the most uncertain player (highest ``sigma``, then fewest games)
  picks first, and its opponents are the closest in ``mu`` among those with a
  free slot (a player is in at most ``max_concurrent`` live matches); house
  rungs fill a table only when too few agents are free.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .ratings import PlackettLuce, Rating

#: A new version's sigma is at least this share of a newcomer's.
NEW_VERSION_SIGMA_SHARE = 0.75
#: Opponents are drawn among this many closest candidates (variety of pairings).
CLOSEST = 2


@dataclass(frozen=True, slots=True)
class Rung:
    """One player of an arena as the scheduler sees it."""

    #: The rated player: ``AGENT@VERSION`` for an agent's version, ``house:BOT``.
    key: str
    rating: Rating
    games: int = 0
    #: Matches it is playing now.
    playing: int = 0
    house: bool = False
    #: The agent whose version this is, which a table seats once ("": the rung is
    #: its own agent, as a house rung is). The caller says it: the key's format
    #: is the store's to read.
    agent_id: str = ""

    @property
    def agent(self) -> str:
        """The agent a table seats at most once (a house rung: itself)."""
        return self.agent_id or self.key


def next_version_rating(previous: Rating | None, model: PlackettLuce) -> Rating:
    """Where a new version starts: its previous version's ``mu``, ``sigma`` raised."""
    if previous is None:
        return model.rating()
    return Rating(previous.mu, max(previous.sigma, model.sigma * NEW_VERSION_SIGMA_SHARE))


def rate_table(model: PlackettLuce, ratings: Sequence[Rating], places: Sequence[int],
               fixed: Sequence[bool] = ()) -> list[Rating]:
    """Every seat's new rating after one finished match of the arena; a ``fixed``
    seat (an anchored house rung) keeps its rating and moves the others as any
    opponent of that rating would."""
    after = model.rate(ratings, places)
    return [before if pinned else new for before, new, pinned
            in zip(ratings, after, [*fixed, *[False] * (len(ratings) - len(fixed))],
                   strict=True)]


def _priority(rung: Rung) -> tuple[float, int]:
    return (-rung.rating.sigma, rung.games)


def pick_tables(rungs: Sequence[Rung], players: int, max_concurrent: int, tables: int,
                rng: random.Random) -> list[list[str]]:
    """Up to ``tables`` new tables of ``players`` keys each (seat order shuffled).

    Never seats a player twice at one table nor beyond ``max_concurrent`` live
    matches (house rungs have no cap: the server plays them); a table needs at
    least one agent (house rungs alone teach the ladder nothing)."""
    free = {r.key: (max_concurrent - r.playing) for r in rungs if not r.house}
    by_key = {r.key: r for r in rungs}
    out: list[list[str]] = []
    agents = sorted((r for r in rungs if not r.house), key=_priority)
    for first in agents:
        while len(out) < tables and free[first.key] > 0:
            table = _table_for(first, by_key, free, players, rng)
            if table is None:
                break
            for key in table:
                if key in free:
                    free[key] -= 1
            rng.shuffle(table)
            out.append(table)
        if len(out) >= tables:
            break
    return out


def _table_for(first: Rung, by_key: dict[str, Rung], free: dict[str, int], players: int,
               rng: random.Random) -> list[str] | None:
    """``first`` and its closest free opponents: agents first, then house rungs."""
    table = [first.key]
    agents_in = {first.agent}

    def closest(pool: list[Rung]) -> list[Rung]:
        return sorted(pool, key=lambda r: abs(r.rating.mu - first.rating.mu))

    agents = [r for r in by_key.values() if not r.house and free[r.key] > 0]
    house = [r for r in by_key.values() if r.house]
    for pool in (agents, house):
        while len(table) < players:
            candidates = closest([r for r in pool if r.key not in table
                                  and (r.house or r.agent not in agents_in)])
            if not candidates:
                break
            chosen = rng.choice(candidates[:CLOSEST])
            table.append(chosen.key)
            agents_in.add(chosen.agent)
    return table if len(table) == players else None
