"""Over a Valkey Cluster, an end is announced only once the primary holding the
match says it is durable, as over one Valkey: its AOF fsynced (WAITAOF) and,
when asked, its replicas (WAIT). A cluster pipeline cannot carry the wait
behind the end's writes on their connection, so the wait rides behind a write
of its own in the match's slot, on the primary that holds it."""

from __future__ import annotations

import asyncio
import secrets

import pytest
from twistarena.storage import Grant, Holder, MatchRecord, Store, keys
from twistarena.storage.durability import Durability
from twistarena.storage.errors import NotDurableError
from twistarena.v1 import match_pb2 as mpb

from tests.support.nodes import ValkeyCluster


def _record() -> MatchRecord:
    return MatchRecord(secrets.token_hex(8), mpb.MatchOptions(game_id="twisted", num_players=2),
                       seed=1, status=mpb.MATCH_STATUS_WAITING, created_ms=1_000)


async def _finish(store: Store, record: MatchRecord) -> None:
    grant = await store.matches.create(record, claim=True)
    assert isinstance(grant, Grant)
    await store.matches.finish(record.match_id, grant.token, mpb.MATCH_STATUS_FINISHED,
                               mpb.MatchResult().SerializeToString(), 0, None)


def test_in_a_cluster_an_end_waits_for_its_primarys_aof_and_replicas() -> None:
    cluster = ValkeyCluster(appendfsync="always").start()

    async def scenario() -> None:
        holder = Holder("node-a", "127.0.0.1:9000", 2000)
        store = Store(cluster.url, holder)
        # No replica in this cluster: an end that must reach one is never durable.
        strict = Store(cluster.url, holder, durability=Durability(replicas=1, wait_ms=200))
        await store.connect()
        await strict.connect()
        try:
            assert store.matches.aof, "every primary keeps an AOF: WAITAOF is asked"
            record = _record()
            await _finish(store, record)
            # The wait rode behind a write in the match's slot.
            assert await store.conn.redis.exists(keys.match_sync(record.match_id))
            with pytest.raises(NotDurableError, match="0 of 1 replicas"):
                await _finish(strict, _record())
            # A fresh end read from the store is confirmed on the match's primary too.
            with pytest.raises(NotDurableError):
                await strict.confirm_durable(record.match_id)
        finally:
            await store.close()
            await strict.close()

    try:
        asyncio.run(scenario())
    finally:
        cluster.stop()
