"""``twistarena bench web``: does a crowd of browsers slow a match down?

The same matches are played by SDK agents (a fixed strategy) over gRPC while
0, 1 and 200 Server-Sent Events streams follow each match on the web face.
The viewers run in a process of their own, as real browsers would be on other
machines, so their CPU is not counted against the match. The viewer counts
take turns, one match each per round, so that a machine whose load drifts
treats them alike. The figures: the match's decisions/s, the node's CPU per
decision, and the memory of the web face's process with the viewers
connected; then the same with ``--stalled`` viewers that never read (their
queues must stay bounded).

``--gateway node`` (the default) runs the web face in the node's process and
event loop (``serve --web-port``, the embedded default), so its work counts as
the node's; ``--gateway own`` runs it as ``twistarena web`` in a process of
its own, and its CPU per decision is shown apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from rich.console import Console
from rich.table import Table
from twistarena.clients.cli.options import add_json
from twistarena.clients.sdk import MatchClient, play
from twistarena.clients.terminal import make_console

from .processes import CLI, ServerProcess

WEB = re.compile(r"web listening on (http://\S+/)")


@dataclass(slots=True)
class Run:
    """One viewer count's matches."""

    viewers: int
    stalled: bool
    decisions_per_s: list[float] = field(default_factory=list)
    #: The node's CPU time per decision, in ms (the web face's included when it
    #: runs in the node's process).
    cpu_ms: list[float] = field(default_factory=list)
    #: The web face's own process's CPU time per decision, in ms (``--gateway own``).
    gateway_cpu_ms: list[float] = field(default_factory=list)
    #: RSS of the web face's process (the node's, by default): before the first
    #: measured match, the most with these viewers connected, after they left.
    rss_before: int = 0
    rss_with_viewers: int = 0
    rss_after: int = 0
    #: The most that process grew by while these viewers connected, in one match.
    rss_growth: int = 0

    @property
    def label(self) -> str:
        return f"{self.viewers}{' stalled' if self.stalled else ''}"

    def per_viewer_bytes(self) -> float:
        return self.rss_growth / self.viewers if self.viewers else 0

    def to_json(self) -> dict[str, Any]:
        out = {"viewers": self.viewers, "stalled": self.stalled,
               "decisions_per_s": [round(d, 1) for d in self.decisions_per_s],
               "median_decisions_per_s": round(statistics.median(self.decisions_per_s), 1),
               "node_cpu_ms_per_decision": [round(c, 3) for c in self.cpu_ms],
               "median_node_cpu_ms_per_decision": round(statistics.median(self.cpu_ms), 3),
               "rss_before": self.rss_before, "rss_with_viewers": self.rss_with_viewers,
               "rss_after": self.rss_after,
               "rss_per_viewer": round(self.per_viewer_bytes())}
        if self.gateway_cpu_ms:
            out["gateway_cpu_ms_per_decision"] = [round(c, 3) for c in self.gateway_cpu_ms]
        return out


def random_bot(observation: Any, legal_actions: Sequence[Any]) -> int:
    return int(legal_actions[len(legal_actions) // 2].id)


async def follow_streams(url: str, count: int, stalled: bool) -> None:
    """``count`` SSE streams on ``url``: read to the end, or stalled after the headers."""
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def view() -> None:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=None)) as response:
                if stalled:
                    await asyncio.Event().wait()
                async for _ in response.content.iter_chunked(65536):
                    pass

        await asyncio.gather(*(view() for _ in range(count)))


def viewers_main() -> None:
    """Entry of the viewers' own process: ``URL COUNT stalled|reading``."""
    url, count, mode = sys.argv[1:4]
    asyncio.run(follow_streams(url, int(count), mode == "stalled"))


def open_viewers(url: str, count: int, stalled: bool) -> subprocess.Popen[bytes] | None:
    """The viewers in a process of their own, so that they do not take the agents' CPU."""
    if not count:
        return None
    code = "from twistarena.tools.web import viewers_main; viewers_main()"
    return subprocess.Popen([sys.executable, "-c", code, url, str(count),
                             "stalled" if stalled else "reading"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def wait_viewers(session: aiohttp.ClientSession, web: str, count: int,
                       timeout: float = 60.0) -> None:
    """Until the gateway reports exactly ``count`` browsers (all subscribed, or all gone)."""
    deadline = time.monotonic() + timeout
    while True:
        async with session.get(f"{web}api/nodes") as response:
            if (await response.json())["viewers"] == count:
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} viewers did not connect within {timeout}s")
        await asyncio.sleep(0.1)


@dataclass(slots=True)
class Setup:
    """The node, the process serving the web face (the node itself by default), its URL."""

    node: ServerProcess
    web_process: ServerProcess
    web: str

    def gateway_cpu_seconds(self) -> float:
        return 0.0 if self.web_process is self.node else self.web_process.cpu_seconds()


async def one_match(setup: Setup, session: aiohttp.ClientSession, game: str, players: int,
                    seed: int, run: Run) -> None:
    """Play one match followed by ``run.viewers`` streams and add its figures to ``run``."""
    node, web = setup.node, setup.web
    client = MatchClient(node.address)
    created = await client.create_match(game, players, seed=seed, decision_ms=30_000,
                                        seat_names=[f"bench-{i}" for i in range(players)])
    match_id = created.match.match_id
    rss = setup.web_process.rss_bytes()
    streams = open_viewers(f"{web}api/matches/{match_id}/stream", run.viewers, run.stalled)
    try:
        await wait_viewers(session, web, run.viewers)
        rss_with = setup.web_process.rss_bytes()
        run.rss_with_viewers = max(run.rss_with_viewers, rss_with)
        run.rss_growth = max(run.rss_growth, rss_with - rss)
        cpu, gateway_cpu = node.cpu_seconds(), setup.gateway_cpu_seconds()
        start = time.perf_counter()
        await asyncio.gather(*(play(random_bot, server=node.address, match_id=match_id,
                                    token=t.token) for t in created.seat_tokens))
        seconds = time.perf_counter() - start
        cpu, gateway_cpu = node.cpu_seconds() - cpu, setup.gateway_cpu_seconds() - gateway_cpu
        actions = max(1, (await client.get_match(match_id)).actions)
    finally:
        if streams is not None:
            streams.kill()
            streams.wait()
    # Let the gateway see the streams close before the next reading.
    await wait_viewers(session, web, 0)
    run.rss_after = setup.web_process.rss_bytes()
    run.decisions_per_s.append(actions / seconds)
    run.cpu_ms.append(1000 * cpu / actions)
    if setup.web_process is not setup.node:
        run.gateway_cpu_ms.append(1000 * gateway_cpu / actions)


async def web_url(process: ServerProcess, timeout: float = 30.0) -> str:
    """The URL a node or gateway printed when its web face started listening."""
    deadline = time.monotonic() + timeout
    while True:
        found = next((m for line in process.lines if (m := WEB.search(line))), None)
        if found:
            return found.group(1)
        if time.monotonic() > deadline:
            raise RuntimeError("the web face did not start")
        await asyncio.sleep(0.05)


async def bench(args: argparse.Namespace, console: Console) -> list[Run]:
    own = args.gateway == "own"
    node = ServerProcess.serve("--no-web" if own else "--web-port", *(() if own else ("0",)))
    node.start()
    web_process = node
    try:
        if own:
            web_process = ServerProcess([sys.executable, "-c", CLI, "web", "--server",
                                         node.address, "--port", "0"])
            web_process.start()
        setup = Setup(node, web_process, await web_url(web_process))
        runs = [Run(v, False) for v in args.viewers]
        if args.stalled:
            runs.append(Run(args.stalled, True))
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(connector=connector) as session:
            await wait_viewers(session, setup.web, 0)
            # Warm the node and the web face (imports, caches, a stream) so that the
            # first measured match is not penalised.
            await one_match(setup, session, args.game, args.players, 99, Run(1, False))
            rss_before = web_process.rss_bytes()
            for run in runs:
                run.rss_before = rss_before
            for i in range(args.matches):
                for run in runs:
                    await one_match(setup, session, args.game, args.players, 100 + i, run)
                    cpu = f"node {run.cpu_ms[-1]:.2f} ms CPU/decision"
                    if run.gateway_cpu_ms:
                        cpu += f", web face {run.gateway_cpu_ms[-1]:.2f} ms"
                    console.print(f"  round {i + 1}, {run.label} viewers: "
                                  f"{run.decisions_per_s[-1]:,.0f} decisions/s, {cpu}",
                                  highlight=False)
        return runs
    finally:
        if web_process is not node:
            web_process.stop()
        node.stop()


def run_cli(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json)
    runs = asyncio.run(bench(args, console))
    where = ("in a process of its own (twistarena web)" if args.gateway == "own"
             else "in the node's process (serve --web-port)")
    table = Table(title=f"{args.game} x{args.players}, SDK agents, web face {where}, "
                        f"medians of {args.matches} match(es)")
    columns = ["viewers", "decisions/s", "per match", "node CPU ms/decision"]
    if args.gateway == "own":
        columns.append("web face CPU ms/decision")
    columns += ["web face RSS before", "with viewers", "per viewer (growth)", "after"]
    for column in columns:
        table.add_column(column, justify="right")
    for r in runs:
        row = [r.label, f"{statistics.median(r.decisions_per_s):,.0f}",
               ", ".join(f"{d:,.0f}" for d in r.decisions_per_s),
               f"{statistics.median(r.cpu_ms):.2f}"]
        if args.gateway == "own":
            row.append(f"{statistics.median(r.gateway_cpu_ms):.2f}")
        row += [f"{r.rss_before / 2**20:.1f} MiB", f"{r.rss_with_viewers / 2**20:.1f} MiB",
                f"{r.per_viewer_bytes() / 1024:.1f} KiB" if r.viewers else "-",
                f"{r.rss_after / 2**20:.1f} MiB"]
        table.add_row(*row)
    console.print(table)
    if args.json:
        print(json.dumps({"game": args.game, "players": args.players, "gateway": args.gateway,
                          "runs": [r.to_json() for r in runs]}))
    return 0


def add_cli(targets: Any) -> None:
    """Register the ``web`` target under ``twistarena bench``."""
    from twistarena.engine import GAME_IDS

    parser = targets.add_parser(
        "web", help="a match's decisions/s with 0 and 200 browsers watching; memory per viewer",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=GAME_IDS, default="tricky_twist")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--matches", type=int, default=3, help="matches per viewer count")
    parser.add_argument("--viewers", type=lambda s: [int(v) for v in s.split(",")],
                        default=[0, 200], help="viewer counts, comma-separated (default 0,200)")
    parser.add_argument("--gateway", choices=("node", "own"), default="node",
                        help="the web face in the node's process (default, as serve "
                             "--web-port runs it) or in a process of its own")
    parser.add_argument("--stalled", type=int, default=200,
                        help="then this many viewers that never read (0: skip)")
    add_json(parser, "the runs, one line at the end")
    parser.set_defaults(run=run_cli)

