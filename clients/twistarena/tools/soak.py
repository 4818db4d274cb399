"""A long run of real agents against one served node, sampled for growth.

``twistarena soak`` starts ``twistarena serve`` (embedded Valkey) as a child,
keeps ``--concurrency`` matches in flight with the load workers of
``tools/load.py`` for ``--duration`` seconds, and every ``--interval`` samples
the node's RSS and open file descriptors and the store's memory and key
count. The report says how each grew after the warm-up (the first fifth of
the run), so a leak shows as steady growth rather than a one-off step.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from . import load
from .processes import ServerProcess

#: The part of the run that counts as warm-up in the growth figures.
WARM_UP = 0.2


@dataclass(frozen=True, slots=True)
class Sample:
    t_s: float
    rss_bytes: int
    fds: int
    store_memory_bytes: int
    store_keys: int


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def store_url(lines: Sequence[str], data_dir: Path) -> str:
    """The embedded Valkey's URL: its address from the node's JSON log, its password
    from the data directory (the log never has it)."""
    password = (data_dir / "valkey-password").read_text().strip()
    for line in lines:
        if '"embedded_valkey"' in line:
            logged: dict[str, Any] = json.loads(line[line.index("{"):])
            return f"redis://:{password}@{logged['address']}/0"
    raise RuntimeError("the node did not log its embedded store's address")


def growth(samples: Sequence[Sample], field: str) -> dict[str, float]:
    """First, after-warm-up and last value of ``field``, and growth since warm-up."""
    values = [getattr(s, field) for s in samples]
    if not values:
        return {}
    warm = values[min(len(values) - 1, int(len(values) * WARM_UP))]
    last = values[-1]
    return {"first": values[0], "warm": warm, "last": last, "max": max(values),
            "growth_after_warm_up": round((last - warm) / warm, 4) if warm else 0.0}


async def run_soak(duration: float, concurrency: int, game: str, players: int,
                   interval: float, serve_args: Sequence[str] = (), processes: int = 1,
                   on_sample: Callable[[Sample], None] | None = None) -> dict[str, Any]:
    data_dir = Path(tempfile.mkdtemp(prefix="twistarena-soak-"))
    node = ServerProcess.serve("--log-format", "json", "--data-dir", str(data_dir),
                               *serve_args)
    address = await asyncio.to_thread(node.start)
    store = aioredis.Redis.from_url(store_url(node.lines, data_dir))
    samples: list[Sample] = []
    started = time.monotonic()

    async def sample_forever() -> None:
        while True:
            info: Any = await store.info("memory")
            sample = Sample(round(time.monotonic() - started, 2), node.rss_bytes(),
                            open_fds(node.pid), int(info["used_memory"]),
                            int(await store.dbsize()))
            samples.append(sample)
            if on_sample is not None:
                on_sample(sample)
            await asyncio.sleep(interval)

    sampler = asyncio.ensure_future(sample_forever())
    try:
        report = await load.run_load([address], game, players, 10**9, concurrency, duration,
                                     processes)
    finally:
        sampler.cancel()
        await store.aclose()
        await asyncio.to_thread(node.stop)
        shutil.rmtree(data_dir, ignore_errors=True)
    return {
        "duration_s": duration, "interval_s": interval, "concurrency": concurrency,
        "game": game, "players": players,
        "matches_completed": report["matches_completed"], "decisions": report["decisions"],
        "errors": report["errors"],
        "rss": growth(samples, "rss_bytes"), "fds": growth(samples, "fds"),
        "store_memory": growth(samples, "store_memory_bytes"),
        "store_keys": growth(samples, "store_keys"),
        "samples": [asdict(s) for s in samples],
    }
