"""The loadtest's outputs: the HTML report in headless Chromium, the timeline, compare."""

from __future__ import annotations

import asyncio
import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from twistarena.tools import loadreport
from twistarena.tools.processes import CLI

from tests.support.browser import browser_page, find_browser
from tests.support.proxy import TcpProxy


def _run(target: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, "loadtest", "--server", target, "--game", "twhist",
         "--players", "3", "--processes", "1", "--json", *extra],
        capture_output=True, text=True, timeout=90)


def test_the_html_report_renders_its_charts_offline_in_chromium(server: Any,
                                                                tmp_path: Path) -> None:
    chromium = find_browser()
    html_path, csv_path = tmp_path / "run.html", tmp_path / "timeline.csv"
    out = _run(server.target, "--rate", "4", "--duration", "3", "--report", str(html_path),
               "--timeline", str(csv_path))
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    page_text = html_path.read_text()
    assert "http://" not in page_text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page_text and "<script" not in page_text
    with csv_path.open() as handle:
        rows = list(csv.DictReader(handle))
    assert sum(int(r["decisions"]) for r in rows) == report["decisions"]
    assert sum(int(r["matches"]) for r in rows) == report["matches_completed"]

    async def look() -> tuple[Any, list[str]]:
        async with browser_page(chromium) as page:
            await page.goto(html_path.as_uri())
            drawn = await page.wait_for(
                "(() => { const c = document.querySelectorAll('svg.chart');"
                " const lines = [...document.querySelectorAll('polyline.series')]"
                "   .filter(p => p.getBBox().width > 0).length;"
                " const bars = [...document.querySelectorAll('rect.bar')]"
                "   .filter(r => r.getBBox().height > 0).length;"
                " return c.length === 4 && lines >= 4 && bars > 0 ?"
                "   {charts: c.length, lines, bars} : null; })()",
                what="the four charts drawn")
            await page.screenshot("loadtest-report")
            return drawn, page.errors

    drawn, errors = asyncio.run(look())
    assert drawn["charts"] == 4 and drawn["lines"] >= 4 and drawn["bars"] > 0
    assert errors == []


def test_compare_flags_a_real_regression_and_not_an_unchanged_report(
        server: Any, tmp_path: Path) -> None:
    def run(target: str, name: str) -> Path:
        out = _run(target, "--concurrency", "2", "--duration", "5", "--matches", "100000")
        assert out.returncode == 0, out.stderr[-2000:]
        path = tmp_path / name
        path.write_text(out.stdout)
        return path

    first = run(server.target, "a.json")
    proxy = TcpProxy(int(server.target.rsplit(":", 1)[1])).start()
    try:
        proxy.delay = 0.005  # every chunk of the slowed server waits 5 ms
        slowed = run(proxy.address, "c.json")
    finally:
        proxy.stop()

    def compare(a: Path, b: Path) -> dict[str, dict[str, Any]]:
        out = subprocess.run([sys.executable, "-c", CLI, "loadtest", "compare", str(a), str(b),
                              "--json"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr[-2000:]
        return {row["figure"]: row for row in json.loads(out.stdout.strip().splitlines()[-1])}

    # A report against itself changes nothing. Whether two real reruns stay within the
    # noise depends on what else the machine does, so that judgement is checked on fixed
    # figures in test_noise_judgement instead.
    same = compare(first, first)
    assert not any(row["beyond_noise"] for row in same.values()), same
    assert all(row["change"] == 0 for row in same.values()), same
    slower = compare(first, slowed)
    assert slower["decision p50 ms"]["beyond_noise"], slower
    assert slower["decision p50 ms"]["change"] > 0.5
    assert slower["decisions/s"]["beyond_noise"] and slower["decisions/s"]["change"] < 0


def test_noise_judgement() -> None:
    steady = [100.0, 103, 98, 101, 99, 102, 100, 97]
    assert loadreport.judge(steady, [v + 1 for v in steady]) == pytest.approx(
        (0.01, False), abs=0.001)
    change, real = loadreport.judge(steady, [v * 1.3 for v in steady])
    assert real and change == pytest.approx(0.3)
    # A big change in noisy runs is not called real.
    assert not loadreport.judge([10.0, 200, 15, 180], [30.0, 170, 40, 220])[1]


def test_find_max_raises_the_rate_until_a_threshold_breaks_and_reads_the_server(
        valkey: Any, tmp_path: Path) -> None:
    from tests.support.nodes import Node
    from tests.support.valkey import free_port

    metrics_port = free_port()
    node = Node("knee", valkey.url, extra=["--metrics-port", str(metrics_port),
                                           "--creates-per-minute", "0",
                                           "--live-per-client", "0"]).start()
    try:
        out = subprocess.run(
            [sys.executable, "-c", CLI, "loadtest", "--server", node.address, "--game",
             "twhist", "--players", "3", "--processes", "1", "--find-max", "--rate", "2",
             "--step-factor", "2", "--max-steps", "6", "--duration", "1.5",
             "--concurrency", "2", "--threshold", "dropped<1%",
             "--metrics", f"http://127.0.0.1:{metrics_port}/metrics",
             "--report", str(tmp_path / "knee.html"), "--json"],
            capture_output=True, text=True, timeout=180)
    finally:
        node.cleanup()
    assert out.returncode == 0, out.stderr[-2000:]
    search = json.loads(out.stdout.strip().splitlines()[-1])["find_max"]
    steps = search["steps"]
    # Rates double until two in flight can no longer take them: the last step broke.
    assert [s["rate"] for s in steps] == [2 * 2 ** k for k in range(len(steps))]
    assert not steps[-1]["held"] and all(s["held"] for s in steps[:-1])
    assert steps[-1]["matches_dropped"] > 0
    knee = search["knee"]
    assert knee == steps[-2] and knee["decisions_per_s"] > 0
    server = knee["server"]
    assert server["decisions"] > 0 and server["cpu_ms_per_decision"] > 0
    assert server["append_batch_mean"] >= 1 and server["errors"] == 0
    assert "Knee search" in (tmp_path / "knee.html").read_text()


def test_workers_on_several_machines_merge_their_histograms_through_redis(
        server: Any, valkey: Any) -> None:
    from twistarena.tools import loadplan

    run_id = f"merge-{id(server)}"
    workers = [subprocess.Popen(
        [sys.executable, "-c", CLI, "loadtest", "--server", server.target, "--game", "twhist",
         "--players", "3", "--processes", "1", "--matches", "3", "--concurrency", "2",
         "--seed", str(seed), "--push-redis", valkey.url, "--run-id", run_id, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for seed in (1, 2)]
    reports = []
    for proc in workers:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err[-2000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    merged = subprocess.run(
        [sys.executable, "-c", CLI, "loadtest", "merge", "--redis", valkey.url, "--run-id",
         run_id, "--workers", "2", "--timeout", "30", "--json"],
        capture_output=True, text=True, timeout=60)
    assert merged.returncode == 0, merged.stderr[-2000:]
    report = json.loads(merged.stdout.strip().splitlines()[-1])
    assert report["runs_merged"] == 2 and report["matches_completed"] == 6
    assert report["decisions"] == sum(r["decisions"] for r in reports)
    assert report["latency_ms"]["count"] == report["decisions"]
    both = loadplan.merge(r["histograms"]["latency"] for r in reports)
    assert list(loadplan.merge([report["histograms"]["latency"]]).counts) == list(both.counts)
