"""Placement: which node should own a match.

A match's owner is chosen by rendezvous hashing of the match id over the live
nodes that advertise an address. A new match goes to the top-ranked node:
rendezvous ranks alone, uniform in expectation and the same answer on every
node; loads are not used, since they come with the heartbeats and lag a
burst of creations. Drain handoffs use bounded loads: the highest-ranked node
whose load (plus what this node placed there since its last heartbeat) is
below ``BALANCE`` x the mean.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import defaultdict, deque
from collections.abc import Iterable

from twistarena.storage import LeaseState, NodeInfo

from .membership import Membership

#: Drain handoffs go to the best-ranked node below this x the mean load.
BALANCE = 1.1


def rank(node_id: str, match_id: str) -> int:
    """Rendezvous weight of a node for a match (highest wins)."""
    digest = hashlib.blake2b(f"{node_id}/{match_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class Placement:
    """Chooses owners among the live nodes this node knows of."""

    def __init__(self, membership: Membership) -> None:
        self.membership = membership
        self.node_id = membership.node_id
        #: Nodes without an advertised address take no part in placement.
        self.enabled = bool(membership.address)
        self._placed: defaultdict[str, deque[float]] = defaultdict(deque)

    def candidates(self, exclude: Iterable[str] = ()) -> list[NodeInfo]:
        """The live nodes that can be placed on (they advertise an address), but ``exclude``."""
        skip = set(exclude)
        return [n for n in self.membership.live.values()
                if n.address and n.node_id not in skip]

    def choose(self, match_id: str, balanced: bool,
               exclude: Iterable[str] = ()) -> NodeInfo | None:
        """The node that should own ``match_id``: rendezvous hashing over the live
        nodes; ``balanced`` skips nodes already above BALANCE x the mean load."""
        nodes = self.candidates(exclude)
        if not nodes:
            return None
        ranked = sorted(nodes, key=lambda n: rank(n.node_id, match_id), reverse=True)
        if not balanced:
            return ranked[0]
        loads = {n.node_id: n.load + self._recent(n.node_id) for n in nodes}
        cap = max(1, math.ceil((sum(loads.values()) + 1) * BALANCE / len(nodes)))
        for node in ranked:
            if loads[node.node_id] < cap:
                return node
        return min(ranked, key=lambda n: loads[n.node_id])

    def _recent(self, node_id: str) -> int:
        """Matches this node placed on ``node_id`` that its heartbeat may not count yet."""
        placed = self._placed.get(node_id)
        if not placed:
            return 0
        horizon = time.monotonic() - 2.5 * self.membership.beat_s
        while placed and placed[0] < horizon:
            placed.popleft()
        return len(placed)

    def note_placed(self, node_id: str) -> None:
        """Count a match placed on ``node_id`` until its heartbeat can show it."""
        self._placed[node_id].append(time.monotonic())

    def target(self, match_id: str, lease: LeaseState) -> str:
        """Who should claim an unowned match: the successor named at its release or
        creation if it is live, else the node ranked first for it."""
        me, live, leaving = self.node_id, self.membership.live, self.membership.leaving
        if lease.next and (lease.next == me or lease.next in live) and (
                lease.next != me or not leaving):
            return lease.next
        if not self.enabled:
            return "" if leaving else me
        best = self.choose(match_id, balanced=False)
        return best.node_id if best is not None else ""
