"""The store's versions on a real Valkey: immutable records, archives stored once
per content, the active version, and match reports added up once each."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import replace
from typing import Any

from twistarena.storage import Holder, MatchReport, Store, VersionRecord, version_id
from twistarena.storage.versions import FAILURES_KEPT, STDERR_TAIL_BYTES, TooManyVersions


def _record(agent: str, archive: bytes, entry: str = "python bot.py",
            created_ms: int = 1000) -> VersionRecord:
    content = hashlib.sha256(archive).hexdigest()
    return VersionRecord(agent, version_id(content, entry, ""), content, entry, "", "log",
                         len(archive), 3 * len(archive), 2, created_ms)


def test_versions_are_immutable_and_archives_stored_once(valkey: Any) -> None:
    agent = secrets.token_hex(6)
    archive = secrets.token_bytes(300)

    async def scenario() -> None:
        store = Store(valkey.url, Holder("node-v", "", 2000))
        await store.connect()
        try:
            first, new = await store.versions.put(_record(agent, archive), archive)
            assert new
            again, new = await store.versions.put(replace(first, created_ms=5), archive)
            assert not new and again == first  # the stored record is left as it was
            other, new = await store.versions.put(
                _record(agent, archive, "./bot", created_ms=2000), archive)
            assert new and other.version_id != first.version_id
            assert other.content_hash == first.content_hash
            assert await store.versions.ids(agent) == [other.version_id, first.version_id]
            assert await store.versions.archive(first.content_hash) == archive
            assert await store.versions.archive("0" * 64) is None
            assert await store.versions.active(agent) is None
            assert not await store.versions.activate(agent, "f" * 64)
            assert await store.versions.activate(agent, first.version_id)
            assert await store.versions.active(agent) == first
            assert [v.version_id for v in await store.versions.all_of(agent)] == \
                await store.versions.ids(agent)
            light = await store.versions.all_of(agent, logs_of={other.version_id})
            assert [v.build_log for v in light] == ["log", ""]
            assert replace(light[1], build_log="log") == first
        finally:
            await store.close()

    asyncio.run(scenario())


def test_match_reports_add_up_once_each_and_keep_the_newest_failures(valkey: Any) -> None:
    agent = secrets.token_hex(6)
    vid = "a" * 64

    async def scenario() -> None:
        store = Store(valkey.url, Holder("node-v", "", 2000))
        await store.connect()
        try:
            clean = MatchReport("m0:0", "m0", decisions=10, cpu_ms_total=20.0, cpu_ms_max=5.0)
            assert await store.versions.record_match(agent, vid, clean)
            assert not await store.versions.record_match(agent, vid, clean)
            for i in range(1, FAILURES_KEPT + 2):
                assert await store.versions.record_match(agent, vid, MatchReport(
                    f"m{i}:1", f"m{i}", decisions=10, cpu_ms_total=10.0, cpu_ms_max=float(i),
                    crashes=1, timeouts=2, illegal_outputs=1, restarts=1,
                    stderr_tail=b"x" * STDERR_TAIL_BYTES + f"end {i}".encode()))
            stats = (await store.versions.stats(agent, [vid, "b" * 64]))
            got, untouched = stats[vid], stats["b" * 64]
            n = FAILURES_KEPT + 1
            assert (got.matches, got.decisions, got.crashes, got.timeouts,
                    got.illegal_outputs, got.restarts) == (n + 1, 10 * (n + 1), n, 2 * n, n, n)
            assert got.cpu_ms_mean == (20.0 + 10.0 * n) / (10 * (n + 1))
            assert got.cpu_ms_max == float(n)
            assert [f.match_id for f in got.failures] == [f"m{i}" for i in range(n, 1, -1)]
            tail = got.failures[0].stderr_tail
            assert len(tail) == STDERR_TAIL_BYTES and tail.endswith(f"end {n}")
            assert await store.versions.record_match(agent, vid, MatchReport(
                "garbage:0", "garbage", crashes=1, stderr_tail=b"\xff" * STDERR_TAIL_BYTES))
            [garbage, *_] = (await store.versions.stats(agent, [vid]))[vid].failures
            assert len(garbage.stderr_tail.encode()) <= STDERR_TAIL_BYTES
            assert untouched.matches == 0 and untouched.failures == []
            assert (await store.versions.stats(agent, [vid], failures_of=()))[vid].failures == []
        finally:
            await store.close()

    asyncio.run(scenario())


def test_the_cap_on_versions_holds_under_concurrent_submissions(valkey: Any) -> None:
    agent = secrets.token_hex(6)
    archives = [secrets.token_bytes(100) for _ in range(6)]

    async def scenario() -> None:
        store = Store(valkey.url, Holder("node-v", "", 2000))
        await store.connect()
        try:
            outcomes = await asyncio.gather(
                *(store.versions.put(_record(agent, a), a, most=2) for a in archives),
                return_exceptions=True)
            assert sum(isinstance(o, TooManyVersions) for o in outcomes) == 4
            assert len(await store.versions.ids(agent)) == 2
            _kept, new = await store.versions.put(*_again(outcomes), most=2)
            assert not new  # a version it has is answered whatever the cap
        finally:
            await store.close()

    def _again(outcomes: list[Any]) -> tuple[VersionRecord, bytes]:
        index = next(i for i, o in enumerate(outcomes) if not isinstance(o, Exception))
        return _record(agent, archives[index]), archives[index]

    asyncio.run(scenario())
