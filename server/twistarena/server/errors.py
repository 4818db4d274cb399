"""The one place where an exception becomes a gRPC status.

Every call goes through ``StatusInterceptor``: a request that does not parse
is ``INVALID_ARGUMENT`` (never the runtime's ``UNKNOWN`` naming a protobuf
class); an exception a handler lets out becomes a status chosen here, with a
message written for the client. Internal details (exception classes, store
addresses, stack traces) go to the log only.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from grpc import aio
from twistarena.storage import StoreError

from . import logs
from .match.creation import CreationError
from .rpc import fail

log = logs.get("twistarena.errors")


class Undecodable:
    """Stands for a request message that did not parse (see ``is_undecodable``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<undecodable message>"


UNDECODABLE = Undecodable()


def is_undecodable(message: object) -> bool:
    """The request could not be decoded (the interceptor's stand-in for a message)."""
    return message is UNDECODABLE


def tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """``deserializer``, answering ``UNDECODABLE`` instead of raising."""
    if deserializer is None:
        return None
    parse = deserializer

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception:
            return UNDECODABLE

    return deserialize


async def refuse_undecodable(context: aio.ServicerContext[Any, Any]) -> None:
    """End the call with INVALID_ARGUMENT for a request that is not a valid message."""
    await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
               "the request is not a valid message of this method's type")


def status_for(exc: Exception, method: str) -> tuple[grpc.StatusCode, str, str]:
    """The status code, reason and client-facing message that stand for ``exc``
    (logged here; the message never names the exception or an address)."""
    if isinstance(exc, CreationError):
        return grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", str(exc)
    if isinstance(exc, StoreError | OSError):
        log.warning("store_unavailable", method=method, error=repr(exc))
        return (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE",
                "the server cannot reach its store right now; retry")
    log.error("call_failed", method=method, error=repr(exc))
    return (grpc.StatusCode.INTERNAL, "INTERNAL_ERROR",
            "the server failed on this call (it is logged); retry or report it")


async def status_of(exc: Exception, method: str, context: aio.ServicerContext[Any, Any]) -> None:
    """End the call with the status that stands for ``exc``: unless the call has
    ended already (its client was killed or cut off while the handler wrote to it,
    e.g. a referee's stream): then nothing failed here and nobody is left to tell."""
    if context.cancelled() or context.done():
        log.info("call_abandoned", method=method, error=repr(exc))
        return
    await fail(context, *status_for(exc, method))


Behavior = Callable[..., Any]


def _guard(behavior: Behavior, method: str, one_request: bool) -> Behavior:
    """``behavior`` with its escaping exceptions mapped to statuses; a handler
    taking ``one_request`` also refuses an undecodable one (a handler reading a
    request stream checks each message itself)."""

    async def check(request: Any, context: aio.ServicerContext[Any, Any]) -> None:
        if one_request and request is UNDECODABLE:
            await refuse_undecodable(context)

    if inspect.isasyncgenfunction(behavior):
        async def stream(request: Any, context: aio.ServicerContext[Any, Any]
                         ) -> AsyncIterator[Any]:
            await check(request, context)
            try:
                async for item in behavior(request, context):
                    yield item
            except (aio.AbortError, asyncio.CancelledError):
                raise
            except Exception as exc:
                await status_of(exc, method, context)
        return stream

    async def call(request: Any, context: aio.ServicerContext[Any, Any]) -> Any:
        await check(request, context)
        try:
            return await behavior(request, context)
        except (aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as exc:
            await status_of(exc, method, context)
    return call


def guarded(handler: grpc.RpcMethodHandler[Any, Any], method: str
            ) -> grpc.RpcMethodHandler[Any, Any]:
    """``handler`` with a tolerant deserializer and the status mapping around it."""
    fields: dict[str, Any] = {"request_deserializer": tolerant(handler.request_deserializer)}
    for name in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
        behavior = getattr(handler, name)
        if behavior is not None:
            fields[name] = _guard(behavior, method, one_request=name.startswith("unary"))
    return handler._replace(**fields)  # type: ignore[attr-defined, no-any-return]


class StatusInterceptor(aio.ServerInterceptor):
    """Puts ``guarded`` around every method handler of the server."""

    def __init__(self) -> None:
        #: (method, id of its handler) -> (the handler, kept alive, and its wrapper).
        self._cache: dict[tuple[str, int], tuple[Any, grpc.RpcMethodHandler[Any, Any]]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails],
                               Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        """Wrap each handler so that a request that does not decode gets a clear
        status, not a crash."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        key = (method, id(handler))
        cached = self._cache.get(key)
        if cached is None:
            # Handlers live as long as the server: one wrapper each, made once.
            cached = (handler, guarded(handler, method))
            self._cache[key] = cached
        return cached[1]
