"""Routing for the servicers: a call for a match this node does not run.

A node that does not run a match answers Play/Watch with UNAVAILABLE, reason
NOT_OWNER and trailing metadata ``twistarena-owner: HOST:PORT`` when it knows
where the match is (or will be); if the match is unowned and this node is its
chosen owner, it claims it on the spot (``Cluster.locate``). A node cut from
its store refuses such calls at once (``refuse_store_down``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, NoReturn

import grpc
from grpc import aio
from twistarena import wire
from twistarena.storage import StoreError
from twistarena.wire import OWNER_KEY, REASON_KEY, RETRY_AFTER_KEY

from .. import metrics
from ..match.referee import MatchReferee
from . import Cluster, Location

#: Longest look-up of a match's new owner before a stream is closed without one.
REDIRECT_LOOKUP_S = 0.5


async def abort_not_owner(context: aio.ServicerContext[Any, Any], details: str,
                          address: str, cluster: Cluster | None,
                          retry_after_ms: int = 0) -> NoReturn:
    """UNAVAILABLE + NOT_OWNER, with the owner's address when a live node runs the
    match (a redirect); otherwise the match is being taken over: retry after a
    while (``retry_after_ms`` when the lapsing lease's end is known)."""
    metrics.ERRORS.labels("not_owner").inc()
    trailers: tuple[tuple[str, str], ...] = ((REASON_KEY, "NOT_OWNER"),)
    if address:
        trailers += ((OWNER_KEY, address),)
    elif cluster is not None:
        wait = max(50, retry_after_ms) if retry_after_ms > 0 else cluster.retry_after_ms
        details = f"{details}; it is being taken over, retry after {wait} ms"
        trailers += ((RETRY_AFTER_KEY, str(wait)),)
    await context.abort(grpc.StatusCode.UNAVAILABLE, details, trailing_metadata=trailers)
    raise AssertionError("unreachable")  # pragma: no cover


async def refuse_store_down(cluster: Cluster, match_id: str,
                            context: aio.ServicerContext[Any, Any],
                            reason: str = "STORE_UNAVAILABLE", details: str = "") -> NoReturn:
    """While the node cannot reach its store (health NOT_SERVING), a call that
    needs it is refused at once, never left waiting on a dead link: UNAVAILABLE,
    ``reason`` (STORE_UNAVAILABLE; a stream closed when its lease lapsed keeps
    its NOT_OWNER), a retry hint for this node, and where the match goes when
    this node drops out, if it knows (the next node placement ranks)."""
    metrics.ERRORS.labels("store_unavailable").inc()
    wait = cluster.retry_after_ms
    trailers: tuple[tuple[str, str], ...] = ((REASON_KEY, reason), (RETRY_AFTER_KEY, str(wait)))
    successor = cluster.successor(match_id) if match_id else ""
    if successor:
        trailers += ((OWNER_KEY, successor),)
    details = details or "this server cannot reach its store"
    await context.abort(
        grpc.StatusCode.UNAVAILABLE,
        f"{details}; " + (f"try {successor}" if successor else "try another server")
        + f", or this one after {wait} ms", trailing_metadata=trailers)
    raise AssertionError("unreachable")  # pragma: no cover


async def unless_store_down(cluster: Cluster, match_id: str,
                            context: aio.ServicerContext[Any, Any],
                            reason: str = "STORE_UNAVAILABLE", details: str = "") -> None:
    """Go on only while the store is up; else ``refuse_store_down``."""
    if not cluster.store_up:
        await refuse_store_down(cluster, match_id, context, reason, details)


async def referee_or_redirect(cluster: Cluster, match_id: str,
                              context: aio.ServicerContext[Any, Any],
                              details: str) -> MatchReferee:
    """The match's referee on this node (claimed now if the match is unowned and
    placed here), or end the call with a NOT_OWNER redirect."""
    found = await cluster.locate(match_id)
    if found.referee is not None:
        return found.referee
    await abort_not_owner(context, details, found.address, cluster, found.retry_after_ms)


async def redirect(cluster: Cluster, match_id: str, context: aio.ServicerContext[Any, Any],
                   details: str) -> NoReturn:
    """End a stream whose match left this node, pointing at its new owner."""
    await unless_store_down(cluster, match_id, context, "NOT_OWNER", details)
    found = Location(None)
    # Bounded: a redirect must not hold a stream open on a slow store.
    with contextlib.suppress(StoreError, TimeoutError):
        found = await asyncio.wait_for(cluster.locate(match_id, may_claim=False),
                                       REDIRECT_LOOKUP_S)
    await abort_not_owner(context, details, found.address, cluster, found.retry_after_ms)


async def live_referee_or_redirect(cluster: Cluster, match_id: str,
                                   context: aio.ServicerContext[Any, Any],
                                   ) -> MatchReferee | None:
    """For Watch: None for an unknown or finished match (replayed from the store),
    else the referee here or a NOT_OWNER redirect."""
    record = await cluster.store.matches.load(match_id)
    if record is None or record.status in wire.MATCH_OVER:
        return None
    return await referee_or_redirect(cluster, match_id, context,
                                     f"match {match_id} is not run by this server right now")


async def refuse_draining(cluster: Cluster, match_id: str,
                          context: aio.ServicerContext[Any, Any]) -> NoReturn:
    """A draining node refuses new streams: a redirect when the match's next
    owner is known, else DRAINING."""
    address = ""
    with contextlib.suppress(StoreError):
        address = (await cluster.locate(match_id, may_claim=False)).address
    if address:
        await abort_not_owner(context, "server draining; the match moved", address,
                              cluster)
    metrics.ERRORS.labels("draining").inc()
    await context.abort(grpc.StatusCode.UNAVAILABLE, "server draining",
                        trailing_metadata=((REASON_KEY, "DRAINING"),))
    raise AssertionError("unreachable")  # pragma: no cover
