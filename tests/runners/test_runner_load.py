"""Runners under steady load: sessions that stay alive, every match counted, no
seat left waiting, no seat played twice.

Real parts: ``twistarena serve`` as a subprocess on its own Valkey with two runner
processes (4 seats each, bubblewrap), hosted versions stored in that Valkey,
tournaments and practice matches asked for over gRPC and the CLI.

The load test plays a hosted tournament of instant bots at full speed for
``TWISTARENA_RUNNER_LOAD_S`` seconds (60 by default: a minute of steady load,
long enough for sessions, holds and heartbeats to turn over several times;
docs/runners.md gives the hour-long run's command and what it measured).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from twistarena.clients.cli import main as cli
from twistarena.clients.sdk import MatchClient, register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.clients.sdk.versions import VersionClient
from twistarena.storage import keys
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import tournaments_pb2 as tpb

from tests.support.hosting import (
    FIRST_LEGAL,
    Arena,
    running_arena,
    store_archive,
    store_version,
    submit_agent,
)
from tests.support.process import json_records
from tests.support.waiting import wait_until

#: How long the load test keeps the runners busy, in seconds.
LOAD_S = float(os.environ.get("TWISTARENA_RUNNER_LOAD_S", "60"))
#: A version submitted during the load plays its first match within this long.
NEW_VERSION_PLAYS_WITHIN_S = 15.0


@pytest.fixture(scope="module")
def arena() -> Iterator[Arena]:
    # Eight seats a runner, as serve's own; a short waiting timeout: a seat left
    # waiting fails a test in seconds, not in an hour.
    with running_arena(runners=2,
                       extra=["--waiting-timeout", "40", "--runner-slots", "8"]) as started:
        yield started


def logged(arena: Arena, event: str) -> list[dict[str, Any]]:
    """The serve process's (and its runners') log records of ``event``."""
    return [r for r in json_records(arena.serve.output()) if r.get("event") == event]


async def hosted(arena: Arena, name: str, files: dict[str, str] | None = None) -> tuple[str, str]:
    """(agent id, api token) of a new agent whose active version is ``files``."""
    agent_id, token = await register_agent(arena.serve.target, name)
    await store_version(arena.url, agent_id, files or {"bot.py": FIRST_LEGAL},
                        "python3 bot.py")
    return agent_id, token


async def matches_counted(arena: Arena, agent_id: str, token: str) -> int:
    """The matches the agent's active version's stats count."""
    [version] = (await VersionClient(arena.serve.target, api_token=token)
                 .details(agent_id)).versions
    return int(version.stats.matches)


async def runners_idle(arena: Arena) -> bool:
    """No hosted seat waits for a runner or is held by one."""
    client = aioredis.from_url(arena.url)
    try:
        waiting = await client.llen(keys.RUNNER_PENDING)
        held = await client.zcard(keys.RUNNER_HELD)
    finally:
        await client.aclose()
    return waiting == 0 and held == 0


def practice_hosted(server: str, token: str, capsys: pytest.CaptureFixture[str]) -> tuple[
        dict[str, Any], float]:
    """``practice --hosted --json`` for the agent: (its result, seconds it took)."""
    started = time.monotonic()
    assert cli(["practice", "--server", server, "--game", "twisted", "--hosted",
                "--api-token", token, "--json"]) == 0
    return json.loads(capsys.readouterr().out), time.monotonic() - started


def test_a_hosted_tournament_at_full_speed_counts_every_match_and_refuses_no_report(
        arena: Arena, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = arena.serve.target

    async def go() -> tuple[str, dict[str, Any], float]:
        started = time.monotonic()
        agents = [await hosted(arena, f"instant{i}") for i in range(3)]
        client = TournamentClient(target)
        created = await client.create(
            "twisted", [f"agent:{a}" for a, _t in agents], players=3, games_per_pairing=2000,
            duplicate=True, parallel=5, decision_ms=2000)
        tid = created.tournament_id
        # A version submitted while the runners are busy plays within seconds.
        await asyncio.sleep(min(5.0, LOAD_S / 3))
        fresh, fresh_token = await asyncio.to_thread(
            submit_agent, target, "latecomer", {"bot.py": FIRST_LEGAL}, "python3 bot.py",
            capsys, tmp_path)
        practiced, took = await asyncio.to_thread(practice_hosted, target, fresh_token, capsys)
        await wait_until(lambda: matches_counted(arena, fresh, fresh_token),
                         "the latecomer's match is counted", timeout=10)
        left = LOAD_S - (time.monotonic() - started)
        if left > 0:
            await asyncio.sleep(left)
        await client.cancel(tid, "enough load")
        await wait_until(lambda: runners_idle(arena), "every hosted seat is done",
                         timeout=60, interval=0.3)
        games = [m for m in await MatchClient(target).list_matches(
                     "twisted", statuses=["finished"], limit=20000)
                 if m.match_id.startswith(f"t{tid}-")
                 and m.result.reason == mpb.END_REASON_COMPLETED]
        assert len(games) >= 5, "the load played too few matches to mean anything"

        played = [r for r in logged(arena, "runner_seat_over")
                  if str(r["match_id"]).startswith(f"t{tid}-")]
        assert len(played) >= 3 * len(games)

        async def counted() -> bool:
            total = 0
            for agent_id, token in agents:
                total += await matches_counted(arena, agent_id, token)
            return total == len(played)

        # Every seat a runner played to the end (those of every finished match among
        # them) is counted in its version's stats.
        await wait_until(counted, "every hosted seat played is counted", timeout=15)
        record: tpb.Tournament = await client.get(tid)
        assert record.status == tpb.TOURNAMENT_CANCELLED
        return tid, practiced, took

    tid, practiced, took = asyncio.run(go())
    assert practiced["reason"] == "COMPLETED"
    assert took < NEW_VERSION_PLAYS_WITHIN_S, f"the new version waited {took:.1f} s"
    assert not logged(arena, "runner_report_failed")
    assert not logged(arena, "runner_version_unavailable")
    assert not logged(arena, "runner_seats_expired")
    assert not [r for r in logged(arena, "runner_seat_assigned") if r.get("handoffs")]
    reported = [r for r in logged(arena, "runner_seat_reported")
                if str(r["match_id"]).startswith(f"t{tid}-")]
    assert len({(r["match_id"], r["seat"]) for r in reported}) == len(reported)


def test_a_runner_whose_session_the_store_lost_plays_and_reports_on(
        arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    target = arena.serve.target

    async def forget_sessions() -> int:
        client = aioredis.from_url(arena.url)
        try:
            found = [k async for k in client.scan_iter(match=keys.runner_session("*"))]
            return int(await client.delete(*found)) if found else 0
        finally:
            await client.aclose()

    async def go() -> tuple[str, str]:
        assert await forget_sessions() == 2  # one per runner
        return await hosted(arena, "forgotten")

    agent_id, token = asyncio.run(go())
    refused_before = len(logged(arena, "runner_report_failed"))
    practiced, _took = practice_hosted(target, token, capsys)
    assert practiced["reason"] == "COMPLETED"
    asyncio.run(wait_until(lambda: matches_counted(arena, agent_id, token),
                           "the match is counted", timeout=10))
    assert len(logged(arena, "runner_report_failed")) == refused_before


def test_a_seat_whose_version_cannot_be_unpacked_is_failed_at_once_and_the_owner_told_why(
        arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    target = arena.serve.target

    async def go() -> tuple[str, str]:
        agent_id, token = await register_agent(target, "unpackable")
        await store_archive(arena.url, agent_id, b"this is not a gzipped tar archive",
                            "python3 bot.py", 40, 1)
        return agent_id, token

    agent_id, token = asyncio.run(go())
    practiced, took = practice_hosted(target, token, capsys)
    # Not left waiting: the match went on by its fallback, the seat missing every decision.
    assert practiced["reason"] in ("COMPLETED", "FORFEIT")
    assert took < 30

    async def failure() -> Any:
        [version] = (await VersionClient(target, api_token=token).details(agent_id)).versions
        return version.stats if version.stats.matches == 1 else None

    stats = asyncio.run(wait_until(failure, "the failed seat is counted", timeout=10))
    assert stats.crashes == 1
    [logged_failure] = stats.failures
    assert "could not start the program" in logged_failure.stderr_tail
    assert "unpack" in logged_failure.stderr_tail or "archive" in logged_failure.stderr_tail
