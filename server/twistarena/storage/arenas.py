"""Arenas in the store: their specs, one rating per player and version, each
rating's history, the leaderboard and the matches of each arena.

Keys (see ``keys``): ``twistarena:arenas`` (arena id -> its ``Arena`` message)
and, under the tag ``{a:<arena>}``, ``ratings`` (player key -> its row),
``board`` (player shown on the leaderboard -> conservative rating),
``current`` (agent -> the version it plays), ``history:<player key>``,
``rated`` (match ids already rated: a result is applied once), ``matches``
(match id -> end ms), ``agent:<agent>`` (that agent's matches), ``tables`` (each rated match's
players and places), ``enrolled``
(agents that play in it), ``live`` (its unrated matches and their players)
and ``owner`` (the lease of the node scheduling it, the same lease as a
tournament's). One arena's keys share a slot, so a result is rated in one
WATCH/MULTI.

A player key is ``AGENT@VERSION`` (``house:BOT@0`` for a house rung; ``player_key``,
``split_player``, ``house_player`` and ``house_bot`` are the only code that
writes or reads one). What the
ratings mean (where a new version starts, which results count) is decided by
the server with ``twistarena.league``; this module stores numbers.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from redis.exceptions import WatchError
from twistarena.v1 import arenas_pb2 as apb

from . import keys
from .connection import Connections, StorePart
from .errors import StoreError, driver_errors
from .leases import Holder, Leases
from .replies import text
from .scripts import Scripts

#: Rating points kept per player (older ones are trimmed).
HISTORY_KEPT = 200
#: Matches kept per agent and arena for its recent matches.
AGENT_MATCHES_KEPT = 1000
#: Optimistic rating updates give up after this many conflicting writers.
RATE_ATTEMPTS = 20
#: A scheduler's lease; it renews every second, so a dead node is replaced within this.
LEASE_MS = 3000


@dataclass(slots=True)
class RatingRow:
    """One player's rating in one arena, as stored."""

    mu: float
    sigma: float
    games: int = 0
    wins: int = 0
    last_match_id: str = ""
    last_ms: int = 0


#: (current rows of the table's players, None when unrated) -> their new rows.
TableUpdate = Callable[[dict[str, RatingRow | None], dict[str, RatingRow | None]],
                       dict[str, RatingRow]]


#: Between a player key's agent and version (agent ids and house bots never hold it).
_VERSION_MARK = "@"
#: A house rung's agent id is this prefix and its bot (rated as version 0: it has
#: no versions).
HOUSE_PREFIX = "house:"


def player_key(agent_id: str, version: int) -> str:
    """The rated player: one agent's one version (0: a network agent, a house rung)."""
    return f"{agent_id}{_VERSION_MARK}{version}"


def split_player(key: str) -> tuple[str, int]:
    """``(agent id, version)`` of a player key (``player_key`` read back)."""
    agent_id, _, version = key.rpartition(_VERSION_MARK)
    return agent_id, int(version or 0)


def house_player(bot: str) -> str:
    """The player key of the house rung that plays ``bot``."""
    return player_key(HOUSE_PREFIX + bot, 0)


def house_bot(agent_id: str) -> str:
    """The bot a house rung's agent id names ('house:random' -> 'random'); "" for an agent."""
    return agent_id.removeprefix(HOUSE_PREFIX) if agent_id.startswith(HOUSE_PREFIX) else ""


def _row(raw: Any) -> RatingRow | None:
    return None if raw is None else RatingRow(**json.loads(raw))


class ArenaStore(StorePart):
    """Arena specs, ratings, histories, leaderboards and match indexes."""

    def __init__(self, conn: Connections, scripts: Scripts, holder: Holder) -> None:
        super().__init__(conn)
        #: The lease of the node that schedules an arena (one node at a time).
        self.leases = Leases(conn, scripts, replace(holder, lease_ms=LEASE_MS),
                             keys.arena_lease)

    # -- specs ---------------------------------------------------------------
    async def create(self, arena: apb.Arena) -> bool:
        """Store a new arena; False if one with its id exists."""
        with driver_errors():
            return bool(await self._redis.hsetnx(keys.ARENAS, arena.arena_id,
                                                 arena.SerializeToString()))

    async def put(self, arena: apb.Arena) -> None:
        """Replace an arena's spec (its status)."""
        with driver_errors():
            await self._redis.hset(keys.ARENAS, arena.arena_id, arena.SerializeToString())

    async def get(self, arena_id: str) -> apb.Arena | None:
        """One arena, None if unknown."""
        with driver_errors():
            raw: Any = await self._redis.hget(keys.ARENAS, arena_id)
        return apb.Arena.FromString(raw) if raw else None

    async def all(self) -> list[apb.Arena]:
        """Every arena, by id."""
        with driver_errors():
            raw: Any = await self._redis.hgetall(keys.ARENAS)
        return sorted((apb.Arena.FromString(v) for v in raw.values()),
                      key=lambda a: a.arena_id)

    async def counts(self, arena_id: str) -> tuple[int, int, int]:
        """(rated matches, rated players, enrolled agents) of an arena."""
        matches, players, enrolled = await self._read_together(
            ("SCARD", keys.arena_rated(arena_id)), ("HLEN", keys.arena_ratings(arena_id)),
            ("SCARD", keys.arena_enrolled(arena_id)))
        return int(matches), int(players), int(enrolled)

    # -- enrolment and live matches -----------------------------------------
    async def enroll(self, arena_id: str, agent_id: str, enrolled: bool = True) -> None:
        """Enroll an agent in the arena (or withdraw it)."""
        with driver_errors():
            if enrolled:
                await self._redis.sadd(keys.arena_enrolled(arena_id), agent_id)
            else:
                await self._redis.srem(keys.arena_enrolled(arena_id), agent_id)

    async def enrolled_in(self, arena_ids: Sequence[str], agent_id: str) -> list[str]:
        """The arenas among ``arena_ids`` the agent is enrolled in."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for arena_id in arena_ids:
                pipe.sismember(keys.arena_enrolled(arena_id), agent_id)
            found = await pipe.execute()
        return [a for a, member in zip(arena_ids, found, strict=True) if member]

    async def enrolled(self, arena_id: str) -> list[str]:
        """The agents enrolled in the arena, sorted."""
        with driver_errors():
            raw: Any = await self._redis.smembers(keys.arena_enrolled(arena_id))
        return sorted(text(a) for a in raw)

    async def add_live(self, arena_id: str, match_id: str, players: Sequence[str]) -> None:
        """Note a match of the arena before it is created (its players per seat)."""
        with driver_errors():
            await self._redis.hset(keys.arena_live(arena_id), match_id, json.dumps(players))

    async def live(self, arena_id: str) -> dict[str, list[str]]:
        """The arena's matches not rated yet -> their players per seat."""
        with driver_errors():
            raw: Any = await self._redis.hgetall(keys.arena_live(arena_id))
        return {text(k): json.loads(v) for k, v in raw.items()}

    async def drop_live(self, arena_id: str, match_id: str) -> None:
        """Forget a live match (rated, or never created)."""
        with driver_errors():
            await self._redis.hdel(keys.arena_live(arena_id), match_id)

    # -- ratings -------------------------------------------------------------
    async def rows(self, arena_id: str, players: Sequence[str]) -> list[RatingRow | None]:
        """The rows of ``players`` in order (None: not rated yet)."""
        if not players:
            return []
        with driver_errors():
            raw: Any = await self._redis.hmget(keys.arena_ratings(arena_id), list(players))
        return [_row(r) for r in raw]

    async def current_versions(self, arena_id: str, agents: Sequence[str]) -> list[int | None]:
        """The version each agent last played in the arena (None: never)."""
        if not agents:
            return []
        with driver_errors():
            raw: Any = await self._redis.hmget(keys.arena_current(arena_id), list(agents))
        return [None if r is None else int(r) for r in raw]

    async def rate(self, arena_id: str, match_id: str, ended_ms: int, players: Sequence[str],
                   places: Sequence[int], update: TableUpdate) -> bool:
        """Apply one match's result once: read the table's rows and the rows of
        the agents' previous versions, write what ``update`` makes of them, their
        history points, the leaderboard and the match indexes, atomically.
        False if the match was rated already; ``StoreError`` if concurrent writers
        kept conflicting."""
        ratings, rated = keys.arena_ratings(arena_id), keys.arena_rated(arena_id)
        current = keys.arena_current(arena_id)
        agents = [split_player(p)[0] for p in players]
        for _attempt in range(RATE_ATTEMPTS):
            with driver_errors():
                async with self._redis.pipeline(transaction=True) as pipe:
                    try:
                        await pipe.watch(ratings, rated, current)
                        if await pipe.sismember(rated, match_id):
                            return False
                        rows = [_row(r) for r in await pipe.hmget(ratings, list(players))]
                        versions: Any = await pipe.hmget(current, agents)
                        previous_keys = [player_key(a, int(v)) if v is not None else ""
                                         for a, v in zip(agents, versions, strict=True)]
                        previous_rows = await pipe.hmget(ratings, [k or "-" for k in
                                                                   previous_keys])
                        news = update(dict(zip(players, rows, strict=True)),
                                      {p: _row(r) if k and k != p else None
                                       for p, k, r in zip(players, previous_keys,
                                                          previous_rows, strict=True)})
                        pipe.multi()
                        self._write(pipe, arena_id, match_id, ended_ms, news, previous_keys)
                        pipe.hset(keys.arena_tables(arena_id), match_id, json.dumps(
                            {"players": list(players), "places": list(places)}))
                        await pipe.execute()
                        return True
                    except WatchError:
                        pass
            await asyncio.sleep(0.01 * random.random())
        raise StoreError(f"rating match {match_id} of arena {arena_id} kept conflicting")

    def _write(self, pipe: Any, arena_id: str, match_id: str, ended_ms: int,
               news: dict[str, RatingRow], previous_keys: Sequence[str]) -> None:
        board = keys.arena_board(arena_id)
        for key in previous_keys:
            if key and key not in news:
                pipe.zrem(board, key)  # the agent's new version replaces it
        for key, row in news.items():
            agent_id, version = split_player(key)
            pipe.hset(keys.arena_ratings(arena_id), key, json.dumps(asdict(row)))
            pipe.zadd(board, {key: row.mu - 3.0 * row.sigma})
            pipe.hset(keys.arena_current(arena_id), agent_id, version)
            history = keys.arena_history(arena_id, key)
            pipe.rpush(history, json.dumps([round(row.mu, 4), round(row.sigma, 4), match_id]))
            pipe.ltrim(history, -HISTORY_KEPT, -1)
            mine = keys.arena_agent_matches(arena_id, agent_id)
            pipe.zadd(mine, {match_id: ended_ms})
            pipe.zremrangebyrank(mine, 0, -AGENT_MATCHES_KEPT - 1)
        pipe.sadd(keys.arena_rated(arena_id), match_id)
        pipe.zadd(keys.arena_matches(arena_id), {match_id: ended_ms})

    # -- reading -------------------------------------------------------------
    async def board(self, arena_id: str, offset: int,
                    count: int) -> tuple[list[tuple[str, RatingRow]], int]:
        """One page of the leaderboard, best first, and the board's size."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            pipe.zrevrange(keys.arena_board(arena_id), offset, offset + count - 1)
            pipe.zcard(keys.arena_board(arena_id))
            members, size = await pipe.execute()
        names = [text(m) for m in members]
        rows = await self.rows(arena_id, names)
        return [(k, r) for k, r in zip(names, rows, strict=True) if r is not None], int(size)

    async def history(self, arena_id: str,
                      players: Sequence[str]) -> list[list[tuple[float, float, str]]]:
        """Each player's rating points, oldest first."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for key in players:
                pipe.lrange(keys.arena_history(arena_id, key), 0, -1)
            raw = await pipe.execute()
        return [[tuple(json.loads(p)) for p in points] for points in raw]

    async def player_keys(self, arena_id: str, agent_id: str) -> list[str]:
        """Every version of ``agent_id`` rated in the arena (HSCAN of its row keys)."""
        found: list[str] = []
        with driver_errors():
            async for key, _row_json in self._redis.hscan_iter(
                    keys.arena_ratings(arena_id), match=f"{agent_id}{_VERSION_MARK}*", count=500):
                found.append(text(key))
        return sorted(found, key=lambda k: split_player(k)[1])

    async def match_page(self, arena_id: str, agent_id: str, offset: int,
                         count: int) -> list[tuple[str, int]]:
        """(match id, end ms) of the arena's rated matches, or of one agent's
        there (``agent_id``), newest first."""
        key = (keys.arena_agent_matches(arena_id, agent_id) if agent_id
               else keys.arena_matches(arena_id))
        with driver_errors():
            raw: Any = await self._redis.zrevrange(key, offset, offset + count - 1,
                                                   withscores=True)
        return [(text(m), int(ms)) for m, ms in raw]

    async def match_times(self, arena_id: str, match_ids: Sequence[str]) -> list[int]:
        """When each rated match of the arena ended (ms; 0: not rated here)."""
        if not match_ids:
            return []
        with driver_errors():
            raw: Any = await self._redis.zmscore(keys.arena_matches(arena_id), list(match_ids))
        return [0 if ms is None else int(ms) for ms in raw]

    async def tables(self, arena_id: str,
                     match_ids: Sequence[str]) -> list[tuple[list[str], list[int]] | None]:
        """(player keys, places) per seat of rated matches (None: not rated here)."""
        if not match_ids:
            return []
        with driver_errors():
            raw: Any = await self._redis.hmget(keys.arena_tables(arena_id), list(match_ids))
        out: list[tuple[list[str], list[int]] | None] = []
        for one in raw:
            table = None if one is None else json.loads(one)
            out.append(None if table is None else (table["players"], table["places"]))
        return out

    async def in_arena(self, arena_id: str, agent_ids: Sequence[str]) -> list[bool]:
        """Which agents have played in the arena."""
        if not agent_ids:
            return []
        with driver_errors():
            raw: Any = await self._redis.hmget(keys.arena_current(arena_id), list(agent_ids))
        return [r is not None for r in raw]
