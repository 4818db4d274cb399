"""A node that refuses as scripted: a grpc.aio server on loopback answering one
method, first with the refusals it is given (a status and the trailers a real
node sends: ``twistarena-reason``, ``twistarena-owner``,
``twistarena-retry-after-ms``), then with ``serve``. Clients' retry and
failover paths are tested against it, with real channels and real calls."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import grpc.aio
from google.protobuf.message_factory import GetMessageClass
from twistarena.link import OWNER_KEY, REASON_KEY, RETRY_AFTER_KEY


@dataclass(frozen=True)
class Refusal:
    """One refusal: its status and trailers."""

    code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    reason: str = ""
    owner: str = ""
    retry_after_ms: int = 0

    def trailers(self) -> tuple[tuple[str, str], ...]:
        pairs = [(REASON_KEY, self.reason), (OWNER_KEY, self.owner),
                 (RETRY_AFTER_KEY, str(self.retry_after_ms) if self.retry_after_ms else "")]
        return tuple((key, value) for key, value in pairs if value)


#: ``serve(request or request iterator, context)``: what the node does once its
#: refusals are spent (write messages for a streaming method, return a response).
Serve = Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]


class ScriptedNode:
    """One method of the contract (``module``'s ``service``/``method``, e.g.
    ``play_pb2, "Watch", "Watch"``); ``calls`` counts the calls it got,
    ``served`` those it served."""

    def __init__(self, module: Any, service: str, method: str, serve: Serve,
                 refusals: list[Refusal] | None = None) -> None:
        self.descriptor = module.DESCRIPTOR.services_by_name[service].methods_by_name[method]
        self.serve = serve
        self.refusals = list(refusals or [])
        self.calls = 0
        self.served = 0
        self.address = ""
        self._server: grpc.aio.Server | None = None

    async def _handle(self, request: Any, context: grpc.aio.ServicerContext) -> Any:
        self.calls += 1
        if self.refusals:
            refusal = self.refusals.pop(0)
            await context.abort(refusal.code, "refused as scripted",
                                trailing_metadata=refusal.trailers())
        self.served += 1
        return await self.serve(request, context)

    async def start(self) -> str:
        method = self.descriptor
        kind = "_".join("stream" if streaming else "unary" for streaming in
                        (method.client_streaming, method.server_streaming))
        make = getattr(grpc, f"{kind}_rpc_method_handler")
        handler = make(self._handle,
                       request_deserializer=GetMessageClass(method.input_type).FromString,
                       response_serializer=GetMessageClass(method.output_type).SerializeToString)
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
            method.containing_service.full_name, {method.name: handler}),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        self._server = server
        self.address = f"127.0.0.1:{port}"
        return self.address

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(None)


@contextlib.asynccontextmanager
async def scripted_nodes(*nodes: ScriptedNode) -> AsyncIterator[list[str]]:
    """Start ``nodes`` on loopback; their addresses, in order; stopped on exit."""
    try:
        yield [await node.start() for node in nodes]
    finally:
        for node in nodes:
            await node.stop()
