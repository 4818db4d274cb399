"""The pure parts of the load test: arrival schedules, HDR histograms merged exactly, thresholds."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys

import pytest
from twistarena.tools import loadplan


def test_a_constant_rate_starts_evenly_and_exactly_rate_times_duration() -> None:
    times = list(loadplan.arrival_times(loadplan.constant_rate(5, 2)))
    assert len(times) == 10
    assert times == pytest.approx([0.2 * n for n in range(10)])


def test_stages_ramp_linearly_from_zero_like_k6() -> None:
    stages = loadplan.parse_stages("2s:10,1s:10,2s:0")
    assert stages == [loadplan.Segment(2, 0, 10), loadplan.Segment(1, 10, 10),
                      loadplan.Segment(2, 10, 0)]
    times = list(loadplan.arrival_times(stages))
    # Integral of the rate: 10 + 10 + 10 arrivals.
    assert len(times) == 30
    assert times == sorted(times) and times[-1] < 5
    ramp_up = [t for t in times if t < 2]
    # Ramping up, the gaps shrink; at steady rate they are 0.1 s.
    gaps = [b - a for a, b in itertools.pairwise(ramp_up)]
    assert all(g2 < g1 for g1, g2 in itertools.pairwise(gaps))
    steady = [t for t in times if 2 <= t < 3]
    assert len(steady) == 10


def test_workers_share_one_schedule_without_losing_or_doubling_an_arrival() -> None:
    stages = loadplan.parse_stages("1s:7,500ms:3")
    whole = list(enumerate(loadplan.arrival_times(stages)))
    shared = sorted(a for k in range(3) for a in loadplan.worker_arrivals(stages, k, 3))
    assert shared == whole


@pytest.mark.parametrize("bad", ["30s", "x:5", "30s:-1", "0s:5", "", "5:abc"])
def test_malformed_stages_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        loadplan.parse_stages(bad)


WORKER = """
import random, sys
from twistarena.tools import loadplan
rng = random.Random(int(sys.argv[1]))
h = loadplan.new_histogram()
for _ in range(5000):
    loadplan.record_seconds(h, rng.lognormvariate(-6, 1.5))
print(loadplan.encode(h))
"""


def test_histograms_from_several_processes_merge_into_the_histogram_of_all_samples() -> None:
    seeds = [11, 22, 33]
    encoded = [subprocess.run([sys.executable, "-c", WORKER, str(seed)], capture_output=True,
                              text=True, timeout=60, check=True).stdout.strip()
               for seed in seeds]
    merged = loadplan.merge(encoded)
    single = loadplan.new_histogram()
    for seed in seeds:
        rng = random.Random(seed)
        for _ in range(5000):
            loadplan.record_seconds(single, rng.lognormvariate(-6, 1.5))
    assert merged.get_total_count() == single.get_total_count() == 15000
    assert list(merged.counts) == list(single.counts)
    assert loadplan.summary_ms(merged) == loadplan.summary_ms(single)
    # And not trivially: one process's histogram alone differs.
    assert list(loadplan.merge(encoded[:1]).counts) != list(single.counts)


def test_summary_reports_up_to_p99_9_and_max() -> None:
    h = loadplan.new_histogram()
    for ms in range(1, 1001):
        loadplan.record_seconds(h, ms / 1000)
    s = loadplan.summary_ms(h)
    assert s["p50"] == pytest.approx(500, rel=0.01)
    assert s["p99"] == pytest.approx(990, rel=0.01)
    assert s["p99.9"] == pytest.approx(999, rel=0.01)
    assert s["max"] == pytest.approx(1000, rel=0.01) and s["count"] == 1000


def _report(p99: float, errors: int, scheduled: int = 1000) -> dict[str, object]:
    lat = {"p50": 1.0, "p90": 2.0, "p95": 3.0, "p99": p99, "p99.9": p99 * 2, "mean": 1.0,
           "max": p99 * 3}
    return {"latency_ms": lat, "start_latency_ms": lat, "match_latency_ms": lat,
            "errors": {"UNAVAILABLE": errors} if errors else {},
            "matches_scheduled": scheduled, "matches_started": scheduled,
            "matches_dropped": 0, "matches_late": 0}


def test_thresholds_pass_and_fail_as_they_should() -> None:
    rules = [loadplan.Threshold.parse("p99<100ms"), loadplan.Threshold.parse("errors<0.1%")]
    good = loadplan.check_thresholds(rules, _report(p99=99.0, errors=0))
    assert [r["ok"] for r in good] == [True, True]
    slow = loadplan.check_thresholds(rules, _report(p99=100.0, errors=0))
    assert [r["ok"] for r in slow] == [False, True] and slow[0]["value"] == 100.0
    # 1 error in 1000 matches is exactly 0.1%: not below 0.1%.
    failing = loadplan.check_thresholds(rules, _report(p99=5.0, errors=1))
    assert [r["ok"] for r in failing] == [True, False] and failing[1]["value"] == 0.1
    fine = loadplan.check_thresholds(rules, _report(p99=5.0, errors=1, scheduled=2000))
    assert [r["ok"] for r in fine] == [True, True]


def test_threshold_units_and_histograms() -> None:
    t = loadplan.Threshold.parse("start.p99.9<=1.5s")
    assert (t.histogram, t.metric, t.op, t.limit) == ("start", "p99.9", "<=", 1500.0)
    assert loadplan.Threshold.parse("max<250us").limit == 0.25
    for bad in ("p99", "p99<5%", "errors<5ms", "latency<5ms", "p99=5ms"):
        with pytest.raises(ValueError):
            loadplan.Threshold.parse(bad)


def test_think_time_distributions() -> None:
    rng = random.Random(5)
    assert loadplan.ThinkTime.parse("fixed:20").seconds(rng) == 0.02
    uniform = [loadplan.ThinkTime.parse("uniform:10:30").seconds(rng) for _ in range(500)]
    assert min(uniform) >= 0.010 and max(uniform) <= 0.030
    lognormal = sorted(loadplan.ThinkTime.parse("lognormal:20:0.5").seconds(rng)
                       for _ in range(2001))
    assert lognormal[1000] == pytest.approx(0.020, rel=0.1)  # the median
    assert lognormal[-1] > 2 * lognormal[1000]  # and a long right tail
    for bad in ("fixed", "fixed:-1", "uniform:30:10", "gauss:1:2", "lognormal:20"):
        with pytest.raises(ValueError):
            loadplan.ThinkTime.parse(bad)


def test_a_mix_is_drawn_by_weight_and_the_same_for_a_seed() -> None:
    tables = loadplan.parse_mix("twhist:3:random*3,twisted:2:heuristic", ["twhist", "twisted"],
                                ["random", "heuristic"])
    drawn = [loadplan.pick_table(tables, n, seed=1).game for n in range(4000)]
    assert drawn == [loadplan.pick_table(tables, n, seed=1).game for n in range(4000)]
    assert drawn.count("twhist") / len(drawn) == pytest.approx(0.75, abs=0.03)
    for bad in ("twhist:3", "chess:2:random", "twhist:3:nobot", "twhist:x:random",
                "twhist:3:random*0"):
        with pytest.raises(ValueError):
            loadplan.parse_mix(bad, ["twhist"], ["random"])


def test_the_timeline_gives_each_second_the_percentiles_of_all_its_samples() -> None:
    """Two workers' per-second rows merge into rows whose figures are those of all samples."""
    rng = random.Random(3)
    samples: dict[int, list[float]] = {0: [], 2: []}  # second 1 has no sample at all
    workers = []
    for _ in range(2):
        rows = []
        for second in samples:
            h = loadplan.new_histogram()
            for _ in range(300):
                seconds = rng.lognormvariate(-7, 1)
                loadplan.record_seconds(h, seconds)
                samples[second].append(seconds)
            rows.append({"t": second, "matches": 1, "decisions": 300, "errors": 0,
                         "latency": loadplan.encode(h)})
        workers.append(rows)
    timeline = loadplan.merge_timelines(workers)
    assert [row["t"] for row in timeline] == [0, 1, 2]
    assert timeline[1] == {"t": 1, "matches": 0, "decisions": 0, "errors": 0,
                           "p50_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    for row in (timeline[0], timeline[2]):
        every = loadplan.new_histogram()
        for seconds in samples[row["t"]]:
            loadplan.record_seconds(every, seconds)
        want = loadplan.summary_ms(every)
        assert row["decisions"] == 600
        assert (row["p50_ms"], row["p99_ms"], row["max_ms"]) == (
            want["p50"], want["p99"], want["max"])
        assert row["p50_ms"] < row["p99_ms"] <= row["max_ms"]
