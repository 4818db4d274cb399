"""What ``twistarena loadtest`` leaves behind: the HTML report and ``loadtest compare``.

The report is one self-contained file (inline CSS and SVG, no script, no CDN)
with the charts a person looks at first: throughput and latency percentiles
over time, the latency histogram, the errors over time. ``compare`` tells
what changed between two runs' JSON and whether each change is beyond the
run-to-run noise, judged from the per-second timeline of both runs.
"""

from __future__ import annotations

import html
import math
import statistics
from collections.abc import Sequence
from typing import Any

WIDTH, HEIGHT, PAD = 640, 220, 40
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")


def _scale(values: Sequence[float]) -> float:
    top = max(values, default=0.0)
    return top if top > 0 else 1.0


def line_chart(title: str, xs: Sequence[float], series: dict[str, Sequence[float]],
               unit: str) -> str:
    """An inline SVG line chart: one polyline per series, axes and a legend."""
    top = _scale([v for values in series.values() for v in values])
    right = max(xs, default=1) or 1
    unit_x = " s" if "Knee" not in title else "/s"

    def point(x: float, y: float) -> str:
        return (f"{PAD + (WIDTH - 2 * PAD) * x / right:.1f},"
                f"{HEIGHT - PAD - (HEIGHT - 2 * PAD) * y / top:.1f}")

    parts = [_frame(title, f"{top:g} {unit}", f"{right:g}{unit_x}")]
    for k, (name, values) in enumerate(series.items()):
        colour = COLOURS[k % len(COLOURS)]
        points = " ".join(point(x, y) for x, y in zip(xs, values, strict=True))
        parts.append(f'<polyline class="series" fill="none" stroke="{colour}" '
                     f'stroke-width="2" points="{points}"/>')
        parts.append(f'<text x="{PAD + 110 * k}" y="{HEIGHT - 8}" fill="{colour}" '
                     f'font-size="12">{html.escape(name)}</text>')
    return _svg(parts)


def bar_chart(title: str, labels: Sequence[str], values: Sequence[float], unit: str) -> str:
    """An inline SVG bar chart (the latency histogram, the errors per second)."""
    top = _scale(values)
    n = max(1, len(values))
    width = (WIDTH - 2 * PAD) / n
    parts = [_frame(title, f"{top:g} {unit}", labels[-1] if labels else "")]
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        height = (HEIGHT - 2 * PAD) * value / top
        parts.append(f'<rect class="bar" x="{PAD + i * width:.1f}" '
                     f'y="{HEIGHT - PAD - height:.1f}" width="{max(1.0, width - 1):.1f}" '
                     f'height="{height:.1f}" fill="{COLOURS[0]}">'
                     f'<title>{html.escape(label)}: {value:g}</title></rect>')
    return _svg(parts)


def _frame(title: str, top_label: str, right_label: str) -> str:
    return (f'<text x="{PAD}" y="20" font-size="14" font-weight="bold">'
            f'{html.escape(title)}</text>'
            f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
            f'stroke="#888"/><line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" '
            f'stroke="#888"/><text x="{PAD + 4}" y="{PAD - 4}" font-size="11">'
            f'{html.escape(top_label)}</text><text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 14}" '
            f'font-size="11" text-anchor="end">{html.escape(right_label)}</text>')


def _svg(parts: Sequence[str]) -> str:
    return (f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
            f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">{"".join(parts)}</svg>')


def render_html(report: dict[str, Any]) -> str:
    """The run as one HTML page that works offline."""
    rows = report.get("timeline", [])
    xs = [row["t"] for row in rows]
    charts = [
        line_chart("Throughput", xs, {"matches/s": [r["matches"] for r in rows],
                                      "decisions/s ÷ 100": [r["decisions"] / 100
                                                            for r in rows]}, "/s"),
        line_chart("Decision latency over time", xs,
                   {"p50": [r["p50_ms"] for r in rows], "p99": [r["p99_ms"] for r in rows],
                    "max": [r["max_ms"] for r in rows]}, "ms"),
        bar_chart("Decision latency histogram",
                  [f"≤ {ms:g} ms" for ms, _ in report.get("latency_buckets_ms", [])],
                  [n for _, n in report.get("latency_buckets_ms", [])], "decisions"),
        bar_chart("Errors per second", [f"{r['t']} s" for r in rows],
                  [r["errors"] for r in rows], "errors"),
    ]
    search = report.get("find_max")
    if search and search["steps"]:
        steps = search["steps"]
        charts.append(line_chart(
            "Knee search: decision p99 by arrival rate (x: matches started/s)",
            [step["rate"] for step in steps],
            {"p99 ms": [step["latency_ms"]["p99"] for step in steps],
             "matches/s": [step["matches_per_s"] for step in steps]}, ""))
    figures = [
        ("model", report.get("model", "closed")),
        ("game", f"{report['game']} x{report['players']}"),
        ("matches scheduled / started / completed",
         f"{report.get('matches_scheduled', '')} / {report['matches_started']} / "
         f"{report['matches_completed']}"),
        ("late / dropped", f"{report.get('matches_late', 0)} / "
                           f"{report.get('matches_dropped', 0)}"),
        ("matches/s", report["matches_per_s"]), ("decisions/s", report["decisions_per_s"]),
        *((f"{name} p50 / p99 / p99.9 / max ms",
           " / ".join(str(report[key].get(q, "")) for q in ("p50", "p99", "p99.9", "max")))
          for name, key in (("decision latency", "latency_ms"),
                            ("start latency", "start_latency_ms"),
                            ("match latency", "match_latency_ms")) if key in report),
        ("errors", ", ".join(f"{k}: {v}" for k, v in report["errors"].items()) or "none"),
        *((f"threshold {t['threshold']}", f"{t['value']:g}{t['unit']} "
           f"{'passed' if t['ok'] else 'FAILED'}") for t in report.get("thresholds", [])),
    ]
    table = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                    for k, v in figures)
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>twistarena load test</title><style>"
            "body{font-family:sans-serif;margin:2em;color:#222}"
            "table{border-collapse:collapse;margin-bottom:1.5em}"
            "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}"
            "svg.chart{display:block;margin:1em 0;background:#fafafa}"
            f"</style></head><body><h1>twistarena load test</h1><table>{table}</table>"
            f"{''.join(charts)}</body></html>")


# --- compare ------------------------------------------------------------------------------

#: A change smaller than this share is never called real, however steady the runs.
MIN_CHANGE = 0.05
#: How many standard errors apart two runs' per-second means must be.
MIN_T = 3.0


def _steady(rows: Sequence[dict[str, Any]], key: str) -> list[float]:
    """Per-second values without the ramp-up and wind-down seconds."""
    inner = rows[1:-1] if len(rows) > 3 else rows
    return [float(row[key]) for row in inner if row["decisions"]]


def judge(a: Sequence[float], b: Sequence[float]) -> tuple[float, bool]:
    """(relative change of the mean from a to b, whether it is beyond the noise).

    Welch's t on the per-second samples of both runs, and at least a 5% change."""
    if len(a) < 2 or len(b) < 2:
        return 0.0, False
    mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
    change = (mean_b - mean_a) / mean_a if mean_a else 0.0
    error = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    t = abs(mean_b - mean_a) / error if error else math.inf
    return change, t >= MIN_T and abs(change) >= MIN_CHANGE


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Each figure in both runs, its change, and whether the change is beyond noise."""
    out = []
    for label, key in (("decisions/s", "decisions"), ("matches/s", "matches"),
                       ("decision p50 ms", "p50_ms"), ("decision p99 ms", "p99_ms")):
        sa = _steady(a.get("timeline", []), key)
        sb = _steady(b.get("timeline", []), key)
        change, real = judge(sa, sb)
        out.append({"figure": label,
                    "a": round(statistics.fmean(sa), 3) if sa else None,
                    "b": round(statistics.fmean(sb), 3) if sb else None,
                    "change": round(change, 4), "beyond_noise": real})
    return out
