"""A dropped stream within the reconnect grace: the SDK resumes, nothing is lost."""

from __future__ import annotations

import asyncio
from typing import Any

from twistarena.bots import make_bot
from twistarena.clients.sdk import Agent, ArenaClient
from twistarena.clients.sdk.hosting import seat_agents
from twistarena.v1 import play_pb2

from .helpers import acknowledged_in_log, replay_problems, run


async def _drop_mid_decision(target: str) -> dict[str, Any]:
    client = ArenaClient(target)
    created = await client.create_match("tricky_twist", 4, seed=77, decision_ms=30_000,
                                        reconnect_grace_ms=20_000)
    match_id = created.match.match_id
    agents = seat_agents(target, created, ["random"], seed=9)
    token = sorted(created.seat_tokens, key=lambda t: t.seat)[0].token
    seen: dict[str, Any] = {"dropped_at": None, "after": [], "calls": 0}
    inner = make_bot("random", "tricky_twist", 1)
    holder: list[Agent] = []

    async def bot(observation: Any, legal_actions: Any) -> int:
        seen["calls"] += 1
        agent = holder[0]
        if seen["calls"] == 12 and seen["dropped_at"] is None:
            # Drop the connection while this decision is open, wait for the resume.
            seen["dropped_at"] = max(agent._pending)
            agent.disconnect()
            while agent.reconnects == 0:
                await asyncio.sleep(0.01)
        return inner(observation, legal_actions)

    def record(msg: play_pb2.ServerMessage) -> None:
        if seen["dropped_at"] is not None and msg.WhichOneof("msg") == "decision" \
                and not seen["after"]:
            seen["after"].append(msg.decision.decision_id)

    agents[0] = Agent(bot, server=target, match_id=match_id, token=token, on_message=record)
    holder.append(agents[0])
    results = await asyncio.gather(*(a.run() for a in agents))
    replay = await client.get_replay(match_id)
    return {"seen": seen, "agents": agents, "results": results, "replay": replay}


def test_disconnect_and_resume_within_grace(server: Any) -> None:
    out = run(_drop_mid_decision(server.target))
    seen, agents, replay = out["seen"], out["agents"], out["replay"]
    assert seen["dropped_at"] is not None
    # After the resume the server asks the same open decision again.
    assert seen["after"] == [seen["dropped_at"]]
    assert agents[0].reconnects == 1
    assert seen["dropped_at"] in agents[0].accepted
    assert out["results"][0].reason == "COMPLETED"
    # Events resumed from the next unseen seq: no gap, no duplicate.
    seqs = [e.seq for e in agents[0].events]
    assert seqs == list(range(len(seqs)))
    assert seqs == [e.seq for e in agents[1].events]
    assert acknowledged_in_log(agents, replay) == []
    assert replay_problems(replay) == []
    assert sum(len(a.accepted) for a in agents) == len(replay.actions)
