"""``twistarena soak`` for a few seconds: bounded in time, samples every figure."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.process import ENTRY, ROOT


@pytest.mark.clock
def test_soak_samples_the_node_and_its_store_and_stops_on_time() -> None:
    out = subprocess.run(
        [sys.executable, "-c", ENTRY, "soak", "--duration", "4", "--interval", "0.5",
         # Twhist's short matches: some finish within the 4 s even on a slow machine.
         "--game", "twhist", "--players", "3", "--concurrency", "3",
         "--retain-finished", "30", "--json"],
        capture_output=True, text=True, timeout=90, cwd=str(ROOT), check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["matches_completed"] > 0
    samples = report["samples"]
    assert len(samples) >= 4
    assert samples[-1]["t_s"] < 4 + 30
    for sample in samples:
        assert sample["rss_bytes"] > 0 and sample["fds"] > 0
        assert sample["store_memory_bytes"] > 0 and sample["store_keys"] >= 0
    assert {"first", "warm", "last", "max", "growth_after_warm_up"} <= set(report["rss"])
