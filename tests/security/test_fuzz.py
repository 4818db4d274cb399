"""Hypothesis fuzzes the request bytes of every RPC (random bytes, and valid
requests with bytes flipped, cut or appended): no call ends UNKNOWN or
INTERNAL, the server stays up, and a match played meanwhile is unharmed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.security.hostile import Rpc, canary_rate, every_rpc, limited_server

RPCS = every_rpc()
BAD = (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL)


def _valid(rpc: Rpc) -> bytes:
    """A plausible request of the method's type (fields that look real)."""
    msg = rpc.input_type()
    for name, value in (("match_id", "0123456789abcdef"), ("game_id", "twisted"),
                        ("num_players", 2), ("tournament_id", "abc"), ("agent_id", "x"),
                        ("name", "fuzz"), ("page_size", 3)):
        if name in msg.DESCRIPTOR.fields_by_name:
            setattr(msg, name, value)
    if "join" in msg.DESCRIPTOR.fields_by_name:
        msg.join.match_id = "0123456789abcdef"
        msg.join.seat_token = "st_x"
    return bytes(msg.SerializeToString())


@st.composite
def request_bytes(draw: Any, rpc: Rpc) -> bytes:
    if draw(st.booleans()):
        return bytes(draw(st.binary(max_size=300)))
    body = bytearray(_valid(rpc))
    for _ in range(draw(st.integers(0, 4))):
        if body and draw(st.booleans()):
            i = draw(st.integers(0, len(body) - 1))
            body[i] = draw(st.integers(0, 255))
        else:
            body += draw(st.binary(min_size=1, max_size=8))
    return bytes(body[:draw(st.integers(0, len(body)))] if draw(st.booleans()) else body)


def _call(ch: grpc.Channel, rpc: Rpc, body: bytes) -> grpc.StatusCode:
    d = rpc.descriptor
    kw: dict[str, Any] = {"request_serializer": None, "response_deserializer": None}
    try:
        if d.client_streaming and d.server_streaming:
            call = ch.stream_stream(rpc.path, **kw)(iter([body]), timeout=3)
            next(iter(call), None)
            call.cancel()
        elif d.server_streaming:
            call = ch.unary_stream(rpc.path, **kw)(body, timeout=3)
            next(iter(call), None)
            call.cancel()
        else:
            ch.unary_unary(rpc.path, **kw)(body, timeout=3)
    except grpc.RpcError as err:
        return err.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


@pytest.fixture(scope="module")
def fuzzed(valkey: Any) -> Any:
    with limited_server(valkey, creates_per_minute=0, live_per_client=0,
                        joins_per_minute_per_peer=0) as srv:
        rates: list[float] = []
        stop = threading.Event()

        def canary() -> None:
            while not stop.is_set():
                rates.append(asyncio.run(canary_rate(srv.target, 0.5)))

        thread = threading.Thread(target=canary, daemon=True)
        thread.start()
        with grpc.insecure_channel(srv.target) as ch:
            yield srv, ch
        stop.set()
        thread.join(60)
        assert rates and min(rates) > 0, "the parallel match stopped while the server was fuzzed"


@pytest.mark.parametrize("rpc", RPCS, ids=[r.path.rsplit(".", 1)[1] for r in RPCS])
def test_fuzzed_requests_get_a_clear_status(fuzzed: Any, rpc: Rpc) -> None:
    _srv, ch = fuzzed

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(body=request_bytes(rpc))
    def one(body: bytes) -> None:
        code = _call(ch, rpc, body)
        assert code not in BAD, (rpc.path, body, code)

    one()
    health = health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.SERVING
