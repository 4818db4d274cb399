"""Tournaments run by the server: create, follow, export."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio
from twistarena import wire
from twistarena.league import GameResult, Standing
from twistarena.league.standings import per_block
from twistarena.v1 import match_pb2, tournaments_pb2, tournaments_pb2_grpc

from .connection import AgentError, Backoff, ServiceClient, stub
from .convert import set_seed_and_game_options

FORMATS: dict[str, tournaments_pb2.TournamentFormat] = {
    "round-robin": tournaments_pb2.ROUND_ROBIN, "swiss": tournaments_pb2.SWISS,
    "gauntlet": tournaments_pb2.GAUNTLET}


class TournamentClient(ServiceClient):
    """Tournament calls against one or more servers (failing over like agents do)."""

    STUB = tournaments_pb2_grpc.TournamentsStub
    RETRY_ON = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNKNOWN})

    async def create(self, game: str, entrants: Sequence[str], *, players: int = 0,
                     format: str = "round-robin", rounds: int = 0, games_per_pairing: int = 1,
                     duplicate: bool = False, seed: int | None = None, decision_ms: int = 0,
                     parallel: int = 0, join_timeout_ms: int = 0,
                     game_options: Mapping[str, Any] | None = None) -> tournaments_pb2.Tournament:
        spec = tournaments_pb2.TournamentSpec(
            game_id=game, num_players=players, format=FORMATS[format], rounds=rounds,
            games_per_pairing=games_per_pairing, duplicate_deals=duplicate,
            entrants=list(entrants), parallel=parallel,
            time_control=match_pb2.TimeControl(decision_ms=decision_ms,
                                               join_timeout_ms=join_timeout_ms))
        set_seed_and_game_options(spec, seed, game_options)
        created: tournaments_pb2.Tournament = await self._create(
            "CreateTournament", tournaments_pb2.CreateTournamentRequest(spec=spec))
        return created

    async def get(self, tournament_id: str) -> tournaments_pb2.Tournament:
        found: tournaments_pb2.Tournament = await self._unary(
            "GetTournament", tournaments_pb2.GetTournamentRequest(tournament_id=tournament_id))
        return found

    async def list(self, limit: int = 50) -> list[tournaments_pb2.Tournament]:
        page: tournaments_pb2.ListTournamentsResponse = await self._unary(
            "ListTournaments", tournaments_pb2.ListTournamentsRequest(page_size=limit))
        return list(page.tournaments)

    async def entrant_names(self, entrants: Sequence[str]) -> dict[str, str]:
        """Display names: a registered or hosted agent's name (its id when unknown);
        house bots are their own name."""
        from .matchmaking import get_agent

        names = {}
        for entrant in entrants:
            names[entrant] = entrant
            agent_id = entrant.removeprefix("agent:")  # a hosted agent: agent:ID
            if agent_id.startswith("ag_"):
                try:
                    info = await get_agent(self.servers, agent_id)
                except AgentError:
                    continue
                names[entrant] = info.name or entrant
        return names

    async def cancel(self, tournament_id: str, reason: str = "") -> tournaments_pb2.Tournament:
        done: tournaments_pb2.Tournament = await self._unary(
            "CancelTournament", tournaments_pb2.CancelTournamentRequest(
                tournament_id=tournament_id, reason=reason))
        return done

    async def watch(self, tournament_id: str,
                    give_up_after: float = 120.0) -> AsyncIterator[tournaments_pb2.Tournament]:
        """The record after every finished game, until the tournament is over; the
        stream is re-opened (on the next server) after a failure."""
        def open_watch(channel: grpc.aio.Channel) -> AsyncIterator[tournaments_pb2.Tournament]:
            return stub(  # type: ignore[no-any-return]
                tournaments_pb2_grpc.TournamentsStub, channel).WatchTournament(
                tournaments_pb2.WatchTournamentRequest(tournament_id=tournament_id))

        async with self._follow(open_watch, "watch tournament",
                                Backoff(give_up_after=give_up_after)) as records:
            async for _address, record in records:
                yield record
                if record.status in wire.TOURNAMENT_OVER:
                    return


def standings_of(record: tournaments_pb2.Tournament) -> list[Standing]:
    """The record's standings as ``twistarena.league.Standing`` values; ``blocks``
    (the deals each entrant played, every seating of a duplicate deal counting
    once) from the played games."""
    blocks = per_block(results_of(record))
    return [Standing(entrant=r.entrant, games=r.games, blocks=len(blocks.get(r.entrant, {})),
                     mean_score=r.mean_score,
                     score_ci_low=r.score_ci_low, score_ci_high=r.score_ci_high, wins=r.wins,
                     win_share=r.win_share, win_ci_low=r.win_ci_low, win_ci_high=r.win_ci_high,
                     mean_place=r.mean_place, mu=r.mu, sigma=r.sigma,
                     conservative=r.conservative) for r in record.standings]


def results_of(record: tournaments_pb2.Tournament) -> list[GameResult]:
    """The played games as ``GameResult`` values, in schedule order."""
    return [GameResult(g.round, g.table, g.deal, g.seed, tuple(g.seats), tuple(g.scores),
                       tuple(g.places)) for g in record.games if g.places]
