"""``twistarena chaos``: faults injected under real load, and a checker that
nothing acknowledged was lost in silence (see clients/twistarena/tools/chaos).

Starts its own deployment (N nodes over a Valkey of its own, or over
--redis-url), plays matches with SDK agents and spectators at --rate for
--duration seconds while the seeded nemesis injects faults about every
--fault-every seconds, then checks the agents' records against the store.
The same --seed gives the same fault schedule (--schedule prints it and
exits). Exit status 1 on any violation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..sdk.localbots import configure_logging
from ..terminal import make_console
from .command import FAILED, CommandError
from .options import add_admin_token


def register(sub: Any) -> None:
    p = sub.add_parser("chaos", help="inject faults into a local deployment under load and "
                       "check that nothing acknowledged is lost in silence",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.defer(_declare)  # the fault kinds come from the tools: loaded when chaos is parsed
    p.set_defaults(run=run)


def _declare(p: argparse.ArgumentParser) -> None:
    from twistarena.tools.chaos.nemesis import ALL_KINDS

    p.add_argument("--seed", type=int, default=1, help="fault schedule seed (default 1)")
    p.add_argument("--duration", type=float, default=60.0,
                   help="seconds of load and faults (default 60)")
    p.add_argument("--rate", type=float, default=1.0,
                   help="matches started per second (default 1)")
    p.add_argument("--concurrency", type=int, default=8,
                   help="matches in play at once at most (default 8)")
    p.add_argument("--nodes", type=int, default=3, help="server nodes (default 3)")
    p.add_argument("--fault-every", type=float, default=5.0,
                   help="seconds between faults, on average (default 5)")
    p.add_argument("--faults", default=",".join(ALL_KINDS),
                   help="fault kinds, comma-separated; those the store does not take are "
                        f"left out (default: all: {','.join(ALL_KINDS)})")
    p.add_argument("--redis-url", default="",
                   help="run the nodes over this store instead of a Valkey of the campaign's "
                        "own (its process is not faulted then)")
    p.add_argument("--valkey-cluster", type=int, default=0, metavar="PRIMARIES",
                   help="run the nodes over a Valkey Cluster of the campaign's own with this "
                        "many primaries (3 or more; default: one Valkey)")
    p.add_argument("--runners", type=int, default=2,
                   help="runner processes playing hosted practice matches' seats (default 2; "
                        "0: no hosted matches)")
    p.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                   help="how the runners run the hosted programs (default bwrap)")
    p.add_argument("--lease-ms", type=int, default=2000, help="the nodes' lease (default 2000)")
    add_admin_token(p, "the nodes' admin token (default: a random one)")
    p.add_argument("--json-out", type=Path, default=None, help="write the report here as JSON")
    p.add_argument("--schedule", action="store_true",
                   help="print the fault schedule as JSON and exit")


def run(args: argparse.Namespace) -> int:
    from twistarena.tools.chaos.campaign import Plan, run_campaign, write_json
    from twistarena.tools.chaos.checker import COLUMNS
    from twistarena.tools.chaos.nemesis import ALL_KINDS, schedule

    kinds = [k.strip() for k in args.faults.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in ALL_KINDS]
    if unknown or args.duration <= 0 or args.rate <= 0 or args.nodes < 1 \
            or args.fault_every <= 0:
        raise CommandError(f"bad arguments (unknown fault kinds: {unknown})"
                           if unknown else "--duration, --rate, --nodes and --fault-every "
                           "must be positive")
    plan = Plan(seed=args.seed, duration=args.duration, rate=args.rate,
                concurrency=args.concurrency, nodes=args.nodes, fault_every=args.fault_every,
                kinds=kinds, lease_ms=args.lease_ms, redis_url=args.redis_url,
                cluster=args.valkey_cluster, runners=args.runners, sandbox=args.sandbox)
    if args.admin_token:
        plan.admin_token = args.admin_token
    if args.schedule:
        faults = schedule(plan.seed, plan.duration, plan.fault_every, plan.fault_kinds(),
                          plan.nodes)
        print(json.dumps([f.planned() for f in faults]))
        return 0
    # The agents' own reconnect notes would drown the fault log.
    configure_logging(level=logging.ERROR)
    console = make_console()
    report = asyncio.run(run_campaign(plan, lambda line: console.print(escape(line),
                                                                        highlight=False)))
    table = Table(title=f"chaos seed {plan.seed}: {report['matches']} matches, "
                        f"{len(report['faults'])} faults, {report['wall_s']} s")
    table.add_column("fault")
    for column in COLUMNS:
        table.add_column(column.replace("_", " "), justify="right")
    for row in report["table"]:
        table.add_row(row["fault"], *(str(row[c]) for c in COLUMNS))
    console.print(table)
    console.print(f"acknowledged {report['acknowledged']}, then lost "
                  f"{report['acknowledged_then_lost']}; hosted matches "
                  f"{report['hosted_matches']}, protocol-only seats {report['protocol_seats']}, "
                  f"program seats {report['program_seats']}; "
                  f"finished {report['finished']}, voided "
                  f"{report['voided']}, lost whole {report['matches_lost']}; store_loss "
                  f"records {report['store_loss_records']}; "
                  f"creations refused {len(report['create_failures'])}", highlight=False)
    for violation in report["violations"]:
        console.print(f"[red]VIOLATION[/red] match {violation['match_id']} seat "
                      f"{violation['seat']}: {escape(violation['what'])}", highlight=False)
        console.print(f"  faults: {', '.join(violation['faults']) or 'none'}", highlight=False)
        console.print(f"  heard: {escape(json.dumps(violation['heard']))}", highlight=False)
        console.print(f"  store holds: {escape(json.dumps(violation['stored']))}",
                      highlight=False)
    if args.json_out is not None:
        write_json(report, args.json_out)
        console.print(f"report written to {args.json_out}", highlight=False)
    if not report["matches"]:
        console.print("[red]no match was played: nothing was checked[/red]")
    return FAILED if report["violations"] or not report["matches"] else 0
