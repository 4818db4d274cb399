"""``twistarena loadtest``: real gRPC agents against running servers, bounded in count and time.

Several worker processes (``--processes``), each on uvloop with many Play
streams, create matches through the API (CreateMatch), seat random bots on
every seat through the SDK and play them to the end, until ``--matches`` have
been started or ``--duration`` seconds have passed (matches still running
then are cancelled through the API and not counted). Two models:

- closed (the default): ``--concurrency`` matches in flight, each slot starting
  the next when its match ends. A stalled server slows the slots down and so
  hides its stall from the latencies (coordinated omission).
- open (``--rate R`` or ``--stages "30s:5,60s:20,30s:0"``): matches start on a
  schedule whatever the server does; latencies count from the scheduled time.
  A start that finds ``--concurrency`` matches already in flight is dropped,
  one the worker could not make on time (``LATE_S``) is counted late: both
  are reported, never silently delayed.

Latencies go into HDR histograms (microseconds, 3 significant digits) that the
workers send encoded and the parent merges exactly: the decision round trip,
the start latency (scheduled or attempted start -> match created) and the
match latency (-> match over).

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
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from twistarena.clients.sdk import Agent, AgentError, MatchClient
from twistarena.clients.sdk.connection import make_channel, parse_servers
from twistarena.clients.sdk.kept import KeptStreams
from twistarena.clients.sdk.localbots import StrategyBot, seat_agents

from . import loadplan
from .pingpong import tune_gc
from .servicefigures import AgentTracer, Timing

WORKER = "from twistarena.tools.load import worker_main; worker_main()"
#: How often a worker reports its counters.
REPORT_S = 0.25
#: An open-model start this far behind its scheduled time is counted late.
LATE_S = 0.05


class LoadTracer(AgentTracer):
    """``bench service``'s overhead timing plus the agent-side decision round trip."""

    def __init__(self, timing: Timing, timeline: loadplan.Timeline) -> None:
        super().__init__(timing)
        self.timeline = timeline
        self.received: dict[tuple[int, int], float] = {}
        #: The think time of each agent's current decision, left out of its latency.
        self.thinking: dict[int, float] = {}
        self.round_trips = loadplan.new_histogram()
        self.decisions = 0

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None:
        super().decision_received(agent, decision_id, t)
        self.received.setdefault((id(agent), decision_id), t)

    def accepted(self, agent: Agent, decision_id: int, t: float) -> None:
        start = self.received.pop((id(agent), decision_id), None)
        if start is not None:
            latency = t - start - self.thinking.pop(id(agent), 0.0)
            loadplan.record_seconds(self.round_trips, latency)
            self.timeline.decision(t, latency)
            self.decisions += 1


class LoadBot:
    """A house strategy as a load agent: it thinks before answering (``--think-ms``) and
    may drop its stream once, at a chosen decision, to resume it (``--disconnect``)."""

    def __init__(self, strategy: str, seed: int, think: loadplan.ThinkTime | None,
                 disconnect_at: int | None, tracer: LoadTracer) -> None:
        self.inner = StrategyBot(strategy, seed, lambda: (self.agent.game_id,
                                                          self.agent.game_options))
        self.think = think
        self.disconnect_at = disconnect_at
        self.tracer = tracer
        self.rng = random.Random(seed)
        self.decided = 0
        self.agent: Agent

    async def act(self, observation: Mapping[str, Any], legal_actions: Sequence[Any]) -> int:
        self.decided += 1
        if self.decided == self.disconnect_at:
            self.agent.disconnect()
        if self.think is not None:
            pause = self.think.seconds(self.rng)
            self.tracer.thinking[id(self.agent)] = pause
            await asyncio.sleep(pause)
        return self.inner.act(observation, legal_actions)


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
    #: Open model: the arrival schedule as (seconds, start rate, end rate) segments.
    stages: list[list[float]] | None = None
    worker: int = 0
    workers: int = 1
    grace: float = 10.0
    #: ``--think-ms`` as given; ``--mix`` as (game, players, bot, weight) rows.
    think: str | None = None
    mix: list[list[Any]] | None = None
    #: The share of agents that drop their stream once and resume.
    disconnect: float = 0.0
    #: Agents play their next match on the Play calls of their last one
    #: (``Join.keep_open``); False: a call per match.
    keep_streams: bool = True


@dataclass(slots=True)
class WorkerStats:
    scheduled: int = 0
    started: int = 0
    completed: int = 0
    late: int = 0
    dropped: int = 0
    decisions: int = 0
    elapsed: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    disconnected: int = 0
    resumed: int = 0
    #: Completed matches by table (GAME:PLAYERS:BOT).
    tables: Counter[str] = field(default_factory=Counter)


def seat_load_agents(servers: list[str], created: Any, strategy: str, seed: int,
                     think: loadplan.ThinkTime | None, disconnect: float, tracer: LoadTracer,
                     options: dict[str, Any]) -> list[LoadBot]:
    """One LoadBot agent per seat; a ``disconnect`` share of them drop their stream once."""
    rng = random.Random(seed)
    bots = []
    for token in sorted(created.seat_tokens, key=lambda t: t.seat):
        drop_at = rng.randint(2, 6) if rng.random() < disconnect else None
        bot = LoadBot(strategy, seed * 101 + token.seat, think, drop_at, tracer)
        bot.agent = Agent(bot, server=servers, match_id=created.match.match_id,
                          token=token.token, name=f"{created.match.match_id}/seat{token.seat}",
                          **options)
        bots.append(bot)
    return bots


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
    client = MatchClient(servers, admin_token=cfg.admin_token)
    timing = Timing()
    timing.window_open = True
    timeline = loadplan.Timeline(time.perf_counter())
    tracer = LoadTracer(timing, timeline)
    stats = WorkerStats()
    start_latency = loadplan.new_histogram()
    match_latency = loadplan.new_histogram()
    channels = [make_channel(servers[i % len(servers)]) for i in range(cfg.concurrency)]
    kept = KeptStreams() if cfg.keep_streams else None
    think = None if cfg.think is None else loadplan.ThinkTime.parse(cfg.think)
    tables = ([loadplan.Table(*row) for row in cfg.mix] if cfg.mix else
              [loadplan.Table(cfg.game, cfg.players, "random")])
    plain = think is None and not cfg.disconnect
    t0 = time.perf_counter()
    deadline = t0 + cfg.duration
    last_done = t0
    in_flight: set[str] = set()

    async def play(n: int, since: float) -> None:
        """Match number ``n``; its latencies count from ``since`` (scheduled or attempted)."""
        nonlocal last_done
        agents: list[Agent] = []
        bots: list[LoadBot] = []
        table = loadplan.pick_table(tables, n, cfg.seed)
        try:
            created = await client.create_match(table.game, table.players,
                                                seed=cfg.seed * 1_000_003 + n,
                                                decision_ms=cfg.decision_ms)
            loadplan.record_seconds(start_latency, time.perf_counter() - since)
            in_flight.add(created.match.match_id)
            address = servers[n % len(servers)]
            # Unbatched: the round trip ends at the AnswerAccepted, which a batched
            # stream would hold back for the seat's next message.
            options: dict[str, Any] = {"no_events": True, "tracer": tracer,
                                       "channel": channels[n % len(channels)],
                                       "lazy_observations": True, "batched": False,
                                       "kept_streams": kept}
            if plain and table.bot == "random":
                agents = seat_agents([address, *servers], created, [table.bot],
                                     seed=cfg.seed + n, **options)
            else:
                bots = seat_load_agents([address, *servers], created, table.bot,
                                        cfg.seed + n, think, cfg.disconnect, tracer, options)
                agents = [bot.agent for bot in bots]
            await asyncio.gather(*(a.run() for a in agents))
            stats.completed += 1
            stats.tables[f"{table.game}:{table.players}:{table.bot}"] += 1
            in_flight.discard(created.match.match_id)
            last_done = time.perf_counter()
            loadplan.record_seconds(match_latency, last_done - since)
            timeline.match(last_done)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            stats.errors[_error_kind(error)] += 1
            timeline.error(time.perf_counter())
        finally:
            for agent in agents:
                for rejection in agent.rejections:
                    stats.errors[f"rejected/{rejection.reason}"] += 1
            for bot in bots:
                if bot.disconnect_at is not None and bot.decided >= bot.disconnect_at:
                    stats.disconnected += 1
                    stats.resumed += bool(bot.agent.reconnects and bot.agent.result)

    async def slot() -> None:
        """Closed model: one match after another, each timed from its attempt."""
        while stats.started < cfg.matches and time.perf_counter() < deadline:
            n = stats.started
            stats.started += 1
            stats.scheduled += 1
            await play(n * cfg.workers + cfg.worker, time.perf_counter())

    async def schedule(running: set[asyncio.Task[None]]) -> None:
        """Open model: start this worker's arrivals on time, whatever the server does."""
        assert cfg.stages is not None
        segments = [loadplan.Segment(*seg) for seg in cfg.stages]
        for n, offset in loadplan.worker_arrivals(segments, cfg.worker, cfg.workers):
            due = t0 + offset
            if stats.scheduled >= cfg.matches or due >= deadline:
                break
            now = time.perf_counter()
            if due > now:
                await asyncio.sleep(due - now)
            stats.scheduled += 1
            if time.perf_counter() - due > LATE_S:
                stats.late += 1
            if len(running) >= cfg.concurrency:
                stats.dropped += 1
                continue
            stats.started += 1
            task = asyncio.ensure_future(play(n, due))
            running.add(task)
            task.add_done_callback(running.discard)

    async def progress() -> None:
        while True:
            report({"progress": {"started": stats.started, "completed": stats.completed,
                                 "decisions": tracer.decisions}})
            await asyncio.sleep(REPORT_S)

    ticker = asyncio.ensure_future(progress())
    tasks: list[asyncio.Task[None]] = []
    try:
        if cfg.stages is None:
            tasks = [asyncio.ensure_future(slot()) for _ in range(cfg.concurrency)]
            _done, pending = await asyncio.wait(tasks, timeout=max(0.0, cfg.duration))
        else:
            running: set[asyncio.Task[None]] = set()
            await schedule(running)
            tasks = list(running)
            pending = set()
            if tasks:  # matches started near the end get ``grace`` seconds to finish
                _done, pending = await asyncio.wait(tasks, timeout=cfg.grace)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        ticker.cancel()
        if kept is not None:
            kept.close()
        await asyncio.gather(*(c.close() for c in channels), return_exceptions=True)
    # Matches cut off by the deadline are cancelled so that no load is left behind.
    abandoned = len(in_flight)
    if in_flight:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(client.cancel_match(
                mid, "loadtest over") for mid in in_flight), return_exceptions=True), 10)
    end = last_done if stats.completed >= cfg.matches else time.perf_counter()
    if cfg.stages is None:
        end = min(end, deadline)
    stats.elapsed = max(1e-6, end - t0)
    overhead = loadplan.new_histogram()
    for sample in timing.samples:
        loadplan.record_seconds(overhead, sample)
    report({"final": {
        "scheduled": stats.scheduled, "started": stats.started, "completed": stats.completed,
        "late": stats.late, "dropped": stats.dropped,
        "disconnected": stats.disconnected, "resumed": stats.resumed,
        "tables": dict(stats.tables), "timeline": timeline.encode(),
        "elapsed_s": stats.elapsed, "abandoned": abandoned,
        "decisions": tracer.decisions, "errors": dict(stats.errors),
        "histograms": {"latency": loadplan.encode(tracer.round_trips),
                       "overhead": loadplan.encode(overhead),
                       "start": loadplan.encode(start_latency),
                       "match": loadplan.encode(match_latency)}}})


def worker_main() -> None:
    """Entry point of a worker process: config as JSON in argv[1]; JSON lines on stdout."""
    cfg = WorkerConfig(**json.loads(sys.argv[1]))
    from twistarena.clients.sdk.localbots import configure_logging

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


def split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


async def run_load(servers: Sequence[str], game: str, players: int, matches: int,
                   concurrency: int, duration: float, processes: int, seed: int = 1,
                   decision_ms: int = 0, admin_token: str | None = None,
                   progress: Callable[[int, int, int], None] | None = None,
                   stages: Sequence[loadplan.Segment] | None = None,
                   grace: float = 10.0, think: str | None = None,
                   mix: Sequence[loadplan.Table] | None = None,
                   disconnect: float = 0.0, keep_streams: bool = True) -> dict[str, Any]:
    """Spawn the workers, follow their progress, merge their figures into one report.

    With ``stages`` the run is an open model: the workers share one arrival
    schedule (each takes every P-th arrival) and ``concurrency`` caps the
    matches in flight; without, a closed loop of ``concurrency`` slots.
    """
    servers = parse_servers(list(servers))
    processes = max(1, min(processes, concurrency, matches))
    shares = [(m, c) for m, c in zip(split(matches, processes), split(concurrency, processes),
                                     strict=True) if m and c]
    procs = []
    for k, (m, c) in enumerate(shares):
        cfg = WorkerConfig(servers=list(servers), game=game, players=players, matches=m,
                           concurrency=c, duration=duration, seed=seed * 7919 + k * 104_729,
                           decision_ms=decision_ms, admin_token=admin_token,
                           stages=None if stages is None else [
                               [s.seconds, s.start, s.end] for s in stages],
                           worker=k, workers=len(shares), grace=grace, think=think,
                           mix=None if not mix else [
                               [t.game, t.players, t.bot, t.weight] for t in mix],
                           disconnect=disconnect, keep_streams=keep_streams)
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
        await asyncio.wait_for(asyncio.gather(*followers), duration + grace + 30)
    except TimeoutError:
        pass
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    wall = time.perf_counter() - t0
    errors: Counter[str] = Counter()
    histograms: dict[str, list[str]] = {"latency": [], "overhead": [], "start": [], "match": []}
    completed = started = decisions = abandoned = scheduled = late = dropped = 0
    disconnected = resumed = 0
    tables: Counter[str] = Counter()
    timelines: list[list[dict[str, Any]]] = []
    elapsed = 0.0
    for k, final in enumerate(finals):
        if final is None:
            errors["worker_lost"] += 1
            completed += latest[k].get("completed", 0)
            continue
        completed += final["completed"]
        started += final["started"]
        scheduled += final["scheduled"]
        late += final["late"]
        dropped += final["dropped"]
        disconnected += final["disconnected"]
        resumed += final["resumed"]
        tables.update(final["tables"])
        timelines.append(final["timeline"])
        abandoned += final["abandoned"]
        decisions += final["decisions"]
        elapsed = max(elapsed, final["elapsed_s"])
        errors.update(final["errors"])
        for name, encoded in final["histograms"].items():
            histograms[name].append(encoded)
    elapsed = elapsed or wall
    merged = {name: loadplan.merge(parts) for name, parts in histograms.items()}
    return {
        "servers": list(servers), "game": game, "players": players,
        "model": "closed" if stages is None else "open",
        "rate_stages": None if stages is None else [
            {"seconds": s.seconds, "from": s.start, "to": s.end} for s in stages],
        "matches_requested": matches, "concurrency": concurrency, "processes": len(procs),
        "duration_limit_s": duration, "elapsed_s": round(elapsed, 3),
        "matches_started": started, "matches_completed": completed,
        "matches_cut_off": abandoned,
        "matches_scheduled": scheduled, "matches_late": late, "matches_dropped": dropped,
        "think_ms": think, "mix": None if not mix else [
            {"game": t.game, "players": t.players, "bot": t.bot, "weight": t.weight}
            for t in mix],
        "agents_disconnected": disconnected, "agents_resumed": resumed,
        "matches_by_table": dict(sorted(tables.items())),
        "matches_per_s": round(completed / elapsed, 3) if elapsed else 0.0,
        "decisions": decisions,
        "decisions_per_s": round(decisions / elapsed, 1) if elapsed else 0.0,
        "latency_ms": loadplan.summary_ms(merged["latency"]),
        "server_overhead_ms": loadplan.summary_ms(merged["overhead"]),
        "start_latency_ms": loadplan.summary_ms(merged["start"]),
        "match_latency_ms": loadplan.summary_ms(merged["match"]),
        "latency_buckets_ms": loadplan.buckets_ms(merged["latency"]),
        "errors": dict(sorted(errors.items())),
        "histograms": {name: loadplan.encode(h) for name, h in merged.items()},
        "timeline": loadplan.merge_timelines(timelines),
    }


def merge_reports(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One report from the reports of runs made side by side (e.g. pods of a Job).

    Counts add up, rates are over the longest run, histograms merge exactly."""
    first = reports[0]
    out = dict(first)
    for key in ("matches_requested", "concurrency", "processes", "matches_started",
                "matches_completed", "matches_cut_off", "matches_scheduled", "matches_late",
                "matches_dropped", "decisions", "agents_disconnected", "agents_resumed"):
        out[key] = sum(r.get(key, 0) for r in reports)
    elapsed = max(r["elapsed_s"] for r in reports)
    out["elapsed_s"] = elapsed
    out["matches_per_s"] = round(out["matches_completed"] / elapsed, 3) if elapsed else 0.0
    out["decisions_per_s"] = round(out["decisions"] / elapsed, 1) if elapsed else 0.0
    errors: Counter[str] = Counter()
    for r in reports:
        errors.update(r["errors"])
    out["errors"] = dict(sorted(errors.items()))
    merged = {name: loadplan.merge(r["histograms"][name] for r in reports)
              for name in first["histograms"]}
    out["histograms"] = {name: loadplan.encode(h) for name, h in merged.items()}
    for name, key in (("latency", "latency_ms"), ("overhead", "server_overhead_ms"),
                      ("start", "start_latency_ms"), ("match", "match_latency_ms")):
        out[key] = loadplan.summary_ms(merged[name])
    out["latency_buckets_ms"] = loadplan.buckets_ms(merged["latency"])
    out["runs_merged"] = len(reports)
    return out


def push_report(redis_url: str, run_id: str, report: dict[str, Any]) -> None:
    """Leave this run's report where ``loadtest merge`` collects the run's workers."""
    import redis

    with redis.Redis.from_url(redis_url) as store:
        store.rpush(f"loadtest:{run_id}:reports", json.dumps(report))
        store.expire(f"loadtest:{run_id}:reports", 86_400)


def collect_reports(redis_url: str, run_id: str, workers: int,
                    timeout: float) -> list[dict[str, Any]]:
    """Wait (at most ``timeout`` s) for ``workers`` reports of ``run_id``; return them."""
    import redis

    key = f"loadtest:{run_id}:reports"
    deadline = time.monotonic() + timeout
    with redis.Redis.from_url(redis_url) as store:
        while True:
            raw = store.lrange(key, 0, -1)
            if len(raw) >= workers or time.monotonic() > deadline:
                return [json.loads(r) for r in raw]
            store.blpop([f"{key}:never"], timeout=0.2)  # a bounded wait on the server


def _as_dict(cfg: WorkerConfig) -> dict[str, Any]:
    return {name: getattr(cfg, name) for name in WorkerConfig.__dataclass_fields__}
