"""What every servicer does with a call: refuse it with a status and a
machine-readable reason, check the admin token, know the caller's host."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar
from urllib.parse import unquote

import grpc
from grpc import aio
from twistarena.storage import AgentRecord
from twistarena.wire import REASON_KEY, RETRY_AFTER_KEY, pages

from . import auth, front, metrics
from .config import ServerConfig, is_loopback
from .league.agents import Agents

#: Longest status message: well under a default client's 16 KiB metadata limit.
MAX_DETAILS = 400
#: Longest piece of a client's input quoted back in a status message.
MAX_ECHO = 40
T = TypeVar("T")


def shown(value: str) -> str:
    """A client's input as a status message quotes it: a short prefix, repr'd."""
    if len(value) <= MAX_ECHO:
        return repr(value)
    return repr(value[:MAX_ECHO]) + f"... ({len(value)} characters)"


async def fail(context: aio.ServicerContext[Any, Any], code: grpc.StatusCode, reason: str,
               details: str, retry_after_ms: int = 0) -> NoReturn:
    """End the call with ``code``, ``details`` and the machine-readable reason
    (and a retry hint, ``retry_after_ms``, when the caller should wait that long)."""
    metrics.ERRORS.labels(reason.lower() or code.name.lower()).inc()
    if len(details) > MAX_DETAILS:
        details = details[:MAX_DETAILS - 3] + "..."
    trailers: tuple[tuple[str, str], ...] = ((REASON_KEY, reason),)
    if retry_after_ms > 0:
        trailers += ((RETRY_AFTER_KEY, str(retry_after_ms)),)
    await context.abort(code, details, trailing_metadata=trailers)
    raise AssertionError("unreachable")  # pragma: no cover


async def page_token(context: aio.ServicerContext[Any, Any], parsed: T | None) -> T:
    """A request's page token as ``pages`` read it, or INVALID_ARGUMENT
    (``MALFORMED_MESSAGE``, ``pages.BAD_PAGE_TOKEN``) for one it could not read."""
    if parsed is None:
        await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                   pages.BAD_PAGE_TOKEN)
    return parsed


async def require_admin(context: aio.ServicerContext[Any, Any], config: ServerConfig) -> None:
    """Admin calls need the admin token. A server embedded without one (tests, the
    demo's) takes them from its own machine only: a caller from another machine
    never gets admin power without the token (``serve`` always has one)."""
    expected = config.admin_token
    if not expected:
        if not is_loopback(peer_host(context)):
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_ADMIN",
                       "this server has no admin token: admin calls only from its own machine")
        return
    token = auth.bearer(context.invocation_metadata())
    if not token:
        await fail(context, grpc.StatusCode.UNAUTHENTICATED, "PERMISSION_DENIED_ADMIN",
                   "this call needs the admin token: metadata 'authorization: Bearer <token>'")
    if not auth.same_secret(token, expected):
        await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_ADMIN",
                   "the admin token is wrong")


async def api_agent(context: aio.ServicerContext[Any, Any],
                    by_token: Callable[[str], Awaitable[str | None]], call: str) -> str:
    """The agent whose api token the call carries; UNAUTHENTICATED (BAD_TOKEN) without one."""
    token = auth.bearer(context.invocation_metadata())
    if not token:
        await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                   f"{call} needs an api token: metadata 'authorization: Bearer <token>' "
                   "(Matchmaking.RegisterAgent gives one)")
    agent_id = await by_token(token)
    if agent_id is None:
        await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                   "the api token belongs to no registered agent")
    return agent_id


async def known_agent(context: aio.ServicerContext[Any, Any], agents: Agents,
                      agent_id: str) -> AgentRecord:
    """The agent's account; NOT_FOUND (UNKNOWN_AGENT) when there is none."""
    record = await agents.get(agent_id) if agent_id else None
    if record is None:
        await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_AGENT",
                   f"no agent with id {shown(agent_id)}")
    return record


def is_admin(context: aio.ServicerContext[Any, Any], config: ServerConfig) -> bool:
    """The caller presented the server's admin token (never true without one)."""
    expected = config.admin_token
    if not expected:
        return False
    token = auth.bearer(context.invocation_metadata())
    return bool(token) and auth.same_secret(token, expected)


def peer_host(context: aio.ServicerContext[Any, Any]) -> str:
    """The client's address without its port ('ipv4:127.0.0.1:5000' -> '127.0.0.1')."""
    peer = context.peer() or ""
    kind, _, rest = peer.partition(":")
    if kind == "unix":
        return "localhost"
    if kind == "ipv6":
        # gRPC writes it percent-encoded: ipv6:%5B::1%5D:5000.
        return unquote(rest.rsplit(":", 1)[0]).strip("[]")
    host, _, port = rest.rpartition(":")
    if host == "127.0.0.1" and port.isdigit():
        # A connection the front relays: the client is the front's client.
        return front.real_peer(int(port)) or host
    return host
