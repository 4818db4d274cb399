"""``twistarena bench service``: decisions/s of the real service against bare gRPC.

Everything runs on loopback in one process tree: the server under test
(``twistarena serve`` with its embedded Valkey) and the ping-pong yardstick
each run in a child process, so that their CPU time is read from ``/proc``;
the agents (random bots through the real SDK) run in this process.

Throughput. (1) Sizes: one real match is played first and the mean sizes
of its DecisionRequest, Answer and AnswerAccepted messages are recorded.
(2) Bare gRPC: the same number of matches x players bidi streams exchange
messages of those sizes in the same rhythm (one open decision per match).
(3) gRPC + engine only: the same ping-pong, but its server applies a random
legal action to a real engine state per decision and sends real
DecisionRequests (observation and legal actions encoded as the service does,
an acceptance riding along when the seat that answered is asked next):
the ceiling of any server on this engine, with no Redis and no bookkeeping.
(4) The real service with random bots on as many seats, new matches started
as old ones end; the bots speak the Play protocol directly (``protocol``,
as lean as the ping-pong client plus parsing real messages), and again with
the SDK's ``Agent`` (``sdk``), whose own cost shows in the client column.
A window of the service ends by cancelling the matches still in progress:
their seats gone, the server would otherwise play them out by fallback moves
during the next window, whichever run it belongs to.
Runs (2) to (4) are measured in ``--rounds`` windows (default 5) of
``--duration / --rounds`` seconds (default 5 s each), taking turns (A B C, A B C,
...), and each run's figures are summed over its windows. The server's CPU per
decision is compared round by round: each round's ratio of the node's to the
bare server's, and the median of those ratios is the figure (with its goal:
at most 1.25 with the engine alone, 1.7 as a whole service with protocol bots
taking their events). A shared machine's speed drifts and jumps during a call
(bare gRPC alone has run 9,300 then 6,400 decisions/s in one call); the runs of
one round follow each other within seconds, and the median leaves out the
rounds in which the machine jumped in between, so the ratios hold from one call
to the next.
Reported: decisions/s of each run (and of each of its windows) and their ratio
to bare gRPC, the server's (and Valkey's) CPU per decision, the load
generator's CPU per decision, and the decision overhead. From the server's own counters
(``serve --metrics-port``): the Play messages per decision it sent and
received, and the time it took to build a DecisionRequest. The service's
agents ask for batched delivery (``Join.batched``) unless ``--no-batch``, and
each slot's agents play their next match on the Play calls of their last
(``Join.keep_open``), as agents playing match after match do, unless
``--new-stream-per-match``.

Per match (5): matches created, seated by raw Play streams (kept from one
match to the next, as the service runs keep them), started (one
DecisionRequest) and cancelled, no decision answered, as fast as the slots
go: the server's CPU per match, which the service runs' CPU per decision is
also given without (``server_cpu_us_per_decision_net``).

Decision overhead is measured from the agents' side: the time from an
agent writing its Answer to the next DecisionRequest of the same match
arriving at whichever agent must act next. Bot think time is outside that
interval by construction (it lies between a request and its answer). It
includes both directions of loopback gRPC, the server's validation, the
fenced Redis append (batched), the engine's apply, building the next
request, and any queueing in the agents' own event loop: an upper bound on
what the service adds per decision at this load.

Live matches (``--live-matches N``): N matches whose agents are all
connected and waiting on a decision that nobody answers (long clock), the
server's RSS growth per live match; then a connect storm: ``--storm``
agents, one channel each, connecting at once, and the time until every one
of them is seated (Joined).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import grpc
import grpc.aio
from twistarena import wire
from twistarena.clients.sdk import AgentError, MatchClient
from twistarena.clients.sdk.connection import make_channel, stub
from twistarena.clients.sdk.kept import KeptStreams, join_on
from twistarena.clients.sdk.localbots import seat_agents
from twistarena.link import Backoff, CallError, call_with_failover
from twistarena.v1 import match_pb2, match_pb2_grpc, play_pb2

from .live import LONG_CLOCK_MS, live_matches
from .pingpong import DECISION, PingPongClient, tune_gc
from .processes import ServerProcess, own_cpu_seconds
from .protocolbot import MATCH_OVER, ProtocolBot, ProtocolBotError, raw_play_call
from .servicefigures import AgentTracer, Report, Sizes, Throughput, Timing, read_counters

Progress = Callable[[str, float, float], None]

def _noop(phase: str, done: float, total: float) -> None:
    return None


#: How long a run's tasks may take to end once cancelled, and its channels to
#: close, before the run goes on without them.
CLOSE_TIMEOUT_S = 10.0


async def cancel_tasks(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Cancel a run's tasks and wait for them, bounded in time: a gRPC call cancelled
    on a loaded machine has been seen to wait for its status for ever."""
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT_S)


async def close_channels(channels: Sequence[grpc.aio.Channel]) -> None:
    """Close a run's channels, bounded in time: a close stuck on a loaded machine
    must not hold the benchmark."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(c.close() for c in channels),
                                              return_exceptions=True), CLOSE_TIMEOUT_S)


async def _measure(timing: Timing, server: ServerProcess, warmup: float, duration: float,
                   label: str, progress: Progress, finished: Callable[[], int],
                   stop: Callable[[], Awaitable[None]]) -> Throughput:
    """Open the window after ``warmup``, close it after ``duration``, read the counters."""
    await asyncio.sleep(warmup)
    ports = server.metrics_ports()
    counters0 = await asyncio.to_thread(read_counters, ports)
    timing.window_open = True
    t0, cpu0, helper0, own0 = (time.perf_counter(), server.cpu_seconds(),
                               server.helper_cpu_seconds(), own_cpu_seconds())
    calls0, helper_calls0 = server.syscalls(), server.helper_syscalls()
    done0 = finished()
    while (elapsed := time.perf_counter() - t0) < duration:
        progress(label, elapsed, duration)
        await asyncio.sleep(min(0.25, duration - elapsed))
    timing.window_open = False
    seconds = time.perf_counter() - t0
    run = Throughput(label, timing.decisions, seconds, server.cpu_seconds() - cpu0,
                     server.helper_cpu_seconds() - helper0, own_cpu_seconds() - own0,
                     list(timing.samples), finished() - done0,
                     server_syscalls=server.syscalls() - calls0,
                     helper_syscalls=server.helper_syscalls() - helper_calls0,
                     windows=[timing.decisions / seconds if seconds else 0.0])
    run.window_server_us = [run.us_per(run.server_cpu_s)]
    # Read after the CPU: the scrape costs the server a little CPU of its own.
    run.counters = (await asyncio.to_thread(read_counters, ports)).minus(counters0)
    progress(label, duration, duration)
    await stop()
    return run


async def capture_sizes(address: str, game: str, players: int) -> Sizes:
    """Play one real match and record the mean size of each message kind."""
    client = MatchClient(address)
    created = await client.create_match(game, players, seed=1, decision_ms=LONG_CLOCK_MS)
    sizes: dict[str, list[int]] = {"decision": [], "accepted": [], "answer": []}

    def record(msg: play_pb2.ServerMessage) -> None:
        kind = msg.WhichOneof("msg")
        if kind in ("decision", "accepted"):
            sizes[kind].append(msg.ByteSize())
        if kind == "accepted":
            answer = play_pb2.AgentMessage(answer=play_pb2.Answer(
                decision_id=msg.accepted.decision_id, action_id=msg.accepted.action_id))
            sizes["answer"].append(answer.ByteSize())

    # Unbatched: the yardsticks send a request, an answer and an acceptance per decision.
    agents = seat_agents(address, created, ["random"], seed=1, no_events=True,
                         on_message=record, batched=False)
    await asyncio.wait_for(asyncio.gather(*(a.run() for a in agents)), 120)
    return Sizes(*(round(statistics.fmean(sizes[k])) if sizes[k] else 0
                   for k in ("decision", "answer", "accepted")))


#: Who plays the seats of the real service: random bots speaking the protocol
#: directly (what the bare client does, plus parsing real messages), or the
#: SDK's ``Agent`` running the sample random strategy.
AGENT_KINDS = ("protocol", "sdk")


#: The failover policy of a bench call refused as not the match's owner: one more
#: try, at the owner named; any other refusal is the run's to count.
OWNER_HOP = Backoff(max_attempts=2)


class Owners:
    """One channel per match owner a redirect names (``serve --workers``, clusters):
    with several nodes behind one port, a match's calls must reach the node
    that runs it."""

    def __init__(self) -> None:
        self.channels: dict[str, grpc.aio.Channel] = {}

    def __call__(self, address: str) -> grpc.aio.Channel:
        if address not in self.channels:
            self.channels[address] = make_channel(address)
        return self.channels[address]

    async def cancel(self, address: str, match_id: str, reason: str) -> None:
        """CancelMatch at ``address`` (the node that created the match), sent on to
        the owner its refusal names, under the clients' one failover policy."""
        request = match_pb2.CancelMatchRequest(match_id=match_id, reason=reason)
        await call_with_failover(
            [address], None,
            lambda on: stub(match_pb2_grpc.MatchesStub, on).CancelMatch(request),
            OWNER_HOP, retry_on=frozenset(), channels=self)


async def real_throughput(server: ServerProcess, game: str, players: int, matches: int,
                          warmup: float, duration: float, agents: str = "protocol",
                          progress: Progress = _noop, events: bool = False,
                          batched: bool = True, keep_streams: bool = True) -> Throughput:
    """The real service: ``matches`` concurrent matches of random bots, kept topped up.
    ``keep_streams``: a slot's seats play their next match on the streams of the
    last (``Join.keep_open``), as agents playing match after match do."""
    if agents not in AGENT_KINDS:
        raise ValueError(f"agents must be one of {AGENT_KINDS}, not {agents!r}")
    address = server.address
    timing = Timing()
    tracer = AgentTracer(timing)
    channels = [make_channel(address) for _ in range(matches)]
    creators = [stub(match_pb2_grpc.MatchesStub, c) for c in channels]
    owners = Owners()
    kept = [KeptStreams() if keep_streams else None for _ in range(matches)]

    def seat_runs(i: int, n: int, created: Any) -> list[Awaitable[Any]]:
        if agents == "sdk":
            return [a.run() for a in seat_agents(
                address, created, ["random"], seed=i + n, no_events=not events,
                channel=channels[i], batched=batched, kept_streams=kept[i],
                tracer=tracer, lazy_observations=True)]
        match_id = created.match.match_id
        return [ProtocolBot(channels[i], match_id, t.token, (i + n) * 101 + t.seat,
                            timing.decision, timing.answer, owners, events, batched,
                            kept[i]).run()
                for t in created.seat_tokens]

    unfinished: set[str] = set()
    creating: set[asyncio.Future[Any]] = set()

    def noted(create: asyncio.Future[Any]) -> None:
        creating.discard(create)
        if not create.cancelled() and create.exception() is None:
            unfinished.add(create.result().match.match_id)

    async def one_match(i: int, n: int) -> None:
        # On the slot's own channel: a load generator does not open a connection per match.
        create = asyncio.ensure_future(creators[i].CreateMatch(match_pb2.CreateMatchRequest(
            options=match_pb2.MatchOptions(
                game_id=game, num_players=players, seed=i * 100_003 + n,
                time_control=match_pb2.TimeControl(decision_ms=LONG_CLOCK_MS)))))
        # A creation under way when the run stops still ends, and its match is
        # noted unfinished (before this slot hears of it).
        creating.add(create)
        create.add_done_callback(noted)
        created = await asyncio.shield(create)
        await asyncio.gather(*seat_runs(i, n, created))
        unfinished.discard(created.match.match_id)

    async def cancel_unfinished() -> None:
        if creating:
            await asyncio.wait(list(creating), timeout=CLOSE_TIMEOUT_S)
        await cancel_matches(address, unfinished, owners)

    label = "service, SDK agents" if agents == "sdk" else "service, protocol bots"
    label += ", with events" if events else ""
    label += "" if batched else ", unbatched"
    return await _in_slots(timing, server, warmup, duration, label, progress, matches,
                           one_match, (grpc.aio.AioRpcError, ProtocolBotError, AgentError),
                           lambda: [*channels, *owners.channels.values()],
                           cancel_unfinished)


async def cancel_matches(address: str, match_ids: set[str], owners: Owners) -> None:
    """Cancel the matches a run left unfinished, bounded in time. Left to run,
    their seats gone, the server would play them out by fallback moves (and
    renew their leases) during the next runs' windows: a load that grows with
    every window and weighs on whichever run comes next."""
    ids = list(match_ids)
    match_ids.clear()

    async def cancel(match_id: str) -> None:
        with contextlib.suppress(grpc.aio.AioRpcError, CallError):
            await owners.cancel(address, match_id, "bench run over")

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*map(cancel, ids)), CLOSE_TIMEOUT_S)


async def _in_slots(timing: Timing, server: ServerProcess, warmup: float, duration: float,
                    label: str, progress: Progress, slots: int,
                    one_match: Callable[[int, int], Awaitable[None]],
                    errors: tuple[type[BaseException], ...],
                    channels: Callable[[], Sequence[grpc.aio.Channel]],
                    settle: Callable[[], Awaitable[None]] | None = None) -> Throughput:
    """``slots`` concurrent slots, slot ``i`` running ``one_match(i, n)`` for n = 0,
    1, ... until the measurement ends; then ``settle()`` (the matches left
    unfinished, cancelled) and ``channels()`` are closed.

    A match that fails with one of ``errors`` (a stream the server cut, a reader
    too slow on a loaded machine) is counted, and its slot goes on with a new one."""
    finished = failed = 0
    running = True

    async def slot(i: int) -> None:
        nonlocal finished, failed
        n = 0
        # Checked as well as cancelled: asyncio.wait_for (3.11) can swallow a
        # cancel that arrives as its wait ends.
        while running:
            n += 1
            try:
                await one_match(i, n - 1)
            except errors:
                failed += 1
                continue
            finished += 1

    tasks = [asyncio.ensure_future(slot(i)) for i in range(slots)]

    async def stop() -> None:
        nonlocal running
        if not running:
            return
        running = False
        await cancel_tasks(tasks)
        if settle is not None:
            await settle()
        await close_channels(list(channels()))

    try:
        run = await _measure(timing, server, warmup, duration, label, progress,
                             lambda: finished, stop)
        run.matches_failed = failed
        return run
    finally:
        await stop()


async def _seat_and_cancel(address: str, channel: grpc.aio.Channel, creator: Any,
                           game: str, players: int,
                           seed: int, events: bool, batched: bool,
                           kept: KeptStreams | None, owners: Owners) -> None:
    """One match created, every seat joined by a raw Play stream, started (a seat
    is asked) and cancelled; its streams read to their end (or, kept for the next
    match, to MatchOver). A seat the node refuses as not the match's owner joins
    again at the owner it names, and the cancel goes there too."""
    created = await creator.CreateMatch(match_pb2.CreateMatchRequest(
        options=match_pb2.MatchOptions(
            game_id=game, num_players=players, seed=seed,
            time_control=match_pb2.TimeControl(decision_ms=LONG_CLOCK_MS))))
    match_id = created.match.match_id
    asked = asyncio.Event()

    async def seat(token: str) -> None:
        join = play_pb2.AgentMessage(join=play_pb2.Join(
            match_id=match_id, seat_token=token, no_events=not events, batched=batched,
            keep_open=kept is not None))

        async def joined(on: grpc.aio.Channel) -> tuple[grpc.aio.Channel, Any, Any]:
            return (on, *await join_on(kept, on, functools.partial(raw_play_call, on), join))

        on, call, data = await call_with_failover(
            [address], None, joined, OWNER_HOP, retry_on=frozenset(),
            channels=lambda at: channel if at == address else owners(at))
        over = False
        try:
            while data is not grpc.aio.EOF:
                kind = wire.message_kind(data)
                if kind == wire.DECISION_KIND:
                    asked.set()
                elif kind == MATCH_OVER and kept is not None:
                    over = True
                    return
                data = await call.read()
        finally:
            if over and kept is not None:
                kept.keep(on, call)
            else:
                call.cancel()

    seats = [asyncio.ensure_future(seat(t.token)) for t in created.seat_tokens]
    try:
        await asyncio.wait_for(asked.wait(), 60)
        await owners.cancel(address, match_id, "bench")
        await asyncio.wait(seats, timeout=60)
    finally:
        for task in seats:
            task.cancel()


async def match_costs(server: ServerProcess, game: str, players: int, matches: int,
                      warmup: float, duration: float, progress: Progress = _noop,
                      events: bool = False, batched: bool = True,
                      keep_streams: bool = True) -> Throughput:
    """Matches created, seated, started and cancelled with no decision answered, by
    ``matches`` slots: the server's CPU per match apart from its decisions."""
    timing = Timing()
    channels = [make_channel(server.address) for _ in range(matches)]
    creators = [stub(match_pb2_grpc.MatchesStub, c) for c in channels]
    kept = [KeptStreams() if keep_streams else None for _ in range(matches)]
    owners = Owners()

    async def one_match(i: int, n: int) -> None:
        await _seat_and_cancel(server.address, channels[i], creators[i], game, players,
                               i * 100_003 + n + 1, events, batched, kept[i], owners)

    run = await _in_slots(timing, server, warmup, duration, "per match (no decisions)",
                          progress, matches, one_match,
                          (grpc.aio.AioRpcError, CallError, TimeoutError),
                          lambda: [*channels, *owners.channels.values()])
    if run.matches_finished:
        run.match_cpu_us = 1e6 * run.server_cpu_s / run.matches_finished
    return run


#: First byte of a serialized ServerMessage holding a DecisionRequest.
DECISION_PREFIX = play_pb2.ServerMessage(
    decision=play_pb2.DecisionRequest(decision_id=1)).SerializeToString()[:1]


async def raw_throughput(players: int, matches: int, sizes: Sizes, warmup: float,
                         duration: float, progress: Progress = _noop,
                         game: str = "") -> Throughput:
    """Bare grpc.aio ping-pong with the real message sizes and stream layout;
    with ``game``: real requests built by the engine per decision (no Redis, no runner)."""
    argv = [sys.executable, "-m", "twistarena.tools.pingpong",
            "--players", str(players), "--decision-bytes", str(sizes.decision),
            "--accepted-bytes", str(sizes.accepted)]
    if game:
        argv += ["--game", game]
    server = ServerProcess(argv)
    address = await asyncio.to_thread(server.start)
    timing = Timing()
    stop_event = asyncio.Event()
    channels = [make_channel(address) for _ in range(matches)]
    prefix = DECISION_PREFIX if game else DECISION
    clients = [PingPongClient(channels[g], g, s, sizes.answer, timing.decision, timing.answer,
                              prefix)
               for g in range(matches) for s in range(players)]
    tasks = [asyncio.ensure_future(c.run(stop_event)) for c in clients]

    async def stop() -> None:
        stop_event.set()
        await cancel_tasks(tasks)
        await close_channels(channels)

    label = "gRPC + engine only" if game else "bare gRPC"
    try:
        return await _measure(timing, server, warmup, duration, label, progress,
                              lambda: 0, stop)
    finally:
        await stop()
        await asyncio.to_thread(server.stop)


#: The benchmark is one client creating matches as fast as the server allows: the
#: per-client limits that protect a public server are lifted.
UNLIMITED = ("--creates-per-minute", "0", "--live-per-client", "0",
             "--max-waiting-matches", "0", "--peer-joins-per-minute", "0",
             "--stream-queue", "0", "--stalled-write", "0")


#: The per-match phase is one run, compared with nothing: this long is enough.
MATCH_COSTS_S = 10.0


async def run(game: str, players: int, matches: int, duration: float, warmup: float,
              live: int, storm: int, server_args: Sequence[str] = (),
              progress: Progress = _noop, agents: Sequence[str] = AGENT_KINDS,
              events: bool = False, batched: bool = True, rounds: int = 5,
              keep_streams: bool = True) -> Report:
    """The whole benchmark; every phase is bounded in time.

    The runs compared (bare gRPC, engine only, the service's agents) are measured
    in ``rounds`` windows of ``duration / rounds`` each, taking turns (A B C, A B C,
    ...): ``Report.cpu_ratios`` compares them round by round."""
    rounds = max(1, rounds)
    report = Report({"game": game, "players": players, "matches": matches,
                     "duration_s": duration, "warmup_s": warmup, "live_matches": live,
                     "storm_agents": storm, "agents": list(agents),
                     "server_args": list(server_args), "events": events,
                     "batched": batched, "rounds": rounds, "keep_streams": keep_streams})
    server = ServerProcess.serve(*UNLIMITED, "--metrics-port", "0", *server_args)
    await asyncio.to_thread(server.start)
    try:
        if live:
            report.live = await live_matches(server, game, players, live, storm, progress)
            return report
        progress("measuring message sizes", 0, 1)
        sizes = report.sizes = await capture_sizes(server.address, game, players)
        window = duration / rounds
        raw = functools.partial(raw_throughput, players, matches, sizes, warmup, window,
                                progress)
        real = functools.partial(real_throughput, server, game, players, matches, warmup,
                                 window)
        # Report attribute -> one window of that run.
        phases: list[tuple[str, Callable[[], Awaitable[Throughput]]]] = [
            ("raw", raw), ("engine_only", functools.partial(raw, game))]
        for kind, key in (("protocol", "real"), ("sdk", "sdk")):
            if kind in agents:
                phases.append((key, functools.partial(real, kind, progress, events, batched,
                                                      keep_streams)))
        for _ in range(rounds):
            for key, measure in phases:
                measured = await measure()
                before: Throughput | None = getattr(report, key)
                setattr(report, key, measured if before is None else before.plus(measured))
        report.matches = await match_costs(server, game, players, matches, warmup,
                                           min(duration, MATCH_COSTS_S), progress, events,
                                           batched, keep_streams)
        for run in (report.real, report.sdk):
            if run is not None:
                run.match_cpu_us = report.matches.match_cpu_us
        return report
    finally:
        await asyncio.to_thread(server.stop)


def run_sync(*args: Any, **kwargs: Any) -> Report:
    """``run`` on uvloop when available (the server uses it too).

    The load generator collects garbage as rarely as the server does (the same
    setting serves the ping-pong yardstick and the real agents)."""
    tune_gc()
    try:
        import uvloop
    except ImportError:
        return asyncio.run(run(*args, **kwargs))
    result: Report = uvloop.run(run(*args, **kwargs))
    return result


