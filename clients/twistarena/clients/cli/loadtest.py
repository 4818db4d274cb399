"""``twistarena loadtest``: many real agents against running servers (see tools/load.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from rich.table import Table
from twistarena.engine import GAME_IDS

from ..terminal import make_console
from . import admintoken
from .command import FAILED, THRESHOLD_FAILED, CommandError, print_json
from .options import DEFAULT_SERVER, add_admin_token, add_json, add_players

if TYPE_CHECKING:
    from twistarena.tools import loadplan

DEFAULT_DURATION = 60.0


def register(sub: Any) -> None:
    parser = sub.add_parser("loadtest", help="load a running server with real gRPC agents")
    parser.defer(_describe)
    parser.add_argument("--server", default=DEFAULT_SERVER,
                        help="HOST:PORT[,HOST:PORT...]: slots spread over them")
    parser.add_argument("--game", choices=GAME_IDS, default="tricky_twist")
    add_players(parser)
    parser.add_argument("--matches", type=int, default=1000,
                        help="stop after this many matches (default 1000)")
    parser.add_argument("--concurrency", type=int, default=32,
                        help="closed model: matches in flight at once, over all processes; "
                             "open model: the most in flight, a start beyond is dropped "
                             "(default 32)")
    model = parser.add_mutually_exclusive_group()
    model.add_argument("--rate", type=float, default=None,
                       help="open model: start this many matches per second for --duration")
    model.add_argument("--stages", default=None, metavar="DUR:RATE,...",
                       help='open model with a ramping rate, e.g. "30s:5,60s:20,30s:0" '
                            "(linear ramps from 0, like k6's ramping-arrival-rate)")
    parser.add_argument("--grace", type=float, default=10.0,
                        help="open model: seconds the last matches get to finish (default 10)")
    parser.add_argument("--think-ms", default=None, metavar="DIST",
                        help="think time before each answer: fixed:MS, uniform:LOW:HIGH or "
                             "lognormal:MEDIAN:SIGMA (left out of the decision latency)")
    parser.add_argument("--mix", default=None, metavar="GAME:PLAYERS:BOT[*W],...",
                        help="a weighted mix of tables, e.g. "
                             '"twhist:3:random*2,tricky_twist:4:heuristic,twisted:2:ismcts-fast"'
                             " (default: --game/--players with random bots)")
    parser.add_argument("--disconnect", type=float, default=0.0, metavar="SHARE",
                        help="share of agents (0-1) that drop their stream once mid-match "
                             "and resume it (default 0)")
    parser.add_argument("--new-stream-per-match", action="store_true",
                        help="agents open a Play call per match instead of playing their "
                             "next match on the call of their last (Join.keep_open)")
    parser.add_argument("--threshold", action="append", default=[], metavar="RULE",
                        help='pass/fail rule, repeatable: "p99<100ms", "p99.9<1s", "max<2s", '
                             '"start.p99<200ms", "errors<0.1%%", "dropped<1%%"; '
                             "exit 3 naming the rules that failed")
    parser.add_argument("--duration", type=float, default=DEFAULT_DURATION,
                        help="stop after this many seconds at most (default 60)")
    parser.add_argument("--processes", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default min(2, cores))")
    parser.add_argument("--decision-ms", type=int, default=0,
                        help="decision clock of the matches (default: the server's)")
    parser.add_argument("--seed", type=int, default=1)
    add_admin_token(parser)
    parser.add_argument("--find-max", action="store_true",
                        help="the knee: open-model steps of --duration s from --rate (default 1)"
                             ", each --step-factor higher, until a --threshold breaks; reports "
                             "the highest rate that held")
    parser.add_argument("--step-factor", type=float, default=1.5,
                        help="--find-max: each step's rate over the last (default 1.5)")
    parser.add_argument("--max-steps", type=int, default=12,
                        help="--find-max: stop after this many steps (default 12)")
    parser.add_argument("--metrics", default=None, metavar="URL",
                        help="the server's Prometheus endpoint (e.g. http://127.0.0.1:9100/"
                             "metrics): its CPU per decision, append batch size, redirects "
                             "and errors during the run (or each knee step)")
    add_json(parser, "the report, one line at the end")
    parser.add_argument("--report", default=None, metavar="run.html",
                        help="write a self-contained HTML report with the charts")
    parser.add_argument("--timeline", default=None, metavar="FILE.csv|FILE.json",
                        help="write the per-second timeline (CSV, or JSON by extension)")
    parser.add_argument("--push-redis", default=None, metavar="URL",
                        help="also leave the run's report in this Redis under --run-id, for "
                             "`loadtest merge` (workers on several machines)")
    parser.add_argument("--run-id", default="run", help="names a run of several workers")
    parser.set_defaults(run=run)
    commands = parser.add_subparsers(dest="loadtest_command", required=False)
    compare = commands.add_parser(
        "compare", help="what changed between two runs' JSON, and whether beyond noise")
    compare.add_argument("a", help="the JSON of the first run (the baseline)")
    compare.add_argument("b", help="the JSON of the second run")
    add_json(compare, "the figures compared, one line at the end")
    compare.set_defaults(run=run_compare)
    merge = commands.add_parser(
        "merge", help="one report from the workers of a run that pushed to Redis")
    merge.add_argument("--redis", required=True, metavar="URL")
    merge.add_argument("--run-id", default="run")
    merge.add_argument("--workers", type=int, required=True,
                       help="wait for this many workers' reports")
    merge.add_argument("--timeout", type=float, default=600.0,
                       help="seconds to wait for them (default 600)")
    merge.add_argument("--report", default=None, metavar="run.html")
    add_json(merge, "the merged report, one line at the end")
    merge.set_defaults(run=run_merge)


def _describe(parser: argparse.ArgumentParser) -> None:
    """The tool's own description, loaded only when this command is parsed."""
    from twistarena.tools import load

    parser.description = load.__doc__


def run_merge(args: argparse.Namespace) -> int:
    """``twistarena loadtest merge``: the workers' histograms merged exactly into one run."""
    from twistarena.tools import load, loadreport

    reports = load.collect_reports(args.redis, args.run_id, args.workers, args.timeout)
    console = make_console(stderr=args.json)
    if len(reports) < args.workers:
        console.print(f"only {len(reports)} of {args.workers} workers reported "
                      f"within {args.timeout:g} s")
    if not reports:
        return FAILED
    report = load.merge_reports(reports)
    console.print(report_table(report))
    if args.report:
        with open(args.report, "w", encoding="utf-8") as out:
            out.write(loadreport.render_html(report))
    if args.json:
        print_json(report)
    return 0 if len(reports) >= args.workers else FAILED


def _read_report(path: str) -> dict[str, Any]:
    """A run's JSON: the file written with ``--json`` output (its last line is the report)."""
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle.read().splitlines() if line.strip()]
    report: dict[str, Any] = json.loads(lines[-1])
    return report


def run_compare(args: argparse.Namespace) -> int:
    """``twistarena loadtest compare a.json b.json``."""
    from twistarena.tools import loadreport

    rows = loadreport.compare(_read_report(args.a), _read_report(args.b))
    console = make_console(stderr=args.json)
    table = Table(title=f"loadtest compare: {args.a} -> {args.b}")
    for column in ("figure", "a", "b", "change", "beyond noise"):
        table.add_column(column, justify="left" if column == "figure" else "right")
    for row in rows:
        table.add_row(row["figure"], str(row["a"]), str(row["b"]), f"{row['change']:+.1%}",
                      "YES" if row["beyond_noise"] else "no")
    console.print(table)
    if args.json:
        print_json(rows)
    return 0


def run(args: argparse.Namespace) -> int:
    from twistarena import engine
    from twistarena.tools import load, loadplan, loadreport

    players = args.players or engine.game(args.game).min_players
    # The token of a serve on this machine, when none is given.
    args.admin_token = admintoken.from_args(args)
    if args.matches < 1 or args.concurrency < 1 or args.duration <= 0:
        raise CommandError("--matches, --concurrency and --duration must be positive")
    try:
        thresholds = [loadplan.Threshold.parse(t) for t in args.threshold]
        if args.think_ms is not None:
            loadplan.ThinkTime.parse(args.think_ms)
        from twistarena.bots import STRATEGIES

        mix = None if args.mix is None else loadplan.parse_mix(args.mix, GAME_IDS, STRATEGIES)
        if not 0 <= args.disconnect <= 1:
            raise ValueError("--disconnect is a share between 0 and 1")
        stages = None
        if args.rate is not None:
            stages = loadplan.constant_rate(args.rate, args.duration)
        elif args.stages is not None:
            stages = loadplan.parse_stages(args.stages)
            # The schedule sets the run's length unless --duration was made shorter.
            if args.duration == DEFAULT_DURATION:
                args.duration = loadplan.schedule_seconds(stages)
        if args.find_max and (not thresholds or args.stages is not None
                              or args.step_factor <= 1 or args.max_steps < 1):
            raise ValueError("--find-max needs a --threshold, no --stages, --step-factor > 1 "
                             "and --max-steps >= 1")
    except ValueError as error:
        raise CommandError(str(error)) from error
    if args.find_max:
        return find_max(args, players, thresholds, mix)
    console = make_console(stderr=args.json)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[rate]}"), console=console,
                  transient=True) as bar:
        task = bar.add_task(f"{args.game} x{players}", total=args.matches, rate="")

        def progress(done: int, total: int, decisions: int) -> None:
            bar.update(task, completed=done, rate=f"{decisions:,} decisions")

        before = scrape(args.metrics)
        report = asyncio.run(load.run_load(
            args.server.split(","), args.game, players, args.matches, args.concurrency,
            args.duration, args.processes, args.seed, args.decision_ms, args.admin_token,
            progress, stages=stages, grace=args.grace, think=args.think_ms, mix=mix,
            disconnect=args.disconnect,
            keep_streams=not args.new_stream_per_match))
        if args.metrics:
            report["server"] = loadplan.server_figures(before, scrape(args.metrics))
    report["thresholds"] = loadplan.check_thresholds(thresholds, report)
    if args.push_redis:
        load.push_report(args.push_redis, args.run_id, report)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as out:
            out.write(loadreport.render_html(report))
    if args.timeline:
        with open(args.timeline, "w", encoding="utf-8") as out:
            out.write(json.dumps(report["timeline"]) if args.timeline.endswith(".json")
                      else loadplan.timeline_csv(report["timeline"]))
    console.print(report_table(report))
    failed = [t for t in report["thresholds"] if not t["ok"]]
    for t in report["thresholds"]:
        console.print(f"threshold {t['threshold']}: {t['value']:g}{t['unit']} "
                      f"{'passed' if t['ok'] else 'FAILED'}")
    if args.json:
        print_json(report)
    if failed:
        print("twistarena loadtest: threshold failed: "
              + ", ".join(f"{t['threshold']} (measured {t['value']:g}{t['unit']})"
                          for t in failed), file=sys.stderr)
        return THRESHOLD_FAILED
    return 0 if report["matches_completed"] else FAILED


def scrape(url: str | None) -> dict[str, float]:
    """The server's Prometheus figures now ({} without ``--metrics``)."""
    if not url:
        return {}
    import urllib.request

    from twistarena.tools import loadplan

    with urllib.request.urlopen(url, timeout=10) as reply:
        return loadplan.parse_prometheus(reply.read().decode())


def find_max(args: argparse.Namespace, players: int, thresholds: list[loadplan.Threshold],
             mix: list[loadplan.Table] | None) -> int:
    """The knee: raise the arrival rate step by step until a threshold breaks."""
    from twistarena.tools import load, loadplan, loadreport

    console = make_console(stderr=args.json)
    rate = args.rate or 1.0
    steps: list[dict[str, Any]] = []
    knee: dict[str, Any] | None = None
    for _ in range(args.max_steps):
        before = scrape(args.metrics)
        report = asyncio.run(load.run_load(
            args.server.split(","), args.game, players, args.matches, args.concurrency,
            args.duration, args.processes, args.seed, args.decision_ms, args.admin_token,
            stages=loadplan.constant_rate(rate, args.duration), grace=args.grace,
            think=args.think_ms, mix=mix, disconnect=args.disconnect,
            keep_streams=not args.new_stream_per_match))
        checks = loadplan.check_thresholds(thresholds, report)
        step = {"rate": rate, "matches_per_s": report["matches_per_s"],
                "decisions_per_s": report["decisions_per_s"],
                "latency_ms": report["latency_ms"], "errors": report["errors"],
                "matches_dropped": report["matches_dropped"], "thresholds": checks,
                "held": all(c["ok"] for c in checks)}
        if args.metrics:
            step["server"] = loadplan.server_figures(before, scrape(args.metrics))
        steps.append(step)
        console.print(f"rate {rate:g}/s: {report['matches_per_s']:g} matches/s, "
                      f"{report['decisions_per_s']:g} decisions/s, p99 "
                      f"{report['latency_ms']['p99']:g} ms: "
                      + ("held" if step["held"] else "broke " + ", ".join(
                          c["threshold"] for c in checks if not c["ok"])))
        if not step["held"]:
            break
        knee = step
        rate = loadplan.next_rate(rate, args.step_factor)
    result = {"find_max": {"knee": knee, "steps": steps,
                           "thresholds": [t.text for t in thresholds]}}
    if args.report:
        with open(args.report, "w", encoding="utf-8") as out:
            out.write(loadreport.render_html({**report, **result}))
    if knee is None:
        console.print("no rate held: the first step already broke a threshold")
    else:
        console.print(f"knee: {knee['rate']:g} matches started/s held "
                      f"({knee['matches_per_s']:g} matches/s, "
                      f"{knee['decisions_per_s']:g} decisions/s)")
    if args.json:
        print_json(result)
    return 0 if knee is not None else THRESHOLD_FAILED


def report_table(report: dict[str, Any]) -> Table:
    shape = (f"{report['concurrency']} in flight" if report["model"] == "closed" else
             f"open model, at most {report['concurrency']} in flight")
    table = Table(title=f"loadtest: {report['game']} x{report['players']}, {shape}, "
                        f"{report['processes']} processes")
    table.add_column("figure")
    table.add_column("value", justify="right")
    lat, ovh = report["latency_ms"], report["server_overhead_ms"]
    start, whole = report["start_latency_ms"], report["match_latency_ms"]

    def spread(figures: dict[str, Any]) -> str:
        return " / ".join(f"{figures[k]:.2f}" for k in ("p50", "p99", "p99.9", "max"))

    rows = [
        ("matches scheduled / late / dropped",
         f"{report['matches_scheduled']} / {report['matches_late']} / "
         f"{report['matches_dropped']}"),
        ("matches completed", f"{report['matches_completed']} / {report['matches_requested']}"),
        ("elapsed s", f"{report['elapsed_s']:.2f}"),
        ("matches/s", f"{report['matches_per_s']:,.2f}"),
        ("decisions/s", f"{report['decisions_per_s']:,.0f}"),
        ("decision round trip p50/p99/p99.9/max ms", spread(lat)),
        ("server overhead p50/p99/p99.9/max ms", spread(ovh)),
        ("start latency p50/p99/p99.9/max ms", spread(start)),
        ("match latency p50/p99/p99.9/max ms", spread(whole)),
        ("agents disconnected / resumed",
         f"{report['agents_disconnected']} / {report['agents_resumed']}"),
        ("errors", ", ".join(f"{k}: {v}" for k, v in report["errors"].items()) or "none"),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table
