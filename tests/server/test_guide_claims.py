"""What docs/protocol.md says about reflection and resume_from_seq holds on a real server."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from twistarena.clients.sdk import MatchClient
from twistarena.v1 import play_pb2, play_pb2_grpc

from tests.clients.helpers import run

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def test_the_grpcurl_list_example_shows_every_service(server: Any) -> None:
    async def services() -> list[str]:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            call = stub.ServerReflectionInfo(iter([
                reflection_pb2.ServerReflectionRequest(list_services="")]))
            async for reply in call:
                return sorted(s.name for s in reply.list_services_response.service)
        return []

    block = re.search(r"\$ grpcurl -plaintext 127\.0\.0\.1:50051 list\n(.*?)\n\n",
                      GUIDE.read_text(), re.DOTALL)
    assert block is not None
    assert block.group(1).split("\n") == run(services(), 30)


def test_resume_from_seq_past_the_end_sends_no_backlog(server: Any) -> None:
    """The guide: a resume_from_seq past the end of the log is accepted; none of the
    log's events is sent, new ones follow as they happen, and so do decisions."""
    async def scenario() -> tuple[int, list[int]]:
        created = await MatchClient(server.target).create_match("twisted", 2, seed=8,
                                                                 decision_ms=30_000)
        mid = created.match.match_id
        answered = 0
        seqs: list[int] = []
        async with grpc.aio.insecure_channel(server.target) as channel:
            calls = []
            for seat_token in created.seat_tokens:
                call = play_pb2_grpc.PlayStub(channel).Play()
                await call.write(play_pb2.AgentMessage(join=play_pb2.Join(
                    match_id=mid, seat_token=seat_token.token, resume_from_seq=10**6)))
                calls.append(call)

            async def seat(call: Any) -> None:
                nonlocal answered
                while answered < 6:
                    msg = await call.read()
                    kind = msg.WhichOneof("msg")
                    if kind == "event":
                        seqs.append(msg.event.seq)
                    elif kind == "decision":
                        await call.write(play_pb2.AgentMessage(answer=play_pb2.Answer(
                            decision_id=msg.decision.decision_id,
                            action_id=msg.decision.legal_actions[0].id)))
                    elif kind == "accepted":
                        answered += 1

            await asyncio.wait([asyncio.ensure_future(seat(c)) for c in calls],
                               return_when=asyncio.FIRST_COMPLETED)
            for call in calls:
                call.cancel()
        return answered, seqs

    answered, seqs = run(scenario(), 60)
    assert answered >= 6 and seqs
    assert 0 not in seqs  # the deal, already in the log at the Join, is not re-sent
    assert max(seqs) < 10**6
