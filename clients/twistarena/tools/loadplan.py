"""The pure parts of ``twistarena loadtest``: arrival schedules, latency histograms, thresholds.

Kept apart from the processes and sockets of ``load.py`` so that each can be
tested on its own: the schedule an open-model run must keep, the HDR
histograms that merge exactly across worker processes, and the pass/fail
rules (``--threshold``) that turn a run into a gate.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hdrh.histogram import HdrHistogram  # type: ignore[import-untyped]

#: Latencies are recorded in microseconds, from 1 us to one hour, 3 significant digits.
LOWEST_US = 1
HIGHEST_US = 3_600_000_000
SIGNIFICANT_DIGITS = 3
#: The percentiles every latency figure reports (besides mean and max).
PERCENTILES = (50.0, 90.0, 95.0, 99.0, 99.9)


# --- arrival schedules (the open model) -------------------------------------------------

@dataclass(frozen=True, slots=True)
class Segment:
    """``seconds`` during which the arrival rate moves linearly from ``start`` to ``end``/s."""

    seconds: float
    start: float
    end: float


def constant_rate(rate: float, seconds: float) -> list[Segment]:
    """``--rate R`` for ``--duration`` seconds."""
    if rate <= 0 or seconds <= 0:
        raise ValueError("the rate and the duration must be positive")
    return [Segment(seconds, rate, rate)]


def parse_stages(text: str) -> list[Segment]:
    """``"30s:5,60s:20,30s:0"``: ramp from 0 to 5/s over 30 s, to 20/s over 60 s, to 0.

    Like k6's ramping-arrival-rate, each stage ramps linearly from the previous
    target (0 before the first) to its own; durations take ``ms``, ``s`` or ``m``.
    """
    segments = []
    previous = 0.0
    for part in filter(None, (p.strip() for p in text.split(","))):
        duration, sep, target = part.partition(":")
        if not sep:
            raise ValueError(f"stage {part!r} is not DURATION:RATE (e.g. 30s:5)")
        try:
            rate = float(target)
        except ValueError as error:
            raise ValueError(f"stage {part!r}: {target!r} is not a rate") from error
        if rate < 0 or not math.isfinite(rate):
            raise ValueError(f"stage {part!r}: the rate must be finite and >= 0")
        seconds = parse_duration(duration)
        segments.append(Segment(seconds, previous, rate))
        previous = rate
    if not segments:
        raise ValueError("--stages needs at least one DURATION:RATE")
    return segments


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")


def parse_duration(text: str) -> float:
    """``"250ms"``, ``"30s"``, ``"2m"`` or plain seconds, as seconds (> 0)."""
    found = _DURATION.match(text)
    if not found:
        raise ValueError(f"{text!r} is not a duration (e.g. 30s, 250ms, 2m)")
    value = float(found.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}[
        found.group(2)]
    if value <= 0:
        raise ValueError(f"{text!r}: a duration must be positive")
    return value


def schedule_seconds(segments: Sequence[Segment]) -> float:
    return sum(s.seconds for s in segments)


def arrival_times(segments: Sequence[Segment], phase: float = 0.0) -> Iterator[float]:
    """Start times (seconds from the run's start) of every match of the schedule.

    The n-th arrival is where the integral of the rate reaches ``n + phase``:
    a constant 5/s starts matches at 0, 0.2, 0.4 ... s, a ramp starts them ever
    closer together. Every worker walks the same schedule and keeps its share
    (``worker_arrivals``), so P workers together start exactly what one would.
    """
    elapsed = 0.0
    total = phase
    n = 0
    for seg in segments:
        area = seg.seconds * (seg.start + seg.end) / 2
        while n < total + area:
            yield elapsed + _time_to_reach(seg, n - total)
            n += 1
        total += area
        elapsed += seg.seconds


def worker_arrivals(segments: Sequence[Segment], worker: int,
                    workers: int) -> Iterator[tuple[int, float]]:
    """The (index, start time) of the arrivals that fall to ``worker`` of ``workers``."""
    for n, t in enumerate(arrival_times(segments)):
        if n % workers == worker:
            yield n, t


def _time_to_reach(seg: Segment, amount: float) -> float:
    """Seconds into ``seg`` at which the integral of its rate reaches ``amount``."""
    if amount <= 0:
        return 0.0
    slope = (seg.end - seg.start) / seg.seconds
    if abs(slope) < 1e-12:
        return amount / seg.start
    # start*t + slope*t^2/2 = amount
    disc = seg.start * seg.start + 2 * slope * amount
    return min(seg.seconds, (-seg.start + math.sqrt(max(0.0, disc))) / slope)


# --- realistic agents: think time and a mix of tables --------------------------------

@dataclass(frozen=True, slots=True)
class ThinkTime:
    """``--think-ms``: ``fixed:20``, ``uniform:10:50`` or ``lognormal:20:0.5``.

    Lognormal takes the median in ms and the sigma of the underlying normal: a
    long right tail, like people and slow bots.
    """

    kind: str
    a: float
    b: float = 0.0

    @classmethod
    def parse(cls, text: str) -> ThinkTime:
        kind, _, rest = text.partition(":")
        try:
            numbers = [float(x) for x in rest.split(":")] if rest else []
        except ValueError as error:
            raise ValueError(f"--think-ms {text!r}: not numbers") from error
        wanted = {"fixed": 1, "uniform": 2, "lognormal": 2}
        if kind not in wanted or len(numbers) != wanted[kind] or any(
                n < 0 or not math.isfinite(n) for n in numbers):
            raise ValueError(f"--think-ms {text!r} is not fixed:MS, uniform:LOW:HIGH or "
                             f"lognormal:MEDIAN:SIGMA (numbers >= 0)")
        if kind == "uniform" and numbers[1] < numbers[0]:
            raise ValueError(f"--think-ms {text!r}: HIGH below LOW")
        return cls(kind, *numbers)

    def seconds(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.a / 1000
        if self.kind == "uniform":
            return rng.uniform(self.a, self.b) / 1000
        return rng.lognormvariate(math.log(max(self.a, 1e-3)), self.b) / 1000


@dataclass(frozen=True, slots=True)
class Table:
    """One kind of match in ``--mix``: a game, its seats, the bot on every seat, a weight."""

    game: str
    players: int
    bot: str
    weight: float = 1.0


def parse_mix(text: str, games: Iterable[str], bots: Iterable[str]) -> list[Table]:
    """``"twhist:3:random*2,tricky_twist:4:heuristic,twisted:2:ismcts-fast"``."""
    games, bots = set(games), set(bots)
    tables = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        spec, _, weight = part.partition("*")
        fields = spec.split(":")
        if len(fields) != 3:
            raise ValueError(f"--mix entry {part!r} is not GAME:PLAYERS:BOT[*WEIGHT]")
        game, players, bot = fields
        if game not in games:
            raise ValueError(f"--mix entry {part!r}: unknown game (known: {sorted(games)})")
        if bot not in bots:
            raise ValueError(f"--mix entry {part!r}: unknown bot (known: {sorted(bots)})")
        try:
            table = Table(game, int(players), bot, float(weight or 1))
        except ValueError as error:
            raise ValueError(f"--mix entry {part!r}: PLAYERS and WEIGHT are numbers") from error
        if table.players < 1 or table.weight <= 0:
            raise ValueError(f"--mix entry {part!r}: PLAYERS and WEIGHT must be positive")
        tables.append(table)
    if not tables:
        raise ValueError("--mix needs at least one GAME:PLAYERS:BOT")
    return tables


def pick_table(tables: Sequence[Table], n: int, seed: int) -> Table:
    """The kind of match number ``n``: a weighted draw, the same for a seed on every run."""
    return random.Random(seed * 7_919 + n).choices(
        tables, weights=[t.weight for t in tables])[0]


# --- latency histograms ---------------------------------------------------------------

def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


def record_seconds(histogram: HdrHistogram, seconds: float) -> None:
    """Record one latency given in seconds (clamped into the histogram's range)."""
    histogram.record_value(min(HIGHEST_US, max(LOWEST_US, round(seconds * 1e6))))


def encode(histogram: HdrHistogram) -> str:
    """The histogram in HdrHistogram's compressed base64 form (what workers send)."""
    return histogram.encode().decode("ascii")  # type: ignore[no-any-return]


def merge(encoded: Iterable[str]) -> HdrHistogram:
    """One histogram holding every sample of the encoded ones: exact, bucket by bucket."""
    texts = [text for text in encoded if text]
    if len(texts) == 1:
        return HdrHistogram.decode(texts[0])  # nothing to add: skip allocating a second one
    merged = new_histogram()
    for text in texts:
        merged.add(HdrHistogram.decode(text))
    return merged


def summary_ms(histogram: HdrHistogram) -> dict[str, Any]:
    """p50 ... p99.9, mean and max in milliseconds, and the sample count."""
    count = histogram.get_total_count()
    # One walk over the buckets for all percentiles: a long run's per-second timeline
    # summarises thousands of histograms.
    values = histogram.get_percentile_to_value_dict(list(PERCENTILES)) if count else {}
    out: dict[str, Any] = {}
    for q in PERCENTILES:
        out[f"p{q:g}"] = round(values[q] / 1000, 3) if count else 0.0
    out["mean"] = round(histogram.get_mean_value() / 1000, 3) if count else 0.0
    out["max"] = round(histogram.get_max_value() / 1000, 3) if count else 0.0
    out["count"] = count
    return out


def second_ms(histogram: HdrHistogram) -> dict[str, float]:
    """p50, p99 and max in milliseconds for one second of the timeline.

    Cheaper than ``summary_ms``: the mean walks every bucket in pure Python, and a long
    run summarises one histogram per second.
    """
    if not histogram.get_total_count():
        return {"p50_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    values = histogram.get_percentile_to_value_dict([50.0, 99.0])
    return {"p50_ms": round(values[50.0] / 1000, 3), "p99_ms": round(values[99.0] / 1000, 3),
            "max_ms": round(histogram.get_max_value() / 1000, 3)}


def buckets_ms(histogram: HdrHistogram, max_buckets: int = 60) -> list[list[float]]:
    """[[upper bound ms, count], ...] on a log scale: the latency histogram of the report."""
    if not histogram.get_total_count():
        return []
    low = max(1, histogram.get_min_value())
    high = max(low + 1, histogram.get_max_value())
    ratio = (high / low) ** (1 / max_buckets)
    counts: dict[int, int] = {}
    for item in histogram.get_recorded_iterator():
        value = max(low, item.value_iterated_to)
        index = min(max_buckets, math.ceil(math.log(value / low, ratio) - 1e-9))
        counts[index] = counts.get(index, 0) + item.count_at_value_iterated_to
    return [[round(low * ratio ** i / 1000, 3), n] for i, n in sorted(counts.items())]


# --- thresholds ---------------------------------------------------------------------------

_THRESHOLD = re.compile(
    r"^\s*(?:(?P<hist>decision|start|match)\.)?(?P<metric>p\d+(?:\.\d+)?|max|mean|errors|"
    r"dropped|late)\s*(?P<op><=|<|>=|>)\s*(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|us|%)?\s*$")


@dataclass(frozen=True, slots=True)
class Threshold:
    """``p99<100ms``, ``start.p99.9<1s``, ``errors<0.1%``, ``dropped<=0``.

    Latency metrics (pNN, mean, max) read the decision latency unless prefixed
    with ``start.`` (scheduled time -> match created) or ``match.`` (scheduled
    time -> match over); ``errors``, ``dropped`` and ``late`` are shares of the
    matches the run meant to start, in percent.
    """

    text: str
    histogram: str
    metric: str
    op: str
    limit: float

    @classmethod
    def parse(cls, text: str) -> Threshold:
        found = _THRESHOLD.match(text)
        if not found:
            raise ValueError(f"threshold {text!r} is not METRIC<VALUE (e.g. p99<100ms, "
                             f"errors<0.1%)")
        metric, unit = found["metric"], found["unit"]
        value = float(found["value"])
        rate = metric in ("errors", "dropped", "late")
        if rate and unit not in (None, "%"):
            raise ValueError(f"threshold {text!r}: {metric} is a share (use %)")
        if not rate and unit == "%":
            raise ValueError(f"threshold {text!r}: {metric} is a time (use ms or s)")
        if not rate:
            value *= {"us": 0.001, "ms": 1.0, "s": 1000.0, None: 1.0}[unit]
        return cls(text.strip(), found["hist"] or "decision", metric, found["op"], value)

    def measure(self, report: dict[str, Any]) -> float:
        """This threshold's figure in ``report`` (milliseconds, or percent)."""
        if self.metric in ("errors", "dropped", "late"):
            meant = max(1, int(report.get("matches_scheduled") or report["matches_started"]))
            if self.metric == "errors":
                count = sum(report["errors"].values())
            else:
                count = report.get(f"matches_{self.metric}", 0)
            return round(100.0 * float(count) / meant, 4)
        figures = report[{"decision": "latency_ms", "start": "start_latency_ms",
                          "match": "match_latency_ms"}[self.histogram]]
        key = self.metric if self.metric in ("max", "mean") else f"p{float(self.metric[1:]):g}"
        if key in figures:
            return float(figures[key])
        # Any other percentile comes from the run's merged histogram.
        histogram = HdrHistogram.decode(report["histograms"][
            {"decision": "latency", "start": "start", "match": "match"}[self.histogram]])
        return round(float(histogram.get_value_at_percentile(float(key[1:]))) / 1000, 3)

    def holds(self, value: float) -> bool:
        return {"<": value < self.limit, "<=": value <= self.limit,
                ">": value > self.limit, ">=": value >= self.limit}[self.op]


def check_thresholds(thresholds: Sequence[Threshold],
                     report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each threshold with its measured value and whether it held."""
    out = []
    for threshold in thresholds:
        value = threshold.measure(report)
        out.append({"threshold": threshold.text, "value": value,
                    "unit": "%" if threshold.metric in ("errors", "dropped", "late") else "ms",
                    "ok": threshold.holds(value)})
    return out


# --- the timeline: per-second figures -------------------------------------------------------

class Timeline:
    """Per-second counts and decision latencies of one worker (seconds from its start)."""

    def __init__(self, t0: float) -> None:
        self.t0 = t0
        self.seconds: dict[int, dict[str, Any]] = {}

    def _at(self, t: float) -> dict[str, Any]:
        second = max(0, int(t - self.t0))
        if second not in self.seconds:
            self.seconds[second] = {"matches": 0, "decisions": 0, "errors": 0,
                                    "latency": new_histogram()}
        return self.seconds[second]

    def decision(self, t: float, latency_s: float) -> None:
        bucket = self._at(t)
        bucket["decisions"] += 1
        record_seconds(bucket["latency"], latency_s)

    def match(self, t: float) -> None:
        self._at(t)["matches"] += 1

    def error(self, t: float) -> None:
        self._at(t)["errors"] += 1

    def encode(self) -> list[dict[str, Any]]:
        return [{"t": second, "matches": b["matches"], "decisions": b["decisions"],
                 "errors": b["errors"], "latency": encode(b["latency"])}
                for second, b in sorted(self.seconds.items())]


def merge_timelines(workers: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per second over all workers: matches/s, decisions/s, errors, p50/p99/max ms."""
    merged: dict[int, dict[str, Any]] = {}
    for rows in workers:
        for row in rows:
            into = merged.setdefault(row["t"], {"matches": 0, "decisions": 0, "errors": 0,
                                                "latency": []})
            for key in ("matches", "decisions", "errors"):
                into[key] += row[key]
            into["latency"].append(row["latency"])
    if not merged:
        return []
    out = []
    for second in range(max(merged) + 1):
        into = merged.get(second, {"matches": 0, "decisions": 0, "errors": 0, "latency": []})
        out.append({"t": second, "matches": into["matches"], "decisions": into["decisions"],
                    "errors": into["errors"], **second_ms(merge(into["latency"]))})
    return out


TIMELINE_COLUMNS = ("t", "matches", "decisions", "errors", "p50_ms", "p99_ms", "max_ms")


def timeline_csv(rows: Sequence[dict[str, Any]]) -> str:
    lines = [",".join(TIMELINE_COLUMNS)]
    lines += [",".join(str(row[c]) for c in TIMELINE_COLUMNS) for row in rows]
    return "\n".join(lines) + "\n"


# --- the server's own figures (its Prometheus endpoint) ------------------------------------

def parse_prometheus(text: str) -> dict[str, float]:
    """Every sample of a /metrics page, summed over labels, by sample name."""
    from prometheus_client.parser import text_string_to_metric_families

    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            totals[sample.name] = totals.get(sample.name, 0.0) + float(sample.value)
    return totals


def server_figures(before: dict[str, float], after: dict[str, float]) -> dict[str, Any]:
    """What the server did between two scrapes: CPU per decision, append batches, errors."""
    def delta(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    decisions = delta("twistarena_decisions_total")
    batches = delta("twistarena_redis_append_batch_size_count")
    return {
        "decisions": decisions,
        "cpu_ms_per_decision": round(1000 * delta("process_cpu_seconds_total") / decisions, 4)
        if decisions else None,
        "append_batch_mean": round(delta("twistarena_redis_append_batch_size_sum") / batches, 3)
        if batches else None,
        "redirects": sum(delta(n) for n in after if "redirect" in n and n.endswith("_total")),
        "errors": delta("twistarena_errors_total"),
    }


def next_rate(rate: float, factor: float) -> float:
    """The knee search's next step: ``factor`` times the rate, at least one more per second."""
    return round(max(rate * factor, rate + 1), 3)
