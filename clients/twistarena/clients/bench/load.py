"""``twistarena loadtest``: real gRPC agents against running servers, bounded in count and time.

Several worker processes (``--processes``), each on uvloop with many Play
streams, keep ``--concurrency`` matches going in all: each slot creates a
match through the API (CreateMatch), seats random bots on every seat through
the SDK, plays it to the end and starts the next, until ``--matches`` have
been started or ``--duration`` seconds have passed (matches still running
then are cancelled through the API and not counted).

Reported: matches/s and decisions/s; the decision round trip as the agent
sees it (DecisionRequest received -> its AnswerAccepted received), p50, p95,
p99; the server overhead as ``bench service`` decomposes it (an agent's Answer
written -> the next DecisionRequest of that match received: both loopback
directions, validation, the fenced Redis append, apply, the next request);
errors by kind (gRPC status and ``twistarena-reason``, in-band rejections).
With ``--json`` the last line of output is one JSON object.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..sdk import Agent, AgentError, ArenaClient
from ..sdk.connection import make_channel, parse_servers
from ..sdk.hosting import seat_agents
from .pingpong import tune_gc
from .service import AgentTracer, Timing

WORKER = "from twistarena.clients.bench.load import worker_main; worker_main()"
#: How often a worker reports its counters.
REPORT_S = 0.25
#: Latency samples a worker sends back at most (an even subsample of all of them).
MAX_SAMPLES = 50_000


class LoadTracer(AgentTracer):
    """``bench service``'s overhead timing plus the agent-side decision round trip."""

    def __init__(self, timing: Timing) -> None:
        super().__init__(timing)
        self.received: dict[tuple[int, int], float] = {}
        self.round_trips: list[float] = []

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None:
        super().decision_received(agent, decision_id, t)
        self.received.setdefault((id(agent), decision_id), t)

    def accepted(self, agent: Agent, decision_id: int, t: float) -> None:
        start = self.received.pop((id(agent), decision_id), None)
        if start is not None:
            self.round_trips.append(t - start)


@dataclass(slots=True)
class WorkerConfig:
    servers: list[str]
    game: str
    players: int
    matches: int
    concurrency: int
    duration: float
    seed: int
    decision_ms: int = 0
    admin_token: str | None = None


@dataclass(slots=True)
class WorkerStats:
    started: int = 0
    completed: int = 0
    decisions: int = 0
    elapsed: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)


def _error_kind(error: BaseException) -> str:
    if isinstance(error, AgentError):
        code = error.code.name if error.code is not None else "UNKNOWN"
        return f"{code}/{error.reason}" if error.reason else code
    if isinstance(error, TimeoutError):
        return "TIMEOUT"
    return type(error).__name__


async def run_worker(cfg: WorkerConfig, report: Callable[[dict[str, Any]], None]) -> None:
    """One process's share of the load; ``report`` gets progress and the final figures."""
    servers = cfg.servers
    client = ArenaClient(servers, admin_token=cfg.admin_token)
    timing = Timing()
    timing.window_open = True
    tracer = LoadTracer(timing)
    stats = WorkerStats()
    channels = [make_channel(servers[i % len(servers)]) for i in range(cfg.concurrency)]
    t0 = time.perf_counter()
    deadline = t0 + cfg.duration
    last_done = t0
    in_flight: set[str] = set()

    async def slot(i: int) -> None:
        nonlocal last_done
        while stats.started < cfg.matches and time.perf_counter() < deadline:
            n = stats.started
            stats.started += 1
            agents: list[Agent] = []
            try:
                created = await client.create_match(cfg.game, cfg.players,
                                                    seed=cfg.seed * 1_000_003 + n,
                                                    decision_ms=cfg.decision_ms)
                in_flight.add(created.match.match_id)
                address = servers[i % len(servers)]
                agents = seat_agents([address, *servers], created, ["random"],
                                     seed=cfg.seed + n, no_events=True, channel=channels[i],
                                     tracer=tracer, lazy_observations=True)
                await asyncio.gather(*(a.run() for a in agents))
                stats.completed += 1
                in_flight.discard(created.match.match_id)
                last_done = time.perf_counter()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                stats.errors[_error_kind(error)] += 1
            finally:
                for agent in agents:
                    for rejection in agent.rejections:
                        stats.errors[f"rejected/{rejection.reason}"] += 1

    async def progress() -> None:
        while True:
            report({"progress": {"started": stats.started, "completed": stats.completed,
                                 "decisions": len(tracer.round_trips)}})
            await asyncio.sleep(REPORT_S)

    tasks = [asyncio.ensure_future(slot(i)) for i in range(cfg.concurrency)]
    ticker = asyncio.ensure_future(progress())
    try:
        _done, pending = await asyncio.wait(tasks, timeout=max(0.0, cfg.duration))
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        ticker.cancel()
        await asyncio.gather(*(c.close() for c in channels), return_exceptions=True)
    # Matches cut off by the deadline are cancelled so that no load is left behind.
    abandoned = len(in_flight)
    if in_flight:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(client.cancel_match(
                mid, "loadtest over") for mid in in_flight), return_exceptions=True), 10)
    end = last_done if stats.completed >= cfg.matches else time.perf_counter()
    stats.elapsed = max(1e-6, min(end, deadline) - t0)
    report({"final": {
        "started": stats.started, "completed": stats.completed, "elapsed_s": stats.elapsed,
        "abandoned": abandoned,
        "decisions": len(tracer.round_trips), "errors": dict(stats.errors),
        "round_trips_us": _subsample(tracer.round_trips),
        "overhead_us": _subsample(timing.samples)}})


def _subsample(samples: Sequence[float]) -> list[int]:
    """At most ``MAX_SAMPLES`` of ``samples`` (evenly spaced), in microseconds."""
    step = max(1, -(-len(samples) // MAX_SAMPLES))
    return [round(x * 1e6) for x in samples[::step]]


def worker_main() -> None:
    """Entry point of a worker process: config as JSON in argv[1]; JSON lines on stdout."""
    cfg = WorkerConfig(**json.loads(sys.argv[1]))
    from ..sdk.hosting import configure_logging

    configure_logging(False)
    tune_gc()

    def report(doc: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(doc) + "\n")
        sys.stdout.flush()

    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is absent on some platforms
        asyncio.run(run_worker(cfg, report))
        return
    uvloop.run(run_worker(cfg, report))


def percentiles_ms(samples_us: Sequence[int]) -> dict[str, float]:
    if not samples_us:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    ordered = sorted(samples_us)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000, 3)

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99)}


def split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


async def run_load(servers: Sequence[str], game: str, players: int, matches: int,
                   concurrency: int, duration: float, processes: int, seed: int = 1,
                   decision_ms: int = 0, admin_token: str | None = None,
                   progress: Callable[[int, int, int], None] | None = None) -> dict[str, Any]:
    """Spawn the workers, follow their progress, merge their figures into one report."""
    servers = parse_servers(list(servers))
    processes = max(1, min(processes, concurrency, matches))
    shares = [(m, c) for m, c in zip(split(matches, processes), split(concurrency, processes),
                                     strict=True) if m and c]
    procs = []
    for k, (m, c) in enumerate(shares):
        cfg = WorkerConfig(servers=list(servers), game=game, players=players, matches=m,
                           concurrency=c, duration=duration, seed=seed * 7919 + k * 104_729,
                           decision_ms=decision_ms, admin_token=admin_token)
        procs.append(await asyncio.create_subprocess_exec(
            sys.executable, "-c", WORKER, json.dumps(_as_dict(cfg)),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, limit=1 << 26,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}))
    latest: list[dict[str, Any]] = [{} for _ in procs]
    finals: list[dict[str, Any] | None] = [None for _ in procs]
    t0 = time.perf_counter()

    async def follow(k: int, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            try:
                doc = json.loads(raw)
            except ValueError:
                continue
            if "progress" in doc:
                latest[k] = doc["progress"]
                if progress is not None:
                    progress(sum(p.get("completed", 0) for p in latest), matches,
                             sum(p.get("decisions", 0) for p in latest))
            elif "final" in doc:
                finals[k] = doc["final"]
        await proc.wait()

    followers = [asyncio.ensure_future(follow(k, p)) for k, p in enumerate(procs)]
    try:
        await asyncio.wait_for(asyncio.gather(*followers), duration + 30)
    except TimeoutError:
        pass
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    wall = time.perf_counter() - t0
    errors: Counter[str] = Counter()
    round_trips: list[int] = []
    overhead: list[int] = []
    completed = started = decisions = abandoned = 0
    elapsed = 0.0
    for k, final in enumerate(finals):
        if final is None:
            errors["worker_lost"] += 1
            completed += latest[k].get("completed", 0)
            continue
        completed += final["completed"]
        started += final["started"]
        abandoned += final["abandoned"]
        decisions += final["decisions"]
        elapsed = max(elapsed, final["elapsed_s"])
        errors.update(final["errors"])
        round_trips += final["round_trips_us"]
        overhead += final["overhead_us"]
    elapsed = elapsed or wall
    return {
        "servers": list(servers), "game": game, "players": players,
        "matches_requested": matches, "concurrency": concurrency, "processes": len(procs),
        "duration_limit_s": duration, "elapsed_s": round(elapsed, 3),
        "matches_started": started, "matches_completed": completed,
        "matches_cut_off": abandoned,
        "matches_per_s": round(completed / elapsed, 3) if elapsed else 0.0,
        "decisions": decisions,
        "decisions_per_s": round(decisions / elapsed, 1) if elapsed else 0.0,
        "latency_ms": percentiles_ms(round_trips),
        "server_overhead_ms": percentiles_ms(overhead),
        "errors": dict(sorted(errors.items())),
    }


def _as_dict(cfg: WorkerConfig) -> dict[str, Any]:
    return {name: getattr(cfg, name) for name in WorkerConfig.__dataclass_fields__}
