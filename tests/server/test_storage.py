"""The storage layer on a real Valkey: one lease scheme for matches and tournaments
(claim, renew, release, fence), and appends and per-match writes on the lean path."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from twistarena.storage import (
    EndStored,
    FencedError,
    Grant,
    Handoff,
    Holder,
    LogConflict,
    MatchRecord,
    Store,
    StoreError,
    keys,
)
from twistarena.storage.durability import Durability
from twistarena.storage.errors import NotDurableError, TransientStoreError, driver_errors
from twistarena.storage.resp import BATCH_TIMEOUT_S, RespBatch, RespError, RespPipeline
from twistarena.v1 import match_pb2 as mpb


async def _stores(url: str, *nodes: str) -> list[Store]:
    stores = [Store(url, Holder(node, f"127.0.0.1:{9000 + i}", 2000))
              for i, node in enumerate(nodes)]
    for store in stores:
        await store.connect()
    return stores


async def _close(stores: list[Store]) -> None:
    for store in stores:
        await store.close()


def test_a_tournament_lease_fences_its_former_driver(valkey: Any) -> None:
    """Claim refused while held; after a takeover the old holder's writes are refused
    and a result, once written, stays as first written."""
    tid = secrets.token_hex(6)

    async def scenario() -> None:
        a, b = await _stores(valkey.url, "node-a", "node-b")
        try:
            grant = await a.tournaments.leases.claim(tid)
            with pytest.raises(FencedError):
                await b.tournaments.leases.claim(tid)
            assert await a.tournaments.leases.renew(tid, grant.token) > grant.until_ms - 1
            await a.tournaments.record_result(tid, grant.token, 0, 0, {"by": "a"})
            taken = await b.tournaments.leases.claim(tid, force=True)
            assert taken.token != grant.token
            assert await a.tournaments.leases.renew(tid, grant.token) == 0
            with pytest.raises(FencedError):
                await a.tournaments.record_result(tid, grant.token, 0, 1, {"by": "a"})
            await b.tournaments.record_result(tid, taken.token, 0, 0, {"by": "b"})
            await b.tournaments.record_result(tid, taken.token, 0, 1, {"by": "b"})
            plan = await b.tournaments.plan_round(tid, taken.token, 1, {"tables": [["x"]]})
            again = await b.tournaments.plan_round(tid, taken.token, 1, {"tables": [["y"]]})
            assert plan == again == {"tables": [["x"]]}
        finally:
            await _close([a, b])

    asyncio.run(scenario())
    client = redis.Redis.from_url(valkey.url)
    try:
        results = client.hgetall(f"{{t:{tid}}}:results")
        assert results == {b"0:0": b'{"by": "a"}', b"0:1": b'{"by": "b"}'}
    finally:
        client.close()


def test_a_released_match_lease_names_the_successor_and_refuses_the_old_token(
        valkey: Any) -> None:
    mid = secrets.token_hex(8)

    async def scenario() -> None:
        a, b = await _stores(valkey.url, "node-a", "node-b")
        try:
            token = await a.matches.claim(mid, force=False)
            await a.matches.update_meta(mid, token, {"status": 1})
            assert await a.matches.leases.release(mid, token)
            [lease] = await b.matches.leases.read([mid])
            assert (lease.node, lease.until) == ("", 0)
            token = await a.matches.claim(mid, force=False)
            await a.matches.leases.release_many([Handoff(mid, token, "node-b", "b:1")])
            [lease] = await b.matches.leases.read([mid])
            assert (lease.next, lease.next_address) == ("node-b", "b:1")
            with pytest.raises(FencedError):
                await a.matches.update_meta(mid, token, {"status": 2})
            grants = await b.matches.leases.claim_many([mid])
            assert grants[0] is not None and not isinstance(grants[0], Exception)
            assert grants[0].token.startswith("node-b:3:")  # the fencing epoch counts every claim
        finally:
            await _close([a, b])

    asyncio.run(scenario())


def test_appends_on_the_lean_path_survive_a_script_flush(valkey: Any) -> None:
    """The hiredis-parsed lean connection: an append, a conflict, a fenced
    append, and the one NOSCRIPT reload after the server forgot the scripts."""
    mid = secrets.token_hex(8)

    async def scenario() -> None:
        [store] = await _stores(valkey.url, "node-a")
        try:
            assert isinstance(store.conn.lean_for("append"), RespPipeline)
            token = await store.matches.claim(mid)
            assert await store.appender.append(mid, token, 0, [(0, 5, False)]) == 1
            with pytest.raises(LogConflict) as conflict:
                await store.appender.append(mid, token, 0, [(1, 6, False)])
            assert conflict.value.actual == 1
            await store.conn.redis.script_flush()
            assert await store.appender.append(mid, token, 1, [(1, 6, True)]) == 2
            await store.matches.claim(mid)  # a new epoch: the old token is fenced
            with pytest.raises(FencedError):
                await store.appender.append(mid, token, 2, [(0, 7, False)])
            assert await store.matches.load_log(mid) == [(0, 5, False), (1, 6, True)]
        finally:
            await store.close()

    asyncio.run(scenario())


def test_one_tick_of_appends_to_many_matches_is_one_script_call(valkey: Any) -> None:
    """The lean path sends a tick's appends as one ``append.lua`` call, and each
    match is still judged on its own: stored, short of its expected length
    (LogConflict), or fenced by a newer lease; the refused ones store nothing."""
    mids = [secrets.token_hex(8) for _ in range(4)]

    async def scenario() -> None:
        [store] = await _stores(valkey.url, "node-a")
        try:
            tokens = [await store.matches.claim(mid) for mid in mids]
            assert await store.appender.append(mids[1], tokens[1], 0, [(0, 1, False)]) == 1
            await store.matches.claim(mids[2])  # a new epoch: tokens[2] is fenced
            await store.conn.redis.config_resetstat()
            results = await asyncio.gather(
                store.appender.append(mids[0], tokens[0], 0, [(0, 5, False), (1, 6, True)]),
                store.appender.append(mids[1], tokens[1], 0, [(1, 7, False)]),  # log is 1 long
                store.appender.append(mids[2], tokens[2], 0, [(0, 8, False)]),
                store.appender.append(mids[3], tokens[3], 0, [(2, 9, False)]),
                return_exceptions=True)
            assert results[0] == 2 and results[3] == 1
            assert isinstance(results[1], LogConflict) and results[1].actual == 1
            assert isinstance(results[2], FencedError)
            stats = await store.conn.redis.info("commandstats")
            assert stats["cmdstat_evalsha"]["calls"] == 1
            logs = [await store.matches.load_log(mid) for mid in mids]
            assert logs == [[(0, 5, False), (1, 6, True)], [(0, 1, False)], [],
                            [(2, 9, False)]]
        finally:
            await store.close()

    asyncio.run(scenario())


def test_a_batch_refused_out_of_memory_stores_none_of_its_appends(valkey: Any) -> None:
    """A store out of memory (``maxmemory``, ``noeviction``) refuses the batch's one
    script call at its first write: every append of the batch fails as a store
    error and no log holds any of them, so each can be made again as it was."""
    mids = [secrets.token_hex(8) for _ in range(3)]

    async def scenario() -> None:
        [store] = await _stores(valkey.url, "node-a")
        redis_client = store.conn.redis
        before = await redis_client.config_get("maxmemory*")
        try:
            tokens = [await store.matches.claim(mid) for mid in mids]
            await redis_client.config_set("maxmemory-policy", "noeviction")
            await redis_client.config_set("maxmemory", 1)
            results = await asyncio.gather(
                *(store.appender.append(mid, token, 0, [(0, i, False)])
                  for i, (mid, token) in enumerate(zip(mids, tokens, strict=True))),
                return_exceptions=True)
            assert all(type(r) is StoreError and "OOM" in str(r) for r in results), results
            await redis_client.config_set("maxmemory", before["maxmemory"])
            assert [await store.matches.load_log(mid) for mid in mids] == [[], [], []]
            again = await asyncio.gather(*(store.appender.append(mid, token, 0, [(0, 7, False)])
                                           for mid, token in zip(mids, tokens, strict=True)))
            assert again == [1, 1, 1]
        finally:
            await redis_client.config_set("maxmemory", before["maxmemory"])
            await redis_client.config_set("maxmemory-policy", before["maxmemory-policy"])
            await store.close()

    asyncio.run(scenario())


def test_a_driver_failure_of_any_class_is_a_transient_store_error() -> None:
    """A connection that breaks under a call can make redis-py raise other than a
    RedisError (RuntimeError on a closed transport, AttributeError on a dropped
    writer); callers must see a TransientStoreError (UNAVAILABLE, retried), while a
    bug of our own inside the block still surfaces as itself."""

    async def scenario() -> None:
        client = aioredis.Redis(host="127.0.0.1", port=1)
        try:
            with pytest.raises(TransientStoreError, match="IndexError"), driver_errors():
                await client.execute_command()  # fails inside the driver's own code
            with pytest.raises(AttributeError), driver_errors():
                None.writelines([])  # type: ignore[attr-defined]
        finally:
            await client.aclose()

    asyncio.run(scenario())


def test_a_matchs_once_only_writes_take_the_lean_path(valkey: Any) -> None:
    """Creation with its claim, fenced field writes and the end go through
    ``Connections.batch``: the lean connection. Its error replies are the driver's
    kind (a StoreError out of ``driver_errors``, a NOSCRIPT reloaded once), and
    its fencing is the same as on redis-py's path."""
    mid = secrets.token_hex(8)
    record = MatchRecord(mid, mpb.MatchOptions(game_id="twhist", num_players=2), seed=5,
                         status=mpb.MATCH_STATUS_WAITING, created_ms=1_000,
                         token_hashes={0: "h0", 1: "h1"})

    result = mpb.MatchResult(scores=[3, 1]).SerializeToString()

    async def scenario() -> None:
        a, b = await _stores(valkey.url, "node-a", "node-b")
        try:
            lean = a.conn.lean_for("append")
            assert isinstance(lean, RespPipeline) and lean._transport is None
            assert isinstance(a.conn.batch(), RespBatch)
            grant = await a.matches.create(record, claim=True)
            assert isinstance(grant, Grant) and lean._transport is not None
            await a.matches.update_meta(mid, grant.token, {"joined:0": 1})
            await a.conn.redis.script_flush()  # the next call reloads them once
            await a.matches.update_meta(mid, grant.token, {"joined:1": 1})
            stored = await a.matches.load(mid)
            assert stored is not None and stored.joined == {0, 1}
            assert stored.token_hashes == {0: "h0", 1: "h1"} and stored.seed == 5

            wrong = a.conn.batch()
            wrong.sadd(keys.match_meta(mid), "not a set")
            [reply] = await wrong.execute(raise_on_error=False)
            assert isinstance(reply, RespError) and str(reply).startswith("WRONGTYPE")
            wrong.sadd(keys.match_meta(mid), "not a set")
            with pytest.raises(StoreError, match="WRONGTYPE") as refused, driver_errors():
                await wrong.execute()
            assert not isinstance(refused.value, TransientStoreError)

            token_b = await b.matches.claim(mid)  # a new epoch: a's token is fenced
            with pytest.raises(FencedError):
                await a.matches.update_meta(mid, grant.token, {"status": 9})
            with pytest.raises(FencedError):
                await a.matches.finish(mid, grant.token, mpb.MATCH_STATUS_FINISHED, result, 0,
                                       None)
            await a.conn.redis.script_flush()
            await a.matches.finish(mid, token_b, mpb.MATCH_STATUS_FINISHED, result, 0, None)
            ended = await a.matches.load(mid)
            assert ended is not None and ended.status == mpb.MATCH_STATUS_FINISHED
            assert ended.result is not None and list(ended.result.scores) == [3, 1]
            assert not await a.conn.redis.sismember(keys.LIVE_MATCHES, mid)
        finally:
            await _close([a, b])

    asyncio.run(scenario())


def test_a_matchs_end_waits_for_its_replicas_as_long_as_asked(valkey: Any) -> None:
    """The end of a match waits (WAIT) for the replicas the node asks for, up to
    ``--wait-timeout-ms``: a wait longer than the lean batch's own bound is
    answered by the store (not durable: no replica here), not cut short as a
    store that went silent."""
    mid = secrets.token_hex(8)
    record = MatchRecord(mid, mpb.MatchOptions(game_id="twisted", num_players=2), seed=1,
                         status=mpb.MATCH_STATUS_WAITING, created_ms=1_000)
    wait_ms = int((BATCH_TIMEOUT_S + 1) * 1000)

    async def scenario() -> None:
        store = Store(valkey.url, Holder("node-a", "127.0.0.1:9000", 2000),
                      durability=Durability(replicas=1, wait_ms=wait_ms))
        await store.connect()
        try:
            grant = await store.matches.create(record, claim=True)
            assert isinstance(grant, Grant)
            with pytest.raises(NotDurableError, match="0 of 1 replicas"):
                await store.matches.finish(mid, grant.token, mpb.MATCH_STATUS_FINISHED,
                                           mpb.MatchResult().SerializeToString(), 0, None)
        finally:
            await store.close()

    asyncio.run(scenario())


def test_pooled_connections_are_checked_after_a_store_restart() -> None:
    """The store restarts while the pool holds idle connections to it: the next
    calls find them closed by the server that went away (a PING first) and go on, on
    new connections, instead of failing with ``Connection closed by server``."""
    from twistarena.storage.connection import HEALTH_CHECK_S, Connections

    from tests.support.valkey import ValkeyProcess

    valkey = ValkeyProcess().start()

    async def main() -> None:
        conn = Connections(valkey.url)
        try:
            # Eight calls at once: eight pooled connections, idle afterwards.
            await asyncio.gather(*(conn.redis.blpop([f"none:{i}"], 0.05) for i in range(8)))
            valkey.kill()
            valkey.start()
            # The pool's connections are idle past the check's interval, as a node's
            # are while its store restarts.
            await asyncio.sleep(HEALTH_CHECK_S + 0.2)
            answers = await asyncio.gather(*(conn.redis.incr(f"after:{i}") for i in range(8)))
            assert answers == [1] * 8  # each sent once, on a live connection
        finally:
            await conn.close()

    try:
        asyncio.run(main())
    finally:
        valkey.stop()


def test_an_end_refused_to_a_fenced_node_leaves_the_match_in_the_live_indexes(
        valkey: Any) -> None:
    """The end's writes take the match off the live set and the lease index in the
    same pipeline as the fenced script: a refused end puts it back, else the
    RUNNING match of a node that then dies is never taken over."""
    mid = secrets.token_hex(8)
    record = MatchRecord(mid, mpb.MatchOptions(game_id="twhist", num_players=2), seed=5,
                         status=mpb.MATCH_STATUS_RUNNING, created_ms=1_000)
    result = mpb.MatchResult(scores=[3, 1]).SerializeToString()

    async def scenario() -> None:
        a, b = await _stores(valkey.url, "node-a", "node-b")
        try:
            grant = await a.matches.create(record, claim=True)
            assert isinstance(grant, Grant)
            token_b = await b.matches.claim(mid)
            with pytest.raises(FencedError):
                await a.matches.finish(mid, grant.token, mpb.MATCH_STATUS_FINISHED, result, 0,
                                       None)
            assert await a.conn.redis.sismember(keys.LIVE_MATCHES, mid)
            assert await a.conn.redis.zscore(keys.MATCH_LEASES, mid) is not None
            # Once the new owner ended it, a late refused end does not bring it back.
            await b.matches.finish(mid, token_b, mpb.MATCH_STATUS_FINISHED, result, 0, None)
            with pytest.raises(FencedError):
                await a.matches.finish(mid, grant.token, mpb.MATCH_STATUS_FINISHED, result, 0,
                                       None)
            assert not await a.conn.redis.sismember(keys.LIVE_MATCHES, mid)
            assert await a.conn.redis.zscore(keys.MATCH_LEASES, mid) is None
        finally:
            await _close([a, b])

    asyncio.run(scenario())


def test_a_stored_end_is_final_to_every_writer(valkey: Any) -> None:
    """Once a match's end is stored, no end, append or renewal of anyone goes
    through (the same end again from its writer is a retry, and is kept); a
    second referee of the match learns it from the refusal and stops."""
    mid = secrets.token_hex(8)
    record = MatchRecord(mid, mpb.MatchOptions(game_id="twhist", num_players=2), seed=5,
                         status=mpb.MATCH_STATUS_RUNNING, created_ms=1_000)
    voided = mpb.MatchResult(scores=[0, 0], reason=mpb.END_REASON_VOIDED).SerializeToString()
    completed = mpb.MatchResult(scores=[3, 1]).SerializeToString()

    async def scenario() -> None:
        [a] = await _stores(valkey.url, "node-a")
        try:
            grant = await a.matches.create(record, claim=True)
            assert isinstance(grant, Grant)
            entry = (0, 1, False)
            await a.appender.append(mid, grant.token, 0, [entry])
            await a.matches.finish(mid, grant.token, mpb.MATCH_STATUS_CANCELLED, voided, 1, entry)
            await a.matches.finish(mid, grant.token, mpb.MATCH_STATUS_CANCELLED, voided, 1, entry)
            with pytest.raises(FencedError):
                await a.appender.append(mid, grant.token, 1, [entry])
            with pytest.raises(EndStored):
                await a.matches.finish(mid, grant.token, mpb.MATCH_STATUS_FINISHED, completed,
                                       1, entry)
            assert await a.matches.leases.renew(mid, grant.token) == 0
            token = await a.matches.claim(mid)
            with pytest.raises(EndStored):
                await a.matches.finish(mid, token, mpb.MATCH_STATUS_FINISHED, completed, 1,
                                       entry)
            stored = await a.matches.load(mid)
            assert stored is not None and stored.status == mpb.MATCH_STATUS_CANCELLED
            assert len(await a.matches.load_log(mid)) == 1
        finally:
            await _close([a])

    asyncio.run(scenario())


def test_a_claim_the_store_lost_leaves_its_token_unusable(valkey: Any) -> None:
    """A store cut back to its last fsync can lose a claim, and the next claim then
    gets the same epoch: its token must still differ, so that the referee that
    held the lost claim (on the same node) cannot write with the new one."""
    mid = secrets.token_hex(8)

    async def scenario() -> None:
        [a] = await _stores(valkey.url, "node-a")
        lease = keys.match_lease(mid)
        try:
            await a.matches.claim(mid)
            before = await a.conn.redis.dump(lease)
            lost = await a.matches.claim(mid)
            await a.conn.redis.restore(lease, 0, before, replace=True)  # the cut
            again = await a.matches.claim(mid)
            assert again != lost
            with pytest.raises(FencedError):
                await a.appender.append(mid, lost, 0, [(0, 1, False)])
            await a.appender.append(mid, again, 0, [(0, 1, False)])
        finally:
            await _close([a])

    asyncio.run(scenario())
