"""SDK agents play whole matches of every game and player count on the real server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from twistarena import engine
from twistarena.clients.sdk import Agent, AgentError, MatchClient, MatchResult, Rejection
from twistarena.clients.sdk.localbots import seat_agents

from .helpers import acknowledged_in_log, replay_problems, run

CASES = [(g, n) for g in engine.GAME_IDS
         for n in range(engine.game(g).min_players, engine.game(g).max_players + 1)]


async def _play_all(target: str) -> list[tuple[str, int, list[Agent], MatchResult, Any]]:
    client = MatchClient(target)

    async def one(i: int, game_id: str, players: int) -> Any:
        created = await client.create_match(game_id, players, seed=1000 + i,
                                            decision_ms=30_000)
        agents = seat_agents(target, created, ["heuristic", "random"], seed=i)
        results = await asyncio.gather(*(a.run() for a in agents))
        assert all(r == results[0] for r in results), "agents disagree on the result"
        replay = await client.get_replay(created.match.match_id)
        return game_id, players, agents, results[0], replay

    return list(await asyncio.gather(*(one(i, g, n) for i, (g, n) in enumerate(CASES))))


def test_every_game_and_player_count_over_grpc(server: Any) -> None:
    outcomes = run(_play_all(server.target))
    assert len(outcomes) == len(CASES)
    for game_id, players, agents, result, replay in outcomes:
        case = f"{game_id} x{players}"
        assert result.reason == "COMPLETED", case
        assert len(result.scores) == players and len(result.places) == players, case
        assert min(result.places) == 1 and result.winners, case
        assert sorted(a.seat for a in agents) == list(range(players)), case
        # The replay reproduces the recorded result exactly.
        assert replay_problems(replay) == [], case
        # Every acknowledged answer is in the log, where and as acknowledged.
        assert acknowledged_in_log(agents, replay) == [], case
        assert sum(len(a.accepted) for a in agents) == len(replay.actions), case
        for agent in agents:
            seqs = [e.seq for e in agent.events]
            assert seqs == list(range(len(seqs))), f"{case}: events not contiguous"
            assert agent.game_id == game_id and agent.reconnects == 0


class Stubborn:
    """Answers an illegal id first: the SDK must re-ask once with the rejection."""

    def __init__(self) -> None:
        self.rejections: list[Rejection] = []
        self.retried_with: list[Rejection | None] = []
        self.calls = 0

    def act(self, observation: Any, legal_actions: Any, rejection: Rejection | None = None) -> int:
        self.calls += 1
        if self.calls == 1:
            return 10_000
        if self.calls == 2:
            self.retried_with.append(rejection)
        return int(legal_actions[-1].id)

    def on_rejected(self, rejection: Rejection) -> None:
        self.rejections.append(rejection)


class AlwaysIllegal:
    """Never answers legally: after the retry the SDK plays the first legal action."""

    def __init__(self) -> None:
        self.calls = 0

    def act(self, observation: Any, legal_actions: Any) -> int:
        self.calls += 1
        return -5


async def _illegal(target: str) -> tuple[Any, ...]:
    client = MatchClient(target)
    created = await client.create_match("twhist", 3, seed=5, decision_ms=30_000)
    agents = seat_agents(target, created, ["random"], seed=3)
    stubborn, hopeless = Stubborn(), AlwaysIllegal()
    tokens = sorted(created.seat_tokens, key=lambda t: t.seat)

    async def async_bot(observation: Any, legal_actions: Any) -> int:
        await asyncio.sleep(0)
        return int(legal_actions[0].id)

    agents[0] = Agent(stubborn, server=target, match_id=created.match.match_id,
                      token=tokens[0].token)
    agents[1] = Agent(hopeless, server=target, match_id=created.match.match_id,
                      token=tokens[1].token)
    agents[2] = Agent(async_bot, server=target, match_id=created.match.match_id,
                      token=tokens[2].token)
    results = await asyncio.gather(*(a.run() for a in agents))
    return stubborn, hopeless, agents, results


def test_illegal_answers_are_retried_then_fall_back(server: Any) -> None:
    stubborn, hopeless, agents, results = run(_illegal(server.target))
    assert results[0].reason == "COMPLETED"
    assert stubborn.rejections and stubborn.rejections[0].reason == "ILLEGAL_ACTION"
    assert stubborn.rejections[0].may_retry
    assert stubborn.retried_with and stubborn.retried_with[0] is not None
    # The hopeless bot was asked twice per decision, then the first legal action went in.
    assert hopeless.calls == 2 * len(agents[1].accepted)
    assert all(r.reason == "ILLEGAL_ACTION" for r in agents[1].rejections)


def test_bad_token_and_unknown_match_fail_fast(server: Any) -> None:
    async def attempt(match_id: str | None, token: str) -> AgentError:
        client = MatchClient(server.target)
        if match_id is None:
            created = await client.create_match("twisted", 2)
            match_id = created.match.match_id
        agent = Agent(lambda o, legal: legal[0].id, server=server.target, match_id=match_id,
                      token=token)
        with pytest.raises(AgentError) as info:
            await asyncio.wait_for(agent.run(), 10)
        return info.value

    bad = run(attempt(None, "not-a-token"))
    assert bad.reason == "BAD_TOKEN" and "UNAUTHENTICATED" in str(bad)
    unknown = run(attempt("no-such-match", "whatever"))
    assert unknown.reason == "UNKNOWN_MATCH" and "NOT_FOUND" in str(unknown)


async def _odd_bots(target: str) -> tuple[Any, ...]:
    client = MatchClient(target)
    created = await client.create_match("twhist", 3, seed=9, decision_ms=30_000)
    tokens = sorted(created.seat_tokens, key=lambda t: t.seat)
    calls = {"raising": 0, "awaitable": 0}

    def raising(observation: Any, legal_actions: Any) -> int:
        calls["raising"] += 1
        if calls["raising"] % 2:
            raise RuntimeError("a bot bug")
        return int(legal_actions[-1].id)

    async def later(legal_actions: Any) -> int:
        await asyncio.sleep(0)
        return int(legal_actions[0].id)

    def awaitable(observation: Any, legal_actions: Any) -> Any:
        calls["awaitable"] += 1
        assert observation["game"] == "twhist"
        assert all(isinstance(dict(a.payload), dict) for a in legal_actions)
        return later(legal_actions)

    mid = created.match.match_id
    agents = [Agent(raising, server=target, match_id=mid, token=tokens[0].token),
              Agent(awaitable, server=target, match_id=mid, token=tokens[1].token,
                    lazy_observations=True),
              Agent(lambda o, legal: legal[0], server=target, match_id=mid,
                    token=tokens[2].token, no_events=True)]
    results = await asyncio.gather(*(a.run() for a in agents))
    replay = await client.get_replay(mid)
    return agents, results, replay, calls


def test_sync_bots_that_raise_or_return_awaitables(server: Any) -> None:
    agents, results, replay, calls = run(_odd_bots(server.target))
    assert all(r.reason == "COMPLETED" for r in results)
    assert calls["raising"] == agents[0].decisions > 0
    assert calls["awaitable"] == agents[1].decisions > 0
    assert acknowledged_in_log(agents, replay) == []
    assert sum(len(a.accepted) for a in agents) == len(replay.actions)
    assert not any(a.rejections for a in agents)
