"""``twistarena soak`` for a few seconds: bounded in time, samples every figure; with
``--hosted``, a cluster with a runner, checked and stopped at the end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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


def test_hosted_soak_plays_on_a_cluster_checks_every_count_and_stops_its_processes(
        tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", ENTRY, "soak", "--hosted", "--duration", "2", "--nodes", "2",
         "--runners", "1", "--games-per-pairing", "1", "--keep-dir", str(tmp_path / "run"),
         "--json"],
        capture_output=True, text=True, timeout=150, cwd=str(ROOT), check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    # At least the two tournaments started at once, played to their end.
    assert report["tournaments"] >= 2 and report["drained"]
    assert report["matches_played"] >= 6
    assert report["stats_equal"]
    assert [v["stats_matches"] for v in report["versions"]] == \
        [v["matches_played"] for v in report["versions"]]
    assert report["reports_refused"] == report["matches_waiting"] == 0
    assert report["seats_played_twice"] == 0
    # A version submitted during the load played its practice match.
    assert report["latecomer"]["reason"] in ("END_REASON_COMPLETED", "END_REASON_FORFEIT")
    # The cluster (nodes, runner, Valkey) stopped within the run.
    assert report["cluster_exit_code"] == 0
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path / "run")], capture_output=True,
                              text=True, check=False)
    assert leftover.stdout == ""
