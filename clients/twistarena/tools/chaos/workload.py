"""The campaign's workload: matches created at a rate over the deployment's
nodes, every seat played by a real SDK agent (events, resume, failover), a
share of the matches followed by a spectator; and what each of them heard.

A seat's record is the checker's evidence: each acknowledgement (decision id,
action, and how many Rewound the seat had heard by then), each Rewound, the
end it heard, and the outcome the store gave it afterwards (``stored_result``,
as the SDK's queue and bot paths ask).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from twistarena.bots import make_bot
from twistarena.clients.sdk import Agent, AgentError, Backoff, MatchClient, MatchResult

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


class _Tracer:
    """Notes each acknowledgement a seat is told of (the SDK calls it once each)."""

    def __init__(self, records: dict[int, SeatRecord]) -> None:
        self.records = records

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None:
        """Not needed."""

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
            task = asyncio.ensure_future(self._match(number, rng.random() < self.spectate))
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

    async def _match(self, number: int, watched: bool) -> None:
        servers = list(self.servers())
        first = number % len(servers)
        servers = servers[first:] + servers[:first]
        client = MatchClient(servers, admin_token=self.admin_token,
                             backoff=Backoff(give_up_after=60.0))
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
        agents = []
        for token in created.seat_tokens:
            agent = Agent(_bot(self.seed * 1000 + number * 10 + token.seat, self.think_s),
                          server=servers, match_id=record.match_id, token=token.token,
                          backoff=Backoff(initial=0.05, maximum=1.0, give_up_after=120.0))
            seat = SeatRecord(record.match_id, token.seat)
            seats[id(agent)] = seat
            agents.append(agent)
            record.seats.append(seat)
        tracer = _Tracer(seats)
        for agent in agents:
            agent.tracer = tracer
        jobs = [self._seat(agent, seats[id(agent)]) for agent in agents]
        if watched:
            record.spectator = SpectatorRecord(record.match_id)
            jobs.append(self._watch(client, record.spectator))
        await asyncio.gather(*jobs)
        record.ended = self.now()

    @staticmethod
    async def _seat(agent: Agent, record: SeatRecord) -> None:
        try:
            record.heard = await agent.run()
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
