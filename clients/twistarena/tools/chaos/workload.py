"""The campaign's workload: matches created at a rate over the deployment's
nodes, every seat played by a real SDK agent (events, resume, failover) or, for
a share of the seats, by a bot that speaks the Play protocol alone (no SDK:
it joins again on its own after a failure) or by a program through the
bridge, in the sandbox (an ``exec:`` entrant); a share of the matches followed by
a spectator; and a share of hosted practice matches, whose hosted seat a
runner plays (the workload only follows them to their end). What each heard
is kept.

A seat's record is the checker's evidence: each acknowledgement (decision id,
action, and how many Rewound the seat had heard by then), each Rewound, the
end it heard, and the outcome the store gave it afterwards (``stored_result``,
as the SDK's queue and bot paths ask).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from twistarena.bots import make_bot
from twistarena.bridge import ProgramBot, bridged_agent, run_bridged
from twistarena.clients.sdk import (
    Agent,
    AgentError,
    Backoff,
    MatchClient,
    MatchResult,
    practice,
)
from twistarena.wire import MATCH_OVER

from ..protocolbot import ProtocolBot, ProtocolBotError

#: The game every match plays: Twhist for three, about 65 actions.
GAME = ("twhist", 3)


@dataclass
class SeatRecord:
    """What one seat's agent heard."""

    match_id: str
    seat: int
    #: decision id -> (action id, Rewound heard before this acknowledgement)
    acks: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: (actions kept, lost actions, reason) of each Rewound, in order
    rewinds: list[tuple[int, int, str]] = field(default_factory=list)
    heard: MatchResult | None = None
    stored: MatchResult | None = None
    error: str = ""
    #: (status code, reason) of each stream that ended in an error
    failures: list[str] = field(default_factory=list)
    #: Acknowledged decisions the seat was asked again (their answers lost).
    asked_again: set[int] = field(default_factory=set)
    #: Played by a Play-protocol-only bot (its acknowledgements are not kept).
    protocol: bool = False
    #: Played by a program through the bridge (an ``exec:`` entrant), in the sandbox.
    program: bool = False


@dataclass
class SpectatorRecord:
    match_id: str
    heard: MatchResult | None = None
    rewinds: int = 0
    error: str = ""


@dataclass
class MatchRecord:
    match_id: str
    created: float
    ended: float = 0.0
    seats: list[SeatRecord] = field(default_factory=list)
    spectator: SpectatorRecord | None = None
    #: A hosted practice match: the seat a runner plays (-1: none).
    hosted_seat: int = -1


class _Tracer:
    """Notes each acknowledgement a seat is told of (the SDK calls it once each)."""

    def __init__(self, records: dict[int, SeatRecord]) -> None:
        self.records = records

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None:
        """A decision whose answer the seat was told was accepted, asked again: how
        a seat learns of the one loss no server can announce (docs/protocol.md,
        section 9: the server that acknowledged it lost the match first)."""
        if decision_id in agent.accepted:
            self.records[id(agent)].asked_again.add(decision_id)

    def answer_sent(self, agent: Agent, decision_id: int, t: float) -> None:
        """Not needed."""

    def accepted(self, agent: Agent, decision_id: int, t: float) -> None:
        record = self.records[id(agent)]
        record.acks[decision_id] = (agent.accepted.get(decision_id, -1), len(agent.rewinds))


def _bot(seed: int, think_s: float) -> Any:
    inner = make_bot("random", GAME[0], seed)

    async def act(observation: Any, legal_actions: Any) -> int:
        await asyncio.sleep(think_s)
        return inner(observation, legal_actions)

    return act


@dataclass
class Workload:
    """Creates matches at ``rate`` a second (at most ``concurrency`` in play) for
    ``duration`` seconds; ``spectate``: the share of matches watched."""

    servers: Callable[[], Sequence[str]]
    admin_token: str
    seed: int
    rate: float
    duration: float
    concurrency: int = 12
    spectate: float = 0.3
    think_s: float = 0.01
    #: The api token of a hosted agent ('' : no hosted matches), and the share of
    #: matches that are its hosted practice matches.
    hosted_token: str = ""
    hosted: float = 0.15
    #: The share of seats played by a Play-protocol-only bot.
    protocol: float = 0.2
    #: A program (``exec:`` entrant, e.g. "python3 DIR/bot.py") playing a share of
    #: the seats through the bridge, in ``sandbox`` ('' : none).
    exec_command: str = ""
    exec: float = 0.1
    sandbox: str | None = "bwrap"
    matches: list[MatchRecord] = field(default_factory=list)
    create_failures: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    def now(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def running(self) -> list[str]:
        return [m.match_id for m in self.matches if not m.ended]

    async def run(self) -> None:
        """Create matches until the duration is over; returns once they are started."""
        rng = random.Random(self.seed)
        slots = asyncio.Semaphore(self.concurrency)
        number = 0
        while self.now() < self.duration:
            await slots.acquire()
            if self.now() >= self.duration:
                slots.release()
                break
            number += 1
            watched, hosted = rng.random() < self.spectate, rng.random() < self.hosted
            task = asyncio.ensure_future(
                self._hosted(number) if hosted and self.hosted_token
                else self._match(number, watched, rng))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(lambda _task: slots.release())
            await asyncio.sleep(1.0 / self.rate)

    async def settle(self, timeout: float) -> bool:
        """Wait for every match in play to end; False if some did not in time."""
        if not self._tasks:
            return True
        _done, pending = await asyncio.wait(list(self._tasks), timeout=timeout)
        for task in pending:
            task.cancel()
        return not pending

    def _client(self, number: int) -> tuple[list[str], MatchClient]:
        """The servers in the order match ``number`` tries them, and a client of them."""
        servers = list(self.servers())
        first = number % len(servers)
        servers = servers[first:] + servers[:first]
        return servers, MatchClient(servers, admin_token=self.admin_token,
                                    backoff=Backoff(give_up_after=60.0))

    async def _hosted(self, number: int) -> None:
        """A hosted practice match: the hosted agent's seat is a runner's, the
        others house bots; followed until it is over (played, or its seat failed)."""
        servers, client = self._client(number)
        try:
            created = await practice(servers, GAME[0], GAME[1], api_token=self.hosted_token,
                                     hosted=True, decision_ms=10_000)
        except AgentError as exc:
            self.create_failures.append(f"{self.now():.2f}s: hosted: {exc}")
            return
        record = MatchRecord(created.match.match_id, self.now(), hosted_seat=created.seat)
        self.matches.append(record)
        while True:
            try:
                if (await client.get_match(record.match_id)).status in MATCH_OVER:
                    break
            except AgentError as exc:
                if exc.reason == "UNKNOWN_MATCH":  # lost whole with its creation
                    break
            await asyncio.sleep(0.5)
        record.ended = self.now()

    async def _match(self, number: int, watched: bool, rng: random.Random) -> None:
        servers, client = self._client(number)
        try:
            created = await client.create_match(
                *GAME, seed=self.seed * 100_000 + number, decision_ms=120_000,
                reconnect_grace_ms=120_000)
        except AgentError as exc:
            self.create_failures.append(f"{self.now():.2f}s: {exc}")
            return
        record = MatchRecord(created.match.match_id, self.now())
        self.matches.append(record)
        seats: dict[int, SeatRecord] = {}
        jobs = []
        for token in created.seat_tokens:
            seat = SeatRecord(record.match_id, token.seat)
            record.seats.append(seat)
            seed = self.seed * 1000 + number * 10 + token.seat
            draw = rng.random()
            if draw < self.protocol:
                seat.protocol = True
                jobs.append(_protocol_seat(servers, client, token.token, seed, seat))
                continue
            options: dict[str, Any] = dict(
                server=servers, match_id=record.match_id, token=token.token,
                backoff=Backoff(initial=0.05, maximum=1.0, give_up_after=120.0))
            if self.exec_command and draw < self.protocol + self.exec:
                seat.program = True
                program = ProgramBot(self.exec_command, sandbox=self.sandbox)
                agent = bridged_agent(program, **options)
                jobs.append(self._seat(agent, seat, program))
            else:
                agent = Agent(_bot(seed, self.think_s), **options)
                jobs.append(self._seat(agent, seat))
            seats[id(agent)] = seat
            agent.tracer = _Tracer(seats)
        if watched:
            record.spectator = SpectatorRecord(record.match_id)
            jobs.append(self._watch(client, record.spectator))
        await asyncio.gather(*jobs)
        record.ended = self.now()

    @staticmethod
    async def _seat(agent: Agent, record: SeatRecord, program: ProgramBot | None = None
                    ) -> None:
        try:
            record.heard = await (agent.run() if program is None
                                  else run_bridged(agent, program))
        except AgentError as exc:
            record.error = str(exc)
        finally:
            record.rewinds = [(r.actions, r.lost_actions, r.reason) for r in agent.rewinds]
            record.failures = [f"{code.name}/{reason}" for code, reason in agent.stream_failures]
        # What the SDK's queue and bot paths report: the outcome the store keeps.
        record.stored = await agent.stored_result()

    @staticmethod
    async def _watch(client: MatchClient, record: SpectatorRecord) -> None:
        try:
            async for msg in client.watch(record.match_id):
                kind = msg.WhichOneof("msg")
                if kind == "rewound":
                    record.rewinds += 1
                elif kind == "match_over":
                    record.heard = MatchResult.from_proto(msg.match_over.result)
        except AgentError as exc:
            record.error = str(exc)


#: How long a Play-protocol-only seat keeps joining again after failures.
PROTOCOL_GIVE_UP_S = 180.0
#: Status codes after which joining again cannot help (the match is gone or over,
#: the token wrong): the outcome is then read with GetMatch (docs/protocol.md, 9).
_FINAL_CODES = (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.PERMISSION_DENIED,
                grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNAUTHENTICATED,
                grpc.StatusCode.FAILED_PRECONDITION)


async def _protocol_seat(servers: Sequence[str], client: MatchClient, token: str, seed: int,
                         record: SeatRecord) -> None:
    """A seat played by ``ProtocolBot``, the Play protocol without the SDK: after a
    stream fails or an answer is refused (a rewind took its decision back) it
    joins again, on the next server, as any bot must; then asks the store for
    the outcome (how it learns of a void after the end it heard)."""
    channels: list[grpc.aio.Channel] = []

    def connect(address: str) -> grpc.aio.Channel:
        channels.append(grpc.aio.insecure_channel(address))
        return channels[-1]

    def unused(_key: Any, _t: float) -> None:
        """Not needed."""

    deadline = time.monotonic() + PROTOCOL_GIVE_UP_S
    try:
        for attempt in itertools.count():
            bot = ProtocolBot(connect(servers[attempt % len(servers)]), record.match_id, token,
                              seed + attempt, unused, unused, connect=connect, events=True)
            try:
                record.heard = MatchResult.from_proto((await bot.run()).result)
                break
            except (grpc.aio.AioRpcError, ProtocolBotError) as exc:
                code = exc.code() if isinstance(exc, grpc.aio.AioRpcError) else None
                record.failures.append(f"{code.name if code else 'PROTOCOL'}/{exc}"[:200])
                if code in _FINAL_CODES or time.monotonic() > deadline:
                    record.error = record.failures[-1]
                    break
                await asyncio.sleep(min(1.0, 0.05 * 2 ** min(attempt, 5)))
    finally:
        for channel in channels:
            await channel.close()
    with contextlib.suppress(AgentError):
        stored = await client.get_match(record.match_id)
        if stored.status in MATCH_OVER:
            record.stored = MatchResult.from_proto(stored.result)
