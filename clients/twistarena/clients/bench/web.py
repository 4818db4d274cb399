"""``twistarena bench web``: does a crowd of browsers slow a match down?

A node runs with its web face in its own process (``serve --web-port``, the
embedded default). For each viewer count (0 and 200 by default) the same
matches are played by SDK agents with the random strategy over gRPC while
that many Server-Sent Events streams (from a process of their own) follow each
match on the web face; the
figure is the match's decisions/s. The node's RSS is read with the viewers
connected to an idle match, and again after a match played to ``stalled``
viewers that never read (their queues must stay bounded).
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
from dataclasses import dataclass
from typing import Any

import aiohttp
from rich.console import Console
from rich.table import Table

from ..sdk import ArenaClient, play
from ..terminal import make_console
from .processes import ServerProcess

WEB = re.compile(r"web listening on (http://\S+)")


@dataclass(slots=True)
class Run:
    viewers: int
    stalled: bool
    decisions_per_s: list[float]
    #: The node's CPU time (server and web face) per decision, in ms.
    cpu_ms: list[float]
    rss_before: int
    rss_with_viewers: int
    rss_after: int

    def to_json(self) -> dict[str, Any]:
        return {"viewers": self.viewers, "stalled": self.stalled,
                "decisions_per_s": [round(d, 1) for d in self.decisions_per_s],
                "median_decisions_per_s": round(statistics.median(self.decisions_per_s), 1),
                "node_cpu_ms_per_decision": [round(c, 3) for c in self.cpu_ms],
                "rss_before": self.rss_before, "rss_with_viewers": self.rss_with_viewers,
                "rss_after": self.rss_after}


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
    code = "from twistarena.clients.bench.web import viewers_main; viewers_main()"
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


async def one_match(node: ServerProcess, web: str, session: aiohttp.ClientSession,
                    game: str, players: int, seed: int, viewers: int,
                    stalled: bool) -> tuple[float, float, int]:
    """Decisions/s of one match followed by ``viewers`` streams, the node's CPU ms per
    decision, and its RSS with them connected."""
    client = ArenaClient(node.address)
    created = await client.create_match(game, players, seed=seed, decision_ms=30_000,
                                        seat_names=[f"bench-{i}" for i in range(players)])
    match_id = created.match.match_id
    streams = open_viewers(f"{web}api/matches/{match_id}/stream", viewers, stalled)
    try:
        await wait_viewers(session, web, viewers)
        rss = node.rss_bytes()
        cpu = node.cpu_seconds()
        start = time.perf_counter()
        await asyncio.gather(*(play(random_bot, server=node.address, match_id=match_id,
                                    token=t.token) for t in created.seat_tokens))
        seconds = time.perf_counter() - start
        cpu = node.cpu_seconds() - cpu
        actions = (await client.get_match(match_id)).actions
    finally:
        if streams is not None:
            streams.kill()
            streams.wait()
    return actions / seconds, 1000 * cpu / max(1, actions), rss


async def measure(node: ServerProcess, web: str, game: str, players: int, matches: int,
                  viewers: int, stalled: bool, console: Console) -> Run:
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await wait_viewers(session, web, 0)
        rss_before = node.rss_bytes()
        rates, cpus, rss_with = [], [], 0
        for i in range(matches):
            rate, cpu, rss = await one_match(node, web, session, game, players, 100 + i, viewers,
                                        stalled)
            rates.append(rate)
            cpus.append(cpu)
            rss_with = max(rss_with, rss)
            console.print(f"  {viewers} {'stalled ' if stalled else ''}viewers, match {i + 1}: "
                          f"{rate:,.0f} decisions/s, node {cpu:.2f} ms CPU/decision",
                          highlight=False)
        # Let the gateway see the streams close before the last reading.
        await wait_viewers(session, web, 0)
        return Run(viewers, stalled, rates, cpus, rss_before, rss_with, node.rss_bytes())


async def bench(args: argparse.Namespace, console: Console) -> list[Run]:
    node = ServerProcess.serve("--web-port", "0")
    node.start()
    try:
        deadline = time.monotonic() + 30
        web = ""
        while not web:
            found = next((m for line in node.lines if (m := WEB.search(line))), None)
            if found:
                web = found.group(1)
            elif time.monotonic() > deadline:
                raise RuntimeError("the node did not start its web face")
            else:
                await asyncio.sleep(0.05)
        runs = []
        # Warm the node (imports, caches) so the first measured run is not penalised.
        await measure(node, web, args.game, args.players, 1, 0, False, make_console(quiet=True))
        for viewers in args.viewers:
            runs.append(await measure(node, web, args.game, args.players, args.matches,
                                      viewers, False, console))
        if args.stalled:
            runs.append(await measure(node, web, args.game, args.players, args.matches,
                                      args.stalled, True, console))
        return runs
    finally:
        node.stop()


def run_cli(args: argparse.Namespace) -> int:
    console = make_console()
    runs = asyncio.run(bench(args, console))
    table = Table(title=f"{args.game} x{args.players}, SDK random agents, web face in the "
                        "node's process (serve --web-port)")
    for column in ("viewers", "decisions/s (median)", "per match",
                   "node CPU ms/decision (median)", "RSS before",
                   "RSS with viewers", "per viewer", "RSS after"):
        table.add_column(column, justify="right")
    for r in runs:
        per_viewer = (r.rss_with_viewers - r.rss_before) / r.viewers if r.viewers else 0
        table.add_row(f"{r.viewers}{' stalled' if r.stalled else ''}",
                      f"{statistics.median(r.decisions_per_s):,.0f}",
                      ", ".join(f"{d:,.0f}" for d in r.decisions_per_s),
                      f"{statistics.median(r.cpu_ms):.2f}",
                      f"{r.rss_before / 2**20:.1f} MiB", f"{r.rss_with_viewers / 2**20:.1f} MiB",
                      f"{per_viewer / 1024:.1f} KiB" if r.viewers else "-",
                      f"{r.rss_after / 2**20:.1f} MiB")
    console.print(table)
    if args.json:
        print(json.dumps({"game": args.game, "players": args.players,
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
    parser.add_argument("--stalled", type=int, default=200,
                        help="then this many viewers that never read (0: skip)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.set_defaults(run=run_cli)

