"""``twistarena bench service`` on the command line: its options, and the table
(and JSON line) of what a call measured (``service.run`` measures)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from twistarena.clients.cli.options import add_json
from twistarena.clients.terminal import make_console

from .service import AGENT_KINDS, run_sync
from .servicefigures import CPU_GOALS, Report


def add_cli(targets: Any) -> None:
    """Register the ``service`` target under ``twistarena bench``."""
    from twistarena.engine import GAME_IDS

    parser = targets.add_parser(
        "service", help="decisions/s of the real service vs bare gRPC; live matches",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=GAME_IDS, default="tricky_twist")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--matches", type=int, default=128, help="concurrent matches")
    parser.add_argument("--duration", type=float, default=20.0,
                        help="seconds measured per run (after --warmup)")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=5,
                        help="measure the compared runs in this many windows of "
                             "duration/rounds each, taking turns; the CPU ratios are "
                             "the medians over the rounds (at least 5 for the goals)")
    parser.add_argument("--live-matches", type=int, default=0, metavar="N",
                        help="instead: N live matches with agents connected (RSS per match), "
                             "then a connect storm")
    parser.add_argument("--storm", type=int, default=2000,
                        help="with --live-matches: agents connecting at once (0: skip)")
    parser.add_argument("--agents", default=",".join(AGENT_KINDS),
                        help="who plays the service run(s), comma-separated: 'protocol' "
                             "(random bots on the raw Play protocol, the ratio's subject) "
                             "and/or 'sdk' (the SDK's Agent with the random strategy)")
    parser.add_argument("--events", action="store_true",
                        help="the service's agents take their events too (no_events off, "
                             "the SDK's default); the yardsticks are unchanged")
    parser.add_argument("--no-batch", action="store_true",
                        help="the service's agents do not ask for batched delivery "
                             "(Join.batched, the SDK's default): a message per event and "
                             "per acceptance")
    parser.add_argument("--new-stream-per-match", action="store_true",
                        help="the service's agents open a Play call per match instead of "
                             "keeping theirs for the next match (Join.keep_open)")
    parser.add_argument("--workers", default="1", metavar="N|auto",
                        help="the server under test runs `serve --workers N` (default 1)")
    add_json(parser, "the report, one line at the end")
    parser.set_defaults(run=run_cli)


def agent_kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in AGENT_KINDS]
    if unknown or not kinds:
        raise SystemExit(f"--agents: expected a comma-separated subset of "
                         f"{','.join(AGENT_KINDS)}, got {text!r}")
    return kinds


def run_cli(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar
    from twistarena.clients.sdk.localbots import configure_logging

    kinds = agent_kinds(args.agents)
    configure_logging(False)
    console = make_console(stderr=args.json)
    with Bar(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
             console=console, transient=True) as bar:
        task = bar.add_task("starting the server", total=1.0)

        def progress(phase: str, done: float, total: float) -> None:
            bar.update(task, description=phase, completed=done / total if total else 0)

        report = run_sync(args.game, args.players, args.matches, args.duration, args.warmup,
                          args.live_matches, args.storm if args.live_matches else 0,
                          agents=kinds, progress=progress, events=args.events,
                          batched=not args.no_batch, server_args=("--workers", args.workers),
                          keep_streams=not args.new_stream_per_match,
                          rounds=args.rounds)
    console.print(report_table(report))
    if args.json:
        print(json.dumps(report.to_json()))
    return 0


def report_table(report: Report) -> Any:
    from rich.table import Table

    cfg = report.config
    if report.live is not None:
        live = report.live
        table = Table(title=f"Live matches: {cfg['live_matches']} x {cfg['players']}-seat "
                            f"{cfg['game']} on one node")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for key, value in live.items():
            table.add_row(key.replace("_", " "), str(value))
        return table
    table = Table(title=f"{cfg['matches']} concurrent {cfg['players']}-seat {cfg['game']} "
                        f"matches, {cfg['duration_s']:g} s measured per run in "
                        f"{cfg['rounds']} windows (taking turns)")
    for column in ("run", "decisions/s", "server µs/dec", "net of match µs/dec",
                   "valkey µs/dec", "client µs/dec", "server syscalls/dec",
                   "messages/dec out / in", "request build µs", "overhead p50 ms",
                   "overhead p99 ms"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for run in (report.raw, report.engine_only, report.real, report.sdk):
        if run is None:
            continue
        counted = run.counters.sent > 0
        table.add_row(run.label, f"{run.per_s:,.0f}", f"{run.us_per(run.server_cpu_s):.0f}",
                      f"{run.server_us_net:.0f}" if run.match_cpu_us else "-",
                      f"{run.us_per(run.helper_cpu_s):.0f}" if run.helper_cpu_s else "-",
                      f"{run.us_per(run.client_cpu_s):.0f}",
                      f"{run.server_syscalls / run.decisions:.2f}" if run.decisions else "-",
                      f"{run.per_decision(run.counters.sent):.2f} / "
                      f"{run.per_decision(run.counters.received):.2f}" if counted else "-",
                      f"{run.request_build_us:.0f}" if counted else "-",
                      f"{run.percentile_ms(0.5):.2f}",
                      f"{run.percentile_ms(0.99):.2f}")
    out = report.to_json()
    captions = []
    if report.sizes is not None:
        s = report.sizes
        captions.append(f"message bytes: DecisionRequest {s.decision}, Answer {s.answer}, "
                        f"AnswerAccepted {s.accepted}")
    failed = sum(run.matches_failed for run in (report.real, report.sdk) if run is not None)
    if failed:
        captions.append(f"{failed} matches failed (streams cut)")
    if "service_to_bare_ratio" in out:
        captions.append(f"service / bare gRPC = {out['service_to_bare_ratio']:.3f}")
    if "service_sdk_agents_to_bare_ratio" in out:
        captions.append(f"SDK agents / bare gRPC = {out['service_sdk_agents_to_bare_ratio']:.3f}")
    if "grpc_engine_only_to_bare_ratio" in out:
        captions.append(f"engine only / bare gRPC = {out['grpc_engine_only_to_bare_ratio']:.3f}")
    captions.extend(cpu_lines(report))
    if report.matches is not None and report.matches.matches_finished:
        costs = out["match_costs"]
        captions.append(f"per match: server {costs['server_cpu_us_per_match']:,.0f} µs, "
                        f"Valkey {costs['valkey_cpu_us_per_match']:,.0f} µs "
                        f"({costs['matches']} matches created, seated, cancelled)")
    table.caption = "; ".join(captions)
    return table


def cpu_lines(report: Report) -> list[str]:
    """The node's CPU per decision over the bare server's, each with its goal."""
    lines = []
    labels = {"engine_only": "engine only", "real": "service", "sdk": "SDK agents"}
    events = report.config.get("events", False)
    compared = report.round_ratios()
    for key, ratio in report.cpu_ratios().items():
        goal = CPU_GOALS.get(key)
        judged = "" if goal is None or (key == "real" and not events) else (
            f" (goal ≤ {goal:g}: {'met' if ratio <= goal else 'NOT met'})")
        lines.append(f"server CPU/decision, {labels[key]} / bare gRPC = {ratio:.3f}, median "
                     f"of {len(compared[key])} of {report.config['rounds']} rounds{judged}")
    return lines
