"""Checks shared by the client and system tests."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from twistarena.clients.cli.replay import verify
from twistarena.clients.sdk import Agent, MatchClient, MatchResult
from twistarena.clients.sdk.localbots import seat_agents
from twistarena.server.match.decisions import DECISION_ID_STRIDE
from twistarena.v1 import match_pb2


def run(coro: Any, timeout: float = 150.0) -> Any:
    """Run one test coroutine with an overall time bound."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


class Acknowledgements:
    """An agent tracer: when (loop time) and where (server address) each match's
    agents were told that an answer of theirs was accepted. The SDK tells it of
    each acceptance once, whichever message carried it: an AnswerAccepted of
    its own, or, on a batched stream, the next DecisionRequest or SeatBatch."""

    def __init__(self) -> None:
        #: match id -> (loop time, server address) of each acceptance
        self.at: dict[str, list[tuple[float, str]]] = {}

    def decision_received(self, agent: Agent, decision_id: int, t: float) -> None:
        """Not needed here."""

    def answer_sent(self, agent: Agent, decision_id: int, t: float) -> None:
        """Not needed here."""

    def accepted(self, agent: Agent, decision_id: int, t: float) -> None:
        now = asyncio.get_running_loop().time()
        self.at.setdefault(agent.match_id, []).append((now, agent.address))

    def count(self, match_id: str) -> int:
        return len(self.at.get(match_id, ()))


def acknowledged_in_log(agents: Sequence[Agent], replay: match_pb2.Replay) -> list[str]:
    """Every AnswerAccepted an agent saw must be in the log: same seat, action, position.

    A decision opened when the log had ``opened_at`` entries; its action is the
    seat's first entry at or after that position, and it was not a timeout.
    """
    log = [(a.seat, a.action_id, a.timeout) for a in replay.actions]
    problems = []
    for agent in agents:
        for decision_id, action_id in agent.accepted.items():
            opened_at, seat = divmod(decision_id - 1, DECISION_ID_STRIDE)
            if seat != agent.seat:
                problems.append(f"decision {decision_id} is not seat {agent.seat}'s")
                continue
            entry = next(((i, e) for i, e in enumerate(log[opened_at:], opened_at)
                          if e[0] == seat), None)
            if entry is None:
                problems.append(f"seat {seat}: accepted decision {decision_id} "
                                f"(action {action_id}) is missing from the log")
            elif entry[1][1] != action_id or entry[1][2]:
                problems.append(f"seat {seat}: decision {decision_id} accepted action "
                                f"{action_id}, log position {entry[0]} has {entry[1]}")
    return problems


def replay_problems(replay: match_pb2.Replay) -> list[str]:
    return verify(replay).problems


async def played_out(target: str, seed: int) -> tuple[str, str, MatchResult]:
    """A two-seat Twisted match played to its end by random bots on ``target``: its
    id, seat 0's token, and the result."""
    created = await MatchClient(target).create_match("twisted", 2, seed=seed,
                                                     decision_ms=30_000)
    agents = seat_agents(target, created, ["random"], seed=seed)
    results = await asyncio.gather(*(a.run() for a in agents))
    return created.match.match_id, agents[0].token, results[0]
