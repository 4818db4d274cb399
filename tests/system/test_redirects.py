"""After a node is killed, its survivors never redirect a client to it.

Once the dead node has missed two lease renewals, a NOT_OWNER refusal either
names a live node or carries no owner and says when to retry
(``twistarena-retry-after-ms``), until a survivor takes the match over and
seats the client.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import redis
from twistarena.clients.sdk import MatchClient, practice
from twistarena.v1 import play_pb2, play_pb2_grpc
from twistarena.wire import OWNER_KEY, REASON_KEY, RETRY_AFTER_KEY

from tests.clients.helpers import run
from tests.support.nodes import owners, start_nodes
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until

LEASE_MS = 2000
BEAT_MS = LEASE_MS // 4


async def _join(address: str, match_id: str, token: str) -> tuple[str, dict[str, str]]:
    """("joined", {}) or ("refused: DETAILS", trailers) for one Join at ``address``."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = play_pb2_grpc.PlayStub(channel).Play()
        try:
            await call.write(play_pb2.AgentMessage(join=play_pb2.Join(
                match_id=match_id, seat_token=token, no_events=True)))
            reply = await asyncio.wait_for(call.read(), 10)
            call.cancel()
            if reply is not grpc.aio.EOF and reply.WhichOneof("msg") == "joined":
                return "joined", {}
            await call.wait_for_connection()
        except grpc.aio.AioRpcError as error:
            trailers = {k: v for k, v in (error.trailing_metadata() or ())
                        if isinstance(v, str)}
            return f"refused: {error.details()}", trailers
        return "ended", {}


def test_a_dead_owner_is_never_named_once_it_missed_its_renewals(store: ValkeyProcess) -> None:
    nodes = start_nodes(store.url, 2, lease_ms=LEASE_MS)
    client = redis.Redis.from_url(store.url)
    try:
        async def scenario() -> tuple[list[tuple[str, dict[str, str]]], str]:
            created = await MatchClient(nodes[0].address).create_match(
                "twisted", 2, seed=3, decision_ms=60_000)
            mid = created.match.match_id
            # A match placed on the other node is only named "next" in its lease
            # until that node takes it from its inbox and claims it.
            owner_id = await wait_until(lambda: owners(client, [mid])[mid].get("node"),
                                        "a node claimed the new match", timeout=10)
            dead = next(n for n in nodes if n.node_id == owner_id)
            survivor = next(n for n in nodes if n is not dead)
            dead.kill()
            # Wait (on the store) until the dead node's lease has gone two renewals
            # without being renewed.
            def lapsing() -> bool:
                seconds, micros = client.time()
                now_ms = seconds * 1000 + micros // 1000
                until = int(owners(client, [mid])[mid]["until"])
                return until - now_ms <= LEASE_MS - 2 * BEAT_MS

            await wait_until(lapsing, "the dead node's lease went two renewals unrenewed",
                             timeout=10, interval=0.02)
            deadline = time.monotonic() + 10
            seen = []
            token = created.seat_tokens[0].token
            while time.monotonic() < deadline:
                outcome, trailers = await _join(survivor.address, mid, token)
                seen.append((outcome, trailers))
                if outcome == "joined":
                    return seen, dead.address
                wait_ms = int(trailers.get(RETRY_AFTER_KEY, "50"))
                await asyncio.sleep(min(wait_ms, 200) / 1000)
            raise AssertionError(f"the survivor never took the match over: {seen}")

        seen, dead_address = run(scenario(), 60)
    finally:
        for node in nodes:
            node.cleanup()
        client.close()
    assert seen[-1][0] == "joined"
    for outcome, trailers in seen[:-1]:
        assert trailers.get(REASON_KEY) == "NOT_OWNER", (outcome, trailers)
        named = trailers.get(OWNER_KEY)
        assert named != dead_address, (outcome, trailers)
        if named is None:
            assert "being taken over, retry after" in outcome, outcome
            assert int(trailers[RETRY_AFTER_KEY]) > 0


def test_practice_names_the_node_that_runs_the_match(store: ValkeyProcess) -> None:
    """Practice on one node may place the match on another: server_address names that
    one, and the first Join there is accepted (no redirect)."""
    # Practice matches from one address until two land elsewhere: the practice
    # and creation quotas are not what this test is about.
    nodes = start_nodes(store.url, 2, lease_ms=LEASE_MS,
                        extra=["--practice-per-minute", "0", "--creates-per-minute", "0"])
    client = redis.Redis.from_url(store.url)
    try:
        async def scenario() -> tuple[int, int]:
            placed_elsewhere = joined_first = 0
            # A node learns of its peers from their heartbeats: until the first
            # node has heard of the second, it places everything on itself.
            deadline = time.monotonic() + 30
            seed = 0
            while time.monotonic() < deadline:
                seed += 1
                created = await practice(nodes[0].address, "twisted", 2, strength="random",
                                         seed=seed, decision_ms=60_000)
                mid = created.match.match_id
                owner = owners(client, [mid])[mid]
                node = owner.get("node") or owner.get("next")
                runner = next(n for n in nodes if n.node_id == node)
                assert created.server_address == runner.address, (owner, created)
                if runner is not nodes[0]:
                    placed_elsewhere += 1
                    outcome, trailers = await _join(created.server_address, mid,
                                                    created.seat_token)
                    assert outcome == "joined", (outcome, trailers)
                    joined_first += 1
                if placed_elsewhere >= 2:
                    break
                await asyncio.sleep(0.05)
            return placed_elsewhere, joined_first

        placed_elsewhere, joined_first = run(scenario(), 60)
    finally:
        for node in nodes:
            node.cleanup()
        client.close()
    assert placed_elsewhere >= 1 and joined_first == placed_elsewhere
