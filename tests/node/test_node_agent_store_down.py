"""The Node agent and a node cut from its store.

Two nodes share one Valkey; the first one's link to it goes silent. The agent,
given both addresses with the cut node first, is refused there at once
(``STORE_UNAVAILABLE`` with a retry hint and the match's owner) and plays its
seat to the end on the other node; its rotation skips a server while that
server's ``twistarena-retry-after-ms`` hint runs.
"""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import redis

from tests.node.test_node_agent import AGENT_JS, ROOT, finish_node, start_node
from tests.node.test_node_agent import node as node  # the fixture
from tests.support import agents as raw
from tests.support.nodes import Node, health_not_serving, owners
from tests.support.proxy import TcpProxy
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until


def test_the_rotation_skips_a_server_while_its_hint_runs(node: str) -> None:
    script = (
        f"const {{ nextServer }} = require({json.dumps(str(AGENT_JS))});"
        "const now = Date.now(); const s = ['a:1', 'b:2', 'c:3'];"
        "console.log(JSON.stringify(["
        "nextServer(s, 0, new Map([['b:2', now + 60000]])),"
        "nextServer(s, 0, new Map([['b:2', now + 60000], ['c:3', now + 30000],"
        " ['a:1', now + 90000]])),"
        "nextServer(s, 0, new Map())]));")
    out = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True,
                         cwd=str(ROOT), timeout=30)
    skip, every, free = json.loads(out.stdout)
    assert skip == {"index": 2, "waitMs": 0}  # b:2 is skipped for its minute
    assert every["index"] == 2 and 25_000 < every["waitMs"] <= 30_000  # the soonest: c:3
    assert free == {"index": 1, "waitMs": 0}


async def _cut_first(node: str, valkey: ValkeyProcess, proxy: TcpProxy,
                     cut: Node, healthy: Node) -> dict[str, Any]:
    admin = redis.Redis(port=valkey.port)
    try:
        async with grpc.aio.insecure_channel(healthy.address) as channel:
            for seed in range(700, 720):  # until placement puts one on the healthy node
                resp = await raw.create(channel, raw.options(
                    "twhist", 3, seed=seed, decision_ms=30_000, house=("", "random", "random")))
                match_id = resp.match.match_id
                owner = await wait_until(lambda m=match_id: owners(admin, [m])[m].get("node"),
                                         "the match is claimed", timeout=10)
                if owner == healthy.node_id:
                    break
            else:
                raise AssertionError("no match was placed on the healthy node")
    finally:
        admin.close()
    proxy.cut()
    await wait_until(lambda: health_not_serving(cut.address), "the cut node says NOT_SERVING",
                     timeout=10)
    started = time.monotonic()
    proc = await start_node(node, f"{cut.address},{healthy.address}", match_id,
                            raw.tokens(resp)[0], "--strategy", "random", "--seed", "3")
    code, line, stderr = await finish_node(proc)
    return {"code": code, "line": line, "stderr": stderr, "took": time.monotonic() - started}


def test_the_node_agent_leaves_a_node_cut_from_its_store_at_once(node: str) -> None:
    valkey = ValkeyProcess().start()
    proxy = TcpProxy(valkey.port).start()
    cut = Node("cut", f"redis://{proxy.address}/0", lease_ms=1000)
    healthy = Node("healthy", valkey.url, lease_ms=1000)
    try:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(Node.start, (cut, healthy)))
        out = raw.run(_cut_first(node, valkey, proxy, cut, healthy), timeout=120)
    finally:
        cut.cleanup()
        healthy.cleanup()
        proxy.stop()
        valkey.stop()
    print(f"Node agent: refused by the cut node, played the seat on the other in "
          f"{out['took']:.2f} s")
    assert out["code"] == 0, out["stderr"][-2000:]
    assert "STORE_UNAVAILABLE" in out["stderr"], out["stderr"][-2000:]
    # The refusal names the match's next owner while the cut node's view of the live
    # nodes is fresh (under load it may have lapsed: then it says "try another
    # server"); either way the agent left for the other address at once and played
    # its seat there (exit code 0 above).
    assert (f"the match is at {healthy.address}" in out["stderr"]
            or "try another server" in out["stderr"]), out["stderr"][-2000:]
