"""Drain: hand every match of a stopping node to another one.

Each referee is locked (no decision in flight), its lease released naming the
successor (``next``/``next_addr``) and its id pushed to the successor's
inbox, so the successor claims it at once; then the streams are closed with a
redirect. Without another node the matches are stopped (DRAINING) and are
taken over when a node comes back.
"""

from __future__ import annotations

import asyncio
import contextlib

import grpc
from twistarena.storage import Handoff, NodeInfo, Store, StoreError

from .. import logs
from ..match.hub import Hub
from ..match.referee import MatchReferee
from .leases import LeaseKeeper
from .placement import Placement

log = logs.get("twistarena.cluster")


async def hand_off(store: Store, hub: Hub, placement: Placement, keeper: LeaseKeeper,
                   grace: float) -> None:
    """Hand every match of this node over (or stop it), within about ``grace``/2
    to get hold of the referees."""
    referees = list(hub.referees.values())
    if not referees:
        return
    budget = max(0.2, grace / 2)
    acquired = await asyncio.gather(
        *(asyncio.wait_for(r.lock.acquire(), budget) for r in referees),
        return_exceptions=True)
    locked = [r for r, ok in zip(referees, acquired, strict=True) if ok is True]
    try:
        plan: list[tuple[MatchReferee, NodeInfo | None]] = []
        for referee in referees:
            target = placement.choose(referee.match_id, balanced=True,
                                      exclude=[placement.node_id])
            if target is not None:
                placement.note_placed(target.node_id)
            plan.append((referee, target))
        with contextlib.suppress(StoreError):
            await store.nodes.hand_over([
                Handoff(r.match_id, r.owner, t.node_id if t else "", t.address if t else "")
                for r, t in plan])
        for referee, target in plan:
            keeper.valid.pop(referee.match_id, None)
            if target is not None:
                referee.stop(grpc.StatusCode.UNAVAILABLE, "NOT_OWNER",
                             "server draining; the match moved to another server")
            else:
                referee.stop(grpc.StatusCode.UNAVAILABLE, "DRAINING", "server draining")
        to = sorted({t.node_id for _, t in plan if t is not None})
        moved = sum(1 for _, t in plan if t is not None)
        log.info("handed_off", matches=moved, stopped=len(plan) - moved, to=to)
    finally:
        for referee in locked:
            referee.lock.release()
