"""After a store failure a lapsed lease is left to its holder (it alone knows
what it acknowledged, see tests/system/test_store_loss_takeover.py), but only
one that lapsed lately: a dead node's matches are taken over even while the
store keeps failing."""

from __future__ import annotations

from twistarena.server.cluster import Cluster
from twistarena.server.match.hub import Hub
from twistarena.storage import Store
from twistarena.storage.leases import Holder, LeaseState


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
