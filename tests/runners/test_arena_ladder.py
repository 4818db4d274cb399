"""The arena of a real server plays real matches between hosted agents.

Real parts: ``twistarena serve --arena twisted:2`` as a subprocess on its own
Valkey with its runner processes (the sandbox); agents registered, their
versions stored, enrolled with ``twistarena arena enroll``; the arena's
scheduler seats them and the leaderboard is read over gRPC and with
``twistarena arena show``. The ranking the ladder reaches is checked in
tests/league/test_ladder.py; here, that the server's arena plays and rates.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from twistarena.clients.cli import main as cli
from twistarena.clients.sdk import MatchClient, register_agent
from twistarena.clients.sdk.arenas import ArenaLadderClient
from twistarena.clients.sdk.matchmaking import get_agent
from twistarena.v1 import match_pb2 as mpb

from tests.support.hosting import FIRST_LEGAL, Arena, running_arena, store_version
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def arena() -> Iterator[Arena]:
    with running_arena(runners=1, extra=["--arena", "twisted:2", "--house", "none"]) as started:
        yield started


def test_the_arena_seats_enrolled_hosted_agents_and_rates_their_matches(
        arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    target = arena.serve.target
    agents: list[str] = []

    async def register(name: str) -> tuple[str, str]:
        agent_id, token = await register_agent(target, name)
        await store_version(arena.url, agent_id, {"bot.py": FIRST_LEGAL}, "python3 bot.py")
        return agent_id, token

    for name in ("first", "second"):
        agent_id, token = asyncio.run(register(name))
        agents.append(agent_id)
        assert cli(["arena", "enroll", "--server", target, "twisted-2", agent_id,
                    "--api-token", token]) == 0
    assert "enrolled in twisted-2 (2 agents enrolled)" in capsys.readouterr().out

    async def rated() -> None:
        ladder = ArenaLadderClient(target)

        async def three_rated() -> bool:
            return (await ladder.get("twisted-2")).matches_played >= 3

        await wait_until(three_rated, "the arena rated three matches", timeout=90,
                         interval=0.3)
        board = await ladder.leaderboard("twisted-2")
        assert {r.agent_id for r in board.rows} == set(agents)
        assert all(r.version == 1 and r.games >= 3 and r.sigma < 25 / 3 for r in board.rows)
        info = await get_agent([target], agents[0])
        [rating] = info.arena_ratings
        assert rating.arena_id == "twisted-2" and len(rating.history) == rating.games
        matches = MatchClient(target)
        listed = await matches.list_matches(arena_id="twisted-2", agent_id=agents[1])
        assert listed and all(m.status == mpb.MATCH_STATUS_FINISHED for m in listed)
        assert {s.name for s in listed[0].seats} == {"first v1", "second v1"}

    asyncio.run(rated())
    assert cli(["arena", "show", "--server", target, "twisted-2", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["rank"] for r in shown["rows"]] == [1, 2]
