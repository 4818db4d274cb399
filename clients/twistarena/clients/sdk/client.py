"""Match lifecycle and spectator calls (create, get, list, cancel, replay, watch).

Hosts and the command line use these; like agents they accept a list of
servers and fail over between them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import grpc
import grpc.aio
from twistarena.v1 import match_pb2, match_pb2_grpc, play_pb2, play_pb2_grpc

from .connection import ServiceClient, stub
from .convert import set_seed_and_game_options

FALLBACKS: dict[str, match_pb2.Fallback] = {"random": match_pb2.FALLBACK_RANDOM,
                                            "forfeit": match_pb2.FALLBACK_FORFEIT}
STATUS_NAMES = {"waiting": match_pb2.MATCH_STATUS_WAITING,
                "running": match_pb2.MATCH_STATUS_RUNNING,
                "finished": match_pb2.MATCH_STATUS_FINISHED,
                "cancelled": match_pb2.MATCH_STATUS_CANCELLED}


class MatchClient(ServiceClient):
    """Unary match calls and the Watch stream against one or more servers."""

    STUB = match_pb2_grpc.MatchesStub

    async def create_match(
        self, game_id: str, num_players: int, *, seed: int | None = None,
        decision_ms: int = 0, game_options: Mapping[str, Any] | None = None,
        seat_names: Sequence[str] = (), house_bots: Sequence[str] = (),
        fallback: str = "", forfeit_after: int = 0, reconnect_grace_ms: int = 0,
        join_timeout_ms: int = 0,
    ) -> match_pb2.CreateMatchResponse:
        """Create a match; the response holds its record and one token per remote seat."""
        seats = []
        if seat_names or house_bots:
            for i in range(num_players):
                name = seat_names[i] if i < len(seat_names) else ""
                bot = house_bots[i] if i < len(house_bots) else ""
                seats.append(match_pb2.SeatSpec(name=name, house_bot=bot))
        options = match_pb2.MatchOptions(
            game_id=game_id, num_players=num_players, seats=seats,
            time_control=match_pb2.TimeControl(
                decision_ms=decision_ms,
                fallback=FALLBACKS.get(fallback, match_pb2.FALLBACK_UNSPECIFIED),
                forfeit_after=forfeit_after, reconnect_grace_ms=reconnect_grace_ms,
                join_timeout_ms=join_timeout_ms),
        )
        set_seed_and_game_options(options, seed, game_options)
        response: match_pb2.CreateMatchResponse = await self._create(
            "CreateMatch", match_pb2.CreateMatchRequest(options=options))
        return response

    async def get_match(self, match_id: str) -> match_pb2.Match:
        match: match_pb2.Match = await self._unary(
            "GetMatch", match_pb2.GetMatchRequest(match_id=match_id))
        return match

    async def list_matches(self, game_id: str = "", statuses: Sequence[str] = (),
                           limit: int = 50, arena_id: str = "",
                           agent_id: str = "") -> list[match_pb2.Match]:
        """Newest first, following page tokens up to ``limit`` matches; ``arena_id``
        and ``agent_id``: only the rated matches of an arena, of an agent."""
        wanted = [STATUS_NAMES[s.lower()] for s in statuses]
        out: list[match_pb2.Match] = []
        token = ""
        while len(out) < limit:
            page: match_pb2.ListMatchesResponse = await self._unary(
                "ListMatches", match_pb2.ListMatchesRequest(
                    game_id=game_id, statuses=wanted, page_size=min(500, limit - len(out)),
                    page_token=token, arena_id=arena_id, agent_id=agent_id))
            out.extend(page.matches)
            token = page.next_page_token
            if not token or not page.matches:
                break
        return out[:limit]

    async def cancel_match(self, match_id: str, reason: str = "") -> match_pb2.Match:
        match: match_pb2.Match = await self._unary(
            "CancelMatch", match_pb2.CancelMatchRequest(match_id=match_id, reason=reason))
        return match

    async def get_replay(self, match_id: str) -> match_pb2.Replay:
        replay: match_pb2.Replay = await self._unary(
            "GetReplay", match_pb2.GetReplayRequest(match_id=match_id))
        return replay

    async def watch(self, match_id: str, from_seq: int = 0) -> AsyncIterator[play_pb2.WatchMessage]:
        """Spectator messages until MatchOver; reconnects (following the owner a
        refusal names, sparing a server for its retry hint) and resumes after the
        last event."""
        next_seq = from_seq

        def open_watch(channel: grpc.aio.Channel) -> AsyncIterator[play_pb2.WatchMessage]:
            return stub(play_pb2_grpc.WatchStub, channel).Watch(  # type: ignore[no-any-return]
                play_pb2.WatchRequest(match_id=match_id, from_seq=next_seq))

        async with self._follow(open_watch, f"watch {match_id}") as messages:
            async for _address, msg in messages:
                kind = msg.WhichOneof("msg")
                if kind == "event":
                    if msg.event.seq < next_seq:
                        continue
                    next_seq = msg.event.seq + 1
                yield msg
                if kind == "match_over":
                    return
