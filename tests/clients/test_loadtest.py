"""``twistarena loadtest`` against a running server: bounded, and its JSON is sane."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from twistarena.tools.processes import CLI


@pytest.mark.clock
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


@pytest.mark.clock
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


def _loadtest(server: Any, *extra: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, "loadtest", "--server", server.target, "--game", "twhist",
         "--players", "3", "--json", *extra], capture_output=True, text=True, timeout=timeout)


def test_open_model_starts_matches_on_its_schedule_and_counts_from_it(server: Any) -> None:
    out = _loadtest(server, "--rate", "4", "--duration", "2", "--concurrency", "40",
                    "--matches", "1000")
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["model"] == "open" and report["processes"] == 2
    # 4/s for 2 s: 8 arrivals, all started (none dropped with room for 40).
    assert report["matches_scheduled"] == 8 and report["matches_started"] == 8
    assert report["matches_dropped"] == 0
    assert report["matches_completed"] == 8 and not report["errors"]
    for name in ("latency_ms", "start_latency_ms", "match_latency_ms"):
        lat = report[name]
        assert 0 < lat["p50"] <= lat["p99"] <= lat["p99.9"] <= lat["max"], name
    assert report["start_latency_ms"]["count"] == 8
    assert report["latency_ms"]["count"] == report["decisions"]
    # A match is over after it was created.
    assert report["match_latency_ms"]["p50"] > report["start_latency_ms"]["p50"]


def test_open_model_drops_what_exceeds_its_cap_and_says_so(server: Any) -> None:
    # Each answer waits 20 ms, so a 3-seat Twhist match (at least 60 decisions, one
    # seat at a time) lasts more than a second however fast the server is: the
    # two slots stay taken for the whole second of arrivals, and every later
    # arrival is dropped.
    out = _loadtest(server, "--rate", "20", "--duration", "1", "--concurrency", "2",
                    "--processes", "1", "--matches", "1000", "--think-ms", "fixed:20")
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["matches_scheduled"] == 20
    assert report["matches_started"] == 2
    assert report["matches_dropped"] == 18


def test_thresholds_fail_the_run_and_name_the_rule_or_pass_it(server: Any) -> None:
    failed = _loadtest(server, "--matches", "2", "--concurrency", "2", "--processes", "1",
                       "--threshold", "p99<1us", "--threshold", "errors<5%")
    assert failed.returncode == 3, failed.stderr[-2000:]
    assert "threshold failed: p99<1us" in failed.stderr
    assert "errors<5%" not in failed.stderr.split("threshold failed:")[1]
    report = json.loads(failed.stdout.strip().splitlines()[-1])
    assert [t["ok"] for t in report["thresholds"]] == [False, True]
    passed = _loadtest(server, "--matches", "2", "--concurrency", "2", "--processes", "1",
                       "--threshold", "p99<60s", "--threshold", "errors<5%")
    assert passed.returncode == 0, passed.stderr[-2000:]
    assert "threshold failed" not in passed.stderr


def test_think_time_a_mix_of_tables_and_agents_that_drop_and_resume(server: Any) -> None:
    out = _loadtest(server, "--matches", "6", "--concurrency", "3", "--processes", "1",
                    "--mix", "twhist:3:random*2,twisted:2:heuristic",
                    "--think-ms", "fixed:20", "--disconnect", "0.5", "--duration", "60")
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["matches_completed"] == 6 and not report["errors"], report["errors"]
    tables = report["matches_by_table"]
    assert set(tables) == {"twhist:3:random", "twisted:2:heuristic"}, tables
    assert sum(tables.values()) == 6
    # Every agent that dropped its stream resumed it and played on to the end.
    assert report["agents_disconnected"] > 0
    assert report["agents_resumed"] == report["agents_disconnected"]
    # Each answer waited 20 ms: matches of dozens of decisions took that long...
    assert report["match_latency_ms"]["p50"] >= 20 * 10
    # ... but the think time is not counted as the server's latency.
    assert report["latency_ms"]["p50"] < 20
