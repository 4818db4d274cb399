"""An arena and a tournament running through the campaign, and the check that
every rated match counts once in each.

Their tables are hosted agents' seats (instant bots, played by the runners)
and house bots: the nodes drive them under their leases while the nemesis
kills nodes, runners and the store. At the end the arena is paused and the
tournament cancelled, their live matches let finish, and their counts are
compared with the store's finished matches:

- the arena: its count (``matches_played``) is its rated matches, each of
  them FINISHED in the store (not voided) and once in each player's history,
  and no match of the arena is left unrated (live in the arena) once it is over;
- the tournament: every game with places is a FINISHED match, no match is two
  games, and each entrant's standing counts each game it sat in once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from twistarena.clients.sdk import AgentError, Backoff, MatchClient
from twistarena.clients.sdk.arenas import ArenaLadderClient
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.v1 import match_pb2
from twistarena.v1 import tournaments_pb2 as tpb

from .workload import GAME

#: New arena tables a minute (the runners also play the hosted practice matches).
ARENA_PER_MINUTE = 12
#: Tournament games at once.
TOURNAMENT_PARALLEL = 2
TOURNAMENT_OVER = (tpb.TOURNAMENT_FINISHED, tpb.TOURNAMENT_CANCELLED)


@dataclass
class League:
    """The campaign's arena and tournament over ``servers``, among ``agents``."""

    servers: Sequence[str]
    admin_token: str
    agents: Sequence[str]
    arena_id: str = ""
    tournament_id: str = ""

    def _arenas(self) -> ArenaLadderClient:
        return ArenaLadderClient(list(self.servers), admin_token=self.admin_token,
                                 backoff=Backoff(give_up_after=60.0))

    def _tournaments(self) -> TournamentClient:
        return TournamentClient(list(self.servers), admin_token=self.admin_token,
                                backoff=Backoff(give_up_after=60.0))

    async def open(self, duration: float) -> None:
        """The arena with every agent enrolled, and a round robin of the agents sized
        to last about the campaign (a game every few seconds)."""
        arenas = self._arenas()
        arena = await arenas.create(GAME[0], GAME[1], house=["random"],
                                    matches_per_minute=ARENA_PER_MINUTE)
        self.arena_id = arena.arena_id
        for agent_id in self.agents:
            await arenas.enroll(self.arena_id, agent_id)
        created = await self._tournaments().create(
            GAME[0], [f"agent:{a}" for a in self.agents], players=GAME[1],
            games_per_pairing=max(2, round(duration / 6)), parallel=TOURNAMENT_PARALLEL,
            decision_ms=10_000)
        self.tournament_id = created.tournament_id

    async def close(self, store: Any, timeout: float) -> bool:
        """The arena paused and the tournament cancelled (the load is over), then
        until the arena's live matches are over (rated, or dropped), at most
        ``timeout`` s. False when some were still live then. ``store``: a client
        of the store."""
        deadline = time.monotonic() + timeout
        with contextlib.suppress(AgentError):
            await self._arenas().set_paused(self.arena_id, True)
        tournaments = self._tournaments()
        with contextlib.suppress(AgentError):
            if (await tournaments.get(self.tournament_id)).status not in TOURNAMENT_OVER:
                await tournaments.cancel(self.tournament_id, "the campaign is over")
        while time.monotonic() < deadline:
            with contextlib.suppress(AgentError, OSError):
                if not await store.hlen(f"{{a:{self.arena_id}}}:live"):
                    return True
            await asyncio.sleep(1.0)
        return False


async def check_league(league: League, store: Any) -> tuple[dict[str, Any], list[str]]:
    """Counts of the arena and the tournament, and what does not add up (``store``:
    a client of the store, for the arena's histories)."""
    matches = MatchClient(list(league.servers), admin_token=league.admin_token,
                          backoff=Backoff(give_up_after=60.0))
    problems: list[str] = []
    arena = await league._arenas().get(league.arena_id)
    rated = {_text(m) for m in await store.zrange(f"{{a:{league.arena_id}}}:matches", 0, -1)}
    if arena.matches_played != len(rated):
        problems.append(f"arena {league.arena_id}: matches_played {arena.matches_played}, "
                        f"{len(rated)} rated matches stored")
    for mid in sorted(rated):
        if not await _finished(matches, mid):
            problems.append(f"arena {league.arena_id}: match {mid} rated but not FINISHED")
    for mid in sorted(map(_text, await store.hkeys(f"{{a:{league.arena_id}}}:live"))):
        if await _finished(matches, mid):
            problems.append(f"arena {league.arena_id}: FINISHED match {mid} never rated")
    players = await store.hkeys(f"{{a:{league.arena_id}}}:ratings")
    for player in players:
        name = _text(player)
        history = await store.lrange(f"{{a:{league.arena_id}}}:history:{name}", 0, -1)
        counted = Counter(_history_match(entry) for entry in history)
        twice = sorted(m for m, n in counted.items() if n > 1)
        if twice:
            problems.append(f"arena {league.arena_id}: {name} rated twice on {twice}")
    tournament = await league._tournaments().get(league.tournament_id)
    played = [g for g in tournament.games if g.match_id and g.places]
    by_match = Counter(g.match_id for g in played)
    problems += [f"tournament {league.tournament_id}: match {m} is {n} games"
                 for m, n in by_match.items() if n > 1]
    if tournament.games_done != len(played):
        problems.append(f"tournament {league.tournament_id}: games_done "
                        f"{tournament.games_done}, {len(played)} games with places")
    for game in played:
        if not await _finished(matches, game.match_id):
            problems.append(f"tournament {league.tournament_id}: game match {game.match_id} "
                            "counted but not FINISHED in the store")
    sat = Counter(e for g in played for e in set(g.seats))
    for row in tournament.standings:
        if row.games != sat[row.entrant]:
            problems.append(f"tournament {league.tournament_id}: {row.entrant} has "
                            f"{row.games} games in the standings, sat in {sat[row.entrant]}")
    counts = {"arena_id": league.arena_id, "arena_rated": len(rated),
              "tournament_id": league.tournament_id,
              "tournament_status": tpb.TournamentStatus.Name(tournament.status),
              "tournament_games": len(played)}
    return counts, problems


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def _history_match(entry: bytes | str) -> str:
    """The match id of one history entry (``[mu, sigma, match id]`` as JSON)."""
    return str(json.loads(_text(entry))[-1])


async def _finished(matches: MatchClient, match_id: str) -> bool:
    """Whether the store holds ``match_id`` FINISHED, and not voided."""
    try:
        stored = await matches.get_match(match_id)
    except AgentError:
        return False
    return stored.status == match_pb2.MATCH_STATUS_FINISHED and \
        stored.result.reason != match_pb2.END_REASON_VOIDED
