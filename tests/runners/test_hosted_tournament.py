"""A tournament of hosted agents, played by the runners ``serve`` starts itself.

Real parts: ``twistarena serve`` as a subprocess on its own Valkey, with its
two runner processes; versions stored in that Valkey; the tournament created
with ``tournament create --no-follow`` (nobody keeps a command running for the
hosted entrants) and followed over gRPC until it is over.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main as cli
from twistarena.clients.sdk import AgentError, MatchClient, register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.clients.sdk.versions import VersionClient
from twistarena.storage import Holder, Store
from twistarena.storage.runners import seat_key
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import tournaments_pb2 as tpb

from tests.support.hosting import (
    FIRST_LEGAL,
    SLOW_FIRST_LEGAL,
    Arena,
    agent_show,
    finished_match,
    running_arena,
    store_version,
    submit_agent,
)
from tests.support.process import child_pids, command_line, descendants, json_records
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def arena() -> Iterator[Arena]:
    with running_arena(runners=2) as started:
        yield started


async def hosted(arena: Arena, name: str, program: str) -> str:
    """A registered agent whose active version (stored straight in the store) is
    ``program``."""
    agent_id, _token = await register_agent(arena.serve.target, name)
    await store_version(arena.url, agent_id, {"bot.py": program}, "python3 bot.py")
    return agent_id


def test_a_tournament_of_hosted_agents_plays_to_the_end_with_no_command_kept_up(
        arena: Arena, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = arena.serve.target
    a, a_token = submit_agent(target, "alpha", {"bot.py": FIRST_LEGAL}, "python3 bot.py",
                              capsys, tmp_path)
    b, _ = submit_agent(target, "beta", {"bot.py": FIRST_LEGAL}, "python3 bot.py",
                        capsys, tmp_path)
    code = cli(["tournament", "create", "--server", target, "--game", "tricky_twist",
                "--players", "3", "--entrants", f"agent:{a},agent:{b},random",
                "--decision-ms", "2000", "--parallel", "6", "--no-follow"])
    assert code == 0
    tid = capsys.readouterr().out.split("tournament ", 1)[1].split(":", 1)[0].strip()

    async def go() -> tpb.Tournament:
        client = TournamentClient(target)

        async def over() -> tpb.Tournament | None:
            record = await client.get(tid)
            return record if record.status != tpb.TOURNAMENT_RUNNING else None

        record = await wait_until(over, "the tournament is over", timeout=60, interval=0.3)
        # The runners report each seat right after its match.
        versions = VersionClient(target)

        async def reported() -> bool:
            for agent in (a, b):
                [version] = (await versions.details(agent)).versions
                if version.stats.matches != 3:
                    return False
            return True

        await wait_until(reported, "the runners reported both agents' three matches",
                         timeout=30)
        return record

    record = asyncio.run(go())
    assert record.status == tpb.TOURNAMENT_FINISHED
    # One table of three, in its three seatings: two hosted seats in each game.
    assert record.games_done == record.games_planned == 3
    assert {row.entrant for row in record.standings} == {f"agent:{a}", f"agent:{b}", "random"}

    # What the runners measured reaches the author: three matches of its version.
    shown = agent_show(target, a, a_token, capsys)
    [version] = shown["versions"]
    assert version["stats"]["matches"] == 3
    assert version["stats"]["decisions"] > 0
    assert version["stats"]["crashes"] == version["stats"]["timeouts"] == 0


def logged(arena: Arena, event: str, **fields: object) -> list[dict[str, object]]:
    """The serve process's (and its runners') log records of ``event`` with ``fields``."""
    return [r for r in json_records(arena.serve.output())
            if r.get("event") == event and all(r.get(k) == v for k, v in fields.items())]


def test_a_killed_runner_s_seat_goes_to_another_runner_and_the_match_completes(
        arena: Arena) -> None:
    async def go() -> None:
        agent = await hosted(arena, "slow", SLOW_FIRST_LEGAL)
        client = TournamentClient(arena.serve.target)
        created = await client.create("tricky_twist", [f"agent:{agent}", "heuristic", "random"],
                                      players=3, parallel=1, decision_ms=2000)
        mid = f"t{created.tournament_id}-0-0"
        matches = MatchClient(arena.serve.target)

        async def under_way() -> mpb.Match | None:
            try:
                match = await matches.get_match(mid)
            except AgentError:  # the tournament has not created it yet
                return None
            return match if match.actions >= 10 and any(s.connected for s in match.seats) \
                else None

        match = await wait_until(under_way, "a runner plays the hosted seat", timeout=40)
        [seat] = [s.seat for s in match.seats if not s.house_bot]
        first = await holder(arena, seat_key(mid, seat))
        assert first is not None
        victim = await wait_until(lambda: runner_playing(arena),
                                  "the playing runner's program is seen", timeout=10)
        os.kill(victim, signal.SIGKILL)
        await wait_until(lambda: taken_over(arena, seat_key(mid, seat), first),
                         "another runner took the seat over")

        match = await finished_match(arena.serve.target, mid, "the match is over", timeout=40)
        assert match.result.reason == mpb.END_REASON_COMPLETED
        await client.cancel(created.tournament_id, "enough")
        # A runner's death is expected: no call failed on the node because of it.
        assert not logged(arena, "call_failed")

    asyncio.run(go())


async def holder(arena: Arena, key: str) -> str | None:
    """The runner that holds a hosted seat now, as the store says (None: none)."""
    store = Store(arena.url, Holder("tests", "", 2000))
    await store.connect()
    try:
        held = await store.runners.assignment(key)
    finally:
        await store.close()
    return held[0] if held is not None else None


async def taken_over(arena: Arena, key: str, first: str) -> bool:
    """Another runner than ``first`` holds the seat."""
    now = await holder(arena, key)
    return now is not None and now != first


def runner_playing(arena: Arena) -> int | None:
    """The pid of the serve process's runner that runs a hosted program now."""
    assert arena.serve.proc is not None
    for pid in child_pids(arena.serve.proc.pid):
        if "runner" in command_line(pid) and any(
                "bot.py" in command_line(below) for below in descendants(pid)):
            return pid
    return None


def test_practice_and_matchmaking_seats_of_a_hosted_agent_are_played_by_the_runners(
        arena: Arena, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = arena.serve.target
    agent, token = submit_agent(target, "gamma", {"bot.py": FIRST_LEGAL}, "python3 bot.py",
                                capsys, tmp_path)
    # Practice: the command waits for the match the runners play.
    assert cli(["practice", "--server", target, "--game", "tricky_twist", "--hosted",
                "--api-token", token, "--json"]) == 0
    practiced = json.loads(capsys.readouterr().out)
    assert practiced["reason"] == "COMPLETED"
    # Matchmaking: the queue hands the seat to the runners, without a seat token.
    assert cli(["queue", "--server", target, "--game", "tricky_twist", "--hosted",
                "--api-token", token, "--house-fill-after", "0", "--json"]) == 0
    queued = json.loads(capsys.readouterr().out)
    assert queued["hosted"] is True and queued["match_id"] != practiced["match_id"]

    async def go() -> Any:
        match = await finished_match(target, queued["match_id"],
                                     "the matchmaking match is over")
        versions = VersionClient(target, api_token=token)

        async def both_reported() -> bool:
            [version] = (await versions.details(agent)).versions
            return version.stats.matches == 2

        await wait_until(both_reported, "both seats reported")
        return match

    match = asyncio.run(go())
    assert match.result.reason == mpb.END_REASON_COMPLETED
    assert match.seats[queued["seat"]].timeouts == 0
