"""``twistarena loadtest`` against a running server: bounded, and its JSON is sane."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from twistarena.clients.bench.processes import CLI


def test_loadtest_runs_a_bounded_load_and_reports_json(server: Any) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CLI, "loadtest", "--server", server.target, "--game", "twisted",
         "--players", "2", "--matches", "6", "--concurrency", "3", "--duration", "20",
         "--json"], capture_output=True, text=True, timeout=90)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["matches_completed"] == 6
    assert report["matches_per_s"] > 0 and report["decisions_per_s"] > 0
    lat = report["latency_ms"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"]
    over = report["server_overhead_ms"]
    assert 0 <= over["p50"] <= over["p95"] <= over["p99"]
    assert isinstance(report["errors"], dict) and not report["errors"]
    assert report["elapsed_s"] <= 20.5 and report["processes"] == 2


def test_loadtest_stops_at_its_duration(server: Any) -> None:
    # Twhist with three seats: the shortest matches (about 70 decisions), so some
    # finish within the two seconds even on a loaded machine.
    out = subprocess.run(
        [sys.executable, "-c", CLI, "loadtest", "--server", server.target, "--game",
         "twhist", "--players", "3", "--matches", "100000", "--concurrency", "4",
         "--processes", "1", "--duration", "2", "--json"],
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert 0 < report["matches_completed"] < 100000
    assert report["elapsed_s"] <= 2.5 and report["processes"] == 1
