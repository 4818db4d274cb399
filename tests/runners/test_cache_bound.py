"""A runner's version cache stays within its bound: small uploads that unpack to
a lot (a file of zeros) push out the versions used least recently, never one a
seat is playing, and the cache's bytes are in the runner's metrics."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from prometheus_client import REGISTRY
from twistarena.clients.cli.runners import RunnerSet
from twistarena.hosted.archives import MIB
from twistarena.runner.cache import VersionCache, content_hash, disk_bytes

from tests.support.hosting import FIRST_LEGAL, pack

#: Each version: a bot and 1 MiB of zeros (a few KiB packed).
ZEROS = b"\0" * MIB


def version(i: int) -> bytes:
    return pack({"bot.py": FIRST_LEGAL + f"# {i}\n", "weights.bin": ZEROS})


def metric(name: str) -> float:
    value = REGISTRY.get_sample_value(name)
    assert value is not None, name
    return value


def test_the_cache_keeps_within_its_bound_and_never_drops_a_version_in_play(
        tmp_path: Path) -> None:
    archives = [version(i) for i in range(6)]
    assert max(len(a) for a in archives) < 64 * 1024  # small uploads...
    bound = 3 * MIB + MIB // 2  # ...of which three fit

    async def scenario() -> None:
        cache = VersionCache(tmp_path / "cache", max_bytes=bound)
        release = asyncio.Event()
        playing: asyncio.Future[Path] = asyncio.get_running_loop().create_future()

        async def seat(archive: bytes, hold: bool) -> Path:
            async def fetch() -> bytes:
                return archive

            path = await cache.ensure(content_hash(archive), fetch)
            if hold:
                playing.set_result(path)
                await release.wait()
            return path

        held = asyncio.ensure_future(seat(archives[0], hold=True))
        first = await playing
        evictions = metric("twistarena_runner_cache_evictions_total")
        for archive in archives[1:]:
            await asyncio.ensure_future(seat(archive, hold=False))
            on_disk = disk_bytes(cache.root)
            assert on_disk <= bound + 64 * 1024, on_disk
            assert (first / "bot.py").is_file(), "the version in play was removed"
            assert metric("twistarena_runner_cache_bytes") == cache.total_bytes
        assert metric("twistarena_runner_cache_max_bytes") == bound
        assert metric("twistarena_runner_cache_evictions_total") - evictions >= 3
        # The newest versions stayed; the oldest idle ones went.
        assert cache.has(content_hash(archives[-1]))
        assert not cache.has(content_hash(archives[1]))
        release.set()
        await held

        # A runner started again on the directory knows its bytes and its order.
        again = VersionCache(tmp_path / "cache", max_bytes=2 * MIB)
        assert again.total_bytes == sum(disk_bytes(p) for p in again.root.iterdir())
        again.evict()
        assert again.total_bytes <= 2 * MIB
        assert again.has(content_hash(archives[-1]))

    asyncio.run(scenario())


def test_serve_bounds_the_cache_of_the_runners_it_starts(tmp_path: Path) -> None:
    args = argparse.Namespace(runner_slots=2, sandbox="none", runner_cache_max_mb=64.0,
                              log_format="json", tls_cert=None)
    runners = RunnerSet(2, "127.0.0.1:1", "rt_x", args)
    try:
        argvs = [runner.argv for runner in runners.runners]
        assert [a[a.index("--cache-max-mb") + 1] for a in argvs] == ["64.0", "64.0"]
        # A cache each: one runner never removes a version the other plays.
        dirs = {a[a.index("--cache-dir") + 1] for a in argvs}
        assert len(dirs) == 2
    finally:
        runners.stop()
