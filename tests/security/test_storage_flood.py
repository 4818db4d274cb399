"""A token that floods the store with versions is stopped by the caps on archive
bytes (its agent's, the whole store's); deleting versions frees room and
collects the archives no version uses; the versions left keep their numbers;
and one address registers a bounded number of agents an hour."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
import redis
from twistarena.clients.cli import main
from twistarena.clients.sdk import AgentError, register_agent
from twistarena.clients.sdk.versions import VersionClient
from twistarena.hosted.archives import MIB
from twistarena.server.config import Limits, ServerConfig
from twistarena.storage import Holder, Store, keys

from tests.security.hostile import DB
from tests.support.hosting import FIRST_LEGAL, pack
from tests.support.server import InProcessServer

AGENT_CAP = 3 * MIB
STORE_CAP = 5 * MIB


def blob_version() -> bytes:
    """A version of a little over 1 MiB packed (random bytes do not compress)."""
    return pack({"bot.py": FIRST_LEGAL, "blob": os.urandom(MIB)})


@pytest.fixture()
def capped(valkey: Any) -> Iterator[tuple[InProcessServer, str]]:
    url = f"{valkey.url.rsplit('/', 1)[0]}/{DB}"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    config = ServerConfig(port=0, redis_url=url, agent_max_archive_bytes=AGENT_CAP,
                          store_max_archive_bytes=STORE_CAP,
                          limits=Limits(registers_per_hour=4, creates_per_minute=0))
    srv = InProcessServer(config).start()
    try:
        yield srv, url
    finally:
        srv.stop()


async def refusal(call: Any) -> AgentError:
    with pytest.raises(AgentError) as refused:
        await call
    return refused.value


def test_a_storage_flood_stops_at_the_caps_and_deleting_frees_room(
        capped: tuple[InProcessServer, str], capsys: pytest.CaptureFixture[str]) -> None:
    server, url = capped
    target = server.target

    async def flood() -> tuple[str, str, list[str]]:
        agent_id, token = await register_agent(target, "flooder")
        owner = VersionClient(target, api_token=token)
        stored = [(await owner.submit(blob_version(), "python3 bot.py")).version
                  for _ in range(2)]
        over = await refusal(owner.submit(blob_version(), "python3 bot.py"))
        assert (over.code, over.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED,
                                            "TOO_MANY_BYTES"), over
        assert "agent-max-archive-mb" in str(over)
        # The first is active: deleting it is refused.
        active = await refusal(owner.delete(stored[0].version_id))
        assert (active.code, active.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                "VERSION_ACTIVE")
        return agent_id, token, [v.version_id for v in stored]

    agent_id, token, vids = asyncio.run(flood())
    store_redis = redis.Redis.from_url(url)
    hash_of = {v: store_redis.hget(keys.agent_version(agent_id, v), "content_hash").decode()
               for v in vids}
    # The command deletes the second one: its archive goes, the agent has room again.
    assert main(["agent", "versions", "delete", vids[1][:10], "--server", target,
                 "--api-token", token, "--json"]) == 0
    out = capsys.readouterr().out  # the server's log lines may come first
    deleted, _end = json.JSONDecoder().raw_decode(out[out.index("{\n"):])
    assert deleted["version_id"] == vids[1] and deleted["archive_freed"] > 0
    assert not store_redis.exists(keys.archive(hash_of[vids[1]]))
    assert store_redis.exists(keys.archive(hash_of[vids[0]]))

    async def after() -> None:
        owner = VersionClient(target, api_token=token)
        third = (await owner.submit(blob_version(), "python3 bot.py")).version
        listed = [v.version_id for v in (await owner.versions()).versions]
        assert listed == [third.version_id, vids[0]]
        # Numbers do not move: the third stored is number 3 whatever was deleted.
        store = Store(url, Holder("tests", "", 2000))
        await store.connect()
        try:
            assert await store.versions.numbers(agent_id, [vids[0], third.version_id]) \
                == [1, 3]
            await store.versions.activate(agent_id, third.version_id)
            assert [n for n, _ in await store.versions.active_versions([agent_id])] == [3]
            # A version a seat may be playing is not deleted.
            await store.versions.note_playing(agent_id, vids[0], "m:0", 2**62)
            playing = await refusal(owner.delete(vids[0]))
            assert (playing.code, playing.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                                      "VERSION_PLAYING")
            await store.versions.done_playing(agent_id, vids[0], "m:0")
            assert (await owner.delete(vids[0])).archive_freed > 0
        finally:
            await store.close()

        # The same bytes as another agent's version: one archive, kept for the other.
        shared = blob_version()
        _b, token_b = await register_agent(target, "second")
        _c, token_c = await register_agent(target, "third")
        b_first = (await VersionClient(target, api_token=token_b).submit(
            shared, "python3 bot.py")).version
        c_first = (await VersionClient(target, api_token=token_c).submit(
            shared, "python3 bot.py")).version
        c_second = (await VersionClient(target, api_token=token_c).submit(
            blob_version(), "python3 bot.py")).version
        await VersionClient(target, api_token=token_c).activate(c_second.version_id)
        kept = await VersionClient(target, api_token=token_c).delete(c_first.version_id)
        assert kept.archive_freed == 0 and kept.size > 0
        assert store_redis.exists(keys.archive(b_first.content_hash))
        # The whole store's cap: 1 + 1 + 1 MiB stored now; a few more and it is full.
        owner_b = VersionClient(target, api_token=token_b)
        codes = []
        for _ in range(3):
            try:
                await owner_b.submit(blob_version(), "python3 bot.py")
                codes.append("stored")
            except AgentError as error:
                codes.append(error.reason)
        assert "TOO_MANY_BYTES" in codes, codes
        assert int(store_redis.get(keys.ARCHIVE_BYTES) or 0) <= STORE_CAP

    asyncio.run(after())


def test_one_address_registers_a_bounded_number_of_agents_an_hour(
        capped: tuple[InProcessServer, str]) -> None:
    server, _url = capped

    async def go() -> AgentError:
        for i in range(4):
            await register_agent(server.target, f"agent-{i}")
        return await refusal(register_agent(server.target, "one-too-many"))

    refused = asyncio.run(go())
    assert (refused.code, refused.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED,
                                              "RATE_LIMITED")
    assert "registers-per-hour" in str(refused)
