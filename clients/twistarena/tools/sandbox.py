"""``twistarena bench sandbox``: what starting a program in the sandbox costs.

A trivial program (``/bin/sh`` printing a line; ``--command`` for another) is
started ``--runs`` times in the sandbox, each time timed from the call to
``sandbox.start`` until its first line is read: the delay a seat pays before its
program can answer. Each is then ended with ``kill_tree``, timed as well. The
figures are wall-clock milliseconds: min, median and max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.progress import Progress
from rich.table import Table
from twistarena.clients.cli.options import add_json
from twistarena.clients.terminal import make_console
from twistarena.sandbox import MODES, SandboxSpec, kill_tree, sandbox_mode, start

#: Prints a line at once, then waits for stdin to close.
TRIVIAL = "echo ready; read line"


def add_cli(targets: Any) -> None:
    """Register the ``sandbox`` target under ``twistarena bench``."""
    parser = targets.add_parser("sandbox", help="milliseconds to start a sandboxed program",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50, help="starts (default 50)")
    parser.add_argument("--sandbox", default="bwrap", choices=MODES,
                        help="bwrap (default) or none, to compare with a bare start")
    parser.add_argument("--command", default=None, metavar='"CMD ARGS"',
                        help="a program that prints a line once started (default: /bin/sh "
                             f"-c '{TRIVIAL}')")
    add_json(parser, "the figures, one line at the end")
    parser.set_defaults(run=run_cli)


async def measure(spec: SandboxSpec, mode: str, runs: int,
                  advance: Any = None) -> tuple[list[float], list[float]]:
    """(start ms, kill ms) of ``runs`` sandboxes run one after the other."""
    starts: list[float] = []
    kills: list[float] = []
    for _ in range(runs):
        began = time.perf_counter()
        proc = await start(spec, mode)
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        ready = time.perf_counter()
        await kill_tree(proc)
        ended = time.perf_counter()
        if not line:
            raise RuntimeError(f"the program printed nothing: {' '.join(spec.argv)}")
        starts.append((ready - began) * 1000)
        kills.append((ended - ready) * 1000)
        if advance is not None:
            advance()
    return starts, kills


def _figures(values: list[float]) -> dict[str, float]:
    return {"min_ms": round(min(values), 2), "median_ms": round(statistics.median(values), 2),
            "max_ms": round(max(values), 2)}


def run_cli(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json)
    mode = sandbox_mode(args.sandbox)
    argv = args.command.split() if args.command else ["/bin/sh", "-c", TRIVIAL]
    with tempfile.TemporaryDirectory() as folder, \
            Progress(console=console, transient=True) as progress:
        task = progress.add_task(f"{args.runs} starts ({mode})", total=args.runs)
        spec = SandboxSpec(Path(folder), argv)
        starts, kills = asyncio.run(measure(spec, mode, args.runs,
                                            lambda: progress.advance(task)))
    table = Table(title=f"Sandboxed program ({mode}): {' '.join(argv)}, {args.runs} runs")
    for column in ("", "min ms", "median ms", "max ms"):
        table.add_column(column, justify="right" if column else "left")
    rows = {"start (until its first line)": _figures(starts), "kill_tree": _figures(kills)}
    for name, row in rows.items():
        table.add_row(name, *(f"{row[k]:.1f}" for k in ("min_ms", "median_ms", "max_ms")))
    console.print(table)
    if args.json:
        print(json.dumps({"mode": mode, "runs": args.runs, "command": argv,
                          "start": rows["start (until its first line)"],
                          "kill": rows["kill_tree"]}))
    return 0
