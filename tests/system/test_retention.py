"""Finished matches leave the store after ``--retain-finished``, archived first.

Matches of house bots finish on their own; each is in the archive file (its
log replays to the recorded result), its keys carry a TTL, and once it passed
they are gone from the store and the match index. Printed: the store's memory
per finished match while kept, and after expiry.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import grpc
import redis
from twistarena import engine

from tests.clients.helpers import run
from tests.support import agents as raw
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import serve

MATCHES = 6
RETAIN_S = 3


def _match_bytes(client: Any, ids: list[str]) -> int:
    """What the matches' own keys take in the store (MEMORY USAGE)."""
    return sum(int(client.memory_usage(f"{{m:{mid}}}:{part}") or 0) for mid in ids
               for part in ("meta", "log", "owner"))


async def _scenario(archive: Path) -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    node = serve("--redis-url", valkey.url, "--retain-finished", str(RETAIN_S),
                 "--archive-dir", str(archive))
    client = redis.Redis(port=valkey.port)
    try:
        channel = grpc.aio.insecure_channel(node.target)
        ids = []
        for i in range(MATCHES):
            resp = await raw.create(channel, raw.options(
                "twisted", 2, seed=300 + i, house=("random", "random")))
            ids.append(resp.match.match_id)
        await channel.close()

        def archived() -> list[dict[str, Any]]:
            lines = [json.loads(line) for f in archive.glob("*.jsonl")
                     for line in f.read_text().splitlines()]
            return [line for line in lines if line["match_id"] in ids]

        await wait_until(lambda: len(archived()) == MATCHES, "every match archived", timeout=60)
        kept = _match_bytes(client, ids)
        ttls = [client.pttl(f"{{m:{mid}}}:{part}") for mid in ids
                for part in ("meta", "log", "owner")]
        # EXISTS expires a key whose TTL has passed (the store reclaims the rest
        # lazily), so every part of every match is asked before memory is read.
        await wait_until(lambda: not any(client.exists(f"{{m:{mid}}}:{part}") for mid in ids
                                         for part in ("meta", "log", "owner")),
                         "keys expired", timeout=RETAIN_S + 10)
        return {"archived": archived(), "ttls": ttls, "kept": kept,
                "expired": _match_bytes(client, ids)}
    finally:
        client.close()
        node.cleanup()
        valkey.stop()


def test_finished_matches_are_archived_then_expire() -> None:
    archive = Path(tempfile.mkdtemp(prefix="ta-test-archive-"))
    try:
        out = run(_scenario(archive), timeout=120)
    finally:
        shutil.rmtree(archive, ignore_errors=True)
    assert all(0 < ttl <= RETAIN_S * 1000 for ttl in out["ttls"]), out["ttls"]
    for line in out["archived"]:
        opts = line["options"]
        state = engine.replay(opts["gameId"], opts["numPlayers"], int(line["seed"]), {},
                              [(s, a) for s, a, _t in line["actions"]])
        assert state.is_terminal()
        assert state.scores() == line["result"]["scores"]
    assert out["expired"] == 0
    print(f"store memory per finished match: {out['kept'] / MATCHES:.0f} B kept, "
          f"{out['expired'] / MATCHES:.0f} B after expiry")
