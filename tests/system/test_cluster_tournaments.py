"""Over a Valkey Cluster a tournament is created as over one Valkey: its record
and its indexes live in different slots, which one transaction cannot span."""

from __future__ import annotations

import asyncio
import secrets

from twistarena.storage import Holder, Store
from twistarena.v1 import tournaments_pb2 as tpb

from tests.support.nodes import ValkeyCluster


def test_in_a_cluster_a_tournament_is_created_indexed_and_live() -> None:
    cluster = ValkeyCluster().start()
    tid = secrets.token_hex(6)

    async def scenario() -> None:
        store = Store(cluster.url, Holder("node-a", "127.0.0.1:9000", 2000))
        await store.connect()
        try:
            spec = tpb.TournamentSpec(game_id="twhist", num_players=3)
            await store.tournaments.create(tid, spec, tpb.TOURNAMENT_RUNNING, 1_000)
            record = await store.tournaments.load(tid)
            assert record is not None and record.spec == spec
            assert tid in await store.tournaments.newest(10)
        finally:
            await store.close()

    try:
        asyncio.run(scenario())
    finally:
        cluster.stop()
