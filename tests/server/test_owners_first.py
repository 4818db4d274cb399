"""After a store failure a lapsed lease is left to its holder (it alone knows
what it acknowledged, see tests/system/test_store_loss_takeover.py), but only
one that lapsed lately: a dead node's matches are taken over even while the
store keeps failing."""

from __future__ import annotations

from twistarena.server.cluster import Cluster
from twistarena.server.cluster.claims import Claims
from twistarena.server.match.hub import Hub
from twistarena.storage import Store
from twistarena.storage.leases import Holder, LeaseState
from twistarena.storage.nodes import NodeInfo


def test_a_lapsed_lease_is_left_to_its_holder_only_lately_after_a_store_failure() -> None:
    store = Store("redis://127.0.0.1:1/0", Holder("nodeB", "127.0.0.1:9001", 1000))
    claims = Cluster(store, Hub(store, "nodeB")).claims
    now = claims.membership.server_now_ms()
    lately = LeaseState("nodeA", now - 500, "127.0.0.1:9000", "", "")
    long_ago = LeaseState("nodeA", now - 10_000, "127.0.0.1:9000", "", "")
    assert claims.target("m", lately) != "nodeA", "no store failure seen: placement decides"
    claims.owners_first()
    assert claims.target("m", lately) == "nodeA"
    assert claims.target("m", long_ago) != "nodeA"
    mine = LeaseState("nodeB", now - 500, "127.0.0.1:9001", "", "")
    assert claims.target("m", mine) == claims.placement.target("m", mine)


def _claims_after_a_store_failure() -> tuple[Claims, int]:
    store = Store("redis://127.0.0.1:1/0", Holder("nodeB", "127.0.0.1:9001", 1000))
    claims = Cluster(store, Hub(store, "nodeB")).claims
    claims.owners_first()
    return claims, claims.membership.server_now_ms()


def test_a_lapsed_lease_is_left_to_its_holder_while_it_heartbeats() -> None:
    """A store that lost a node's renewals shows its lease lapsed long ago: while
    the holder still heartbeats after a store failure, the match is left to it."""
    claims, now = _claims_after_a_store_failure()
    long_ago = LeaseState("nodeA", now - 10_000, "127.0.0.1:9000", "", "")
    m = claims.membership
    m.live, m.live_at_ms = {"nodeA": NodeInfo("nodeA", "127.0.0.1:9000", now, 0)}, now
    assert claims.target("m", long_ago) == "nodeA"
    m.live["nodeA"].seen_ms = now - 10_000
    assert not m.heartbeating("nodeA"), "a node that stopped beating is taken for dead"


def test_a_match_with_no_holder_on_record_is_left_to_a_node_that_acknowledged_it() -> None:
    """A restarted store may have lost a match's first claim and handoff with all
    its holder acknowledged, and every other node's heartbeat: placement over
    this node's stale view would take it and play on from the empty log in
    silence. For a while only a node that remembers acknowledging it claims it."""
    claims, now = _claims_after_a_store_failure()
    m = claims.membership
    m.live, m.live_at_ms = {"nodeB": NodeInfo("nodeB", "127.0.0.1:9001", now, 0)}, now
    unclaimed = LeaseState("", 0, "", "", "")
    assert claims.placement.target("m", unclaimed) == "nodeB", "placement alone takes it"
    assert claims.target("m", unclaimed) == "", "left to the node that ran it"
    claims.hub.acknowledged.note("m", 31)
    assert claims.target("m", unclaimed) == "nodeB"
    claims.owners_first_until = 0.0
    assert claims.target("other", unclaimed) == "nodeB", "after the while: placement decides"
