"""Whether the store keeps an AOF is learnt only from its answer: a store that
cannot answer, or is still loading its data (it says ``aof_enabled:0`` until
loaded), is never taken for one without an AOF, after which every write would
be acknowledged, and every end announced, without waiting for its fsync."""

from __future__ import annotations

import asyncio
import shutil
import threading

import pytest
import redis
from twistarena.storage import Store, StoreError
from twistarena.storage.leases import Holder

from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until


def _store(valkey: ValkeyProcess) -> Store:
    return Store(valkey.url, Holder("node-a", "127.0.0.1:9000", 2000))


def test_a_store_that_does_not_answer_keeps_its_aof() -> None:
    valkey = ValkeyProcess().start()

    async def scenario() -> bool:
        store = _store(valkey)
        await store.connect()
        assert store.matches.aof, "the test store keeps an AOF"
        valkey.kill()
        with pytest.raises(StoreError):
            await store.probe_persistence()
        return store.matches.aof

    try:
        assert asyncio.run(scenario())
    finally:
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)


def test_a_store_loading_its_data_keeps_its_aof() -> None:
    valkey = ValkeyProcess().start()
    restarted = ValkeyProcess(valkey.data_dir, port=valkey.port)
    raw = redis.Redis(port=valkey.port, socket_timeout=2)
    pipe = raw.pipeline(transaction=False)
    for batch in range(30):  # enough data that loading it takes a while
        for i in range(10_000):
            pipe.set(f"k{batch}:{i}", "x" * 100)
        pipe.execute()

    def loading() -> bool:
        try:
            return bool(raw.info("persistence").get("loading"))
        except redis.RedisError:
            return False

    async def scenario() -> bool:
        store = _store(valkey)
        await store.connect()
        assert store.matches.aof, "the test store keeps an AOF"
        valkey.kill()
        starting = threading.Thread(target=restarted.start)
        starting.start()
        try:
            await wait_until(loading, "the store loading its data", timeout=10, interval=0.001)
            with pytest.raises(StoreError):
                await store.probe_persistence()
        finally:
            await asyncio.to_thread(starting.join)
        return store.matches.aof

    try:
        assert asyncio.run(scenario())
    finally:
        raw.close()
        restarted.kill()
        valkey.kill()
        shutil.rmtree(valkey.data_dir, ignore_errors=True)
