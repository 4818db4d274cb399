"""Tournaments in the store: spec and status, round plans, results, the driver's lease.

Keys (tag ``{t:<id>}``, see ``keys``): ``{t:<id>}:meta``, ``{t:<id>}:rounds``,
``{t:<id>}:results`` and ``{t:<id>}:owner`` (the lease of the node driving
it, the same lease as a match's: see ``leases``); the indexes
``twistarena:tournaments`` and ``twistarena:tournaments:live``. Round plans
and results are written once (HSETNX) and only by the lease holder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from twistarena.v1 import tournaments_pb2 as tpb

from . import keys
from .connection import Connections, StorePart
from .errors import driver_errors
from .leases import Holder, Leases
from .replies import text
from .scripts import Scripts

#: A driver's lease; it renews every second, so a dead driver is replaced within this.
LEASE_MS = 3000


@dataclass(slots=True)
class TournamentRecord:
    """A tournament as stored; round plans and results are parsed JSON."""

    tid: str
    spec: tpb.TournamentSpec
    status: int
    created_ms: int
    detail: str
    rounds: dict[int, dict[str, Any]]
    results: dict[tuple[int, int], Any]


class TournamentStore(StorePart):
    """Tournaments and the leases of their drivers."""

    def __init__(self, conn: Connections, scripts: Scripts, holder: Holder) -> None:
        super().__init__(conn)
        self.leases = Leases(conn, scripts, replace(holder, lease_ms=LEASE_MS),
                             keys.tournament_lease)

    async def create(self, tid: str, spec: tpb.TournamentSpec, status: int,
                     created_ms: int) -> None:
        """Store a new tournament, indexed and marked live, in one transaction (on a
        cluster, whose transactions take one slot, in one pipeline: the record
        first, then the indexes)."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=not self.conn.cluster_mode)
            pipe.hset(keys.tournament_meta(tid), mapping={
                "spec": spec.SerializeToString(), "status": status, "created_ms": created_ms})
            pipe.zadd(keys.TOURNAMENT_INDEX, {tid: created_ms})
            pipe.sadd(keys.LIVE_TOURNAMENTS, tid)
            await pipe.execute()

    async def load(self, tid: str) -> TournamentRecord | None:
        """The tournament with its rounds and results, None if the store has none."""
        meta, rounds, results = await self._read_together(
            ("HGETALL", keys.tournament_meta(tid)), ("HGETALL", keys.tournament_rounds(tid)),
            ("HGETALL", keys.tournament_results(tid)))
        if not meta or b"spec" not in meta:
            return None
        parsed: dict[tuple[int, int], Any] = {}
        for key, value in results.items():
            r, _, i = text(key).partition(":")
            parsed[(int(r), int(i))] = json.loads(value)
        return TournamentRecord(
            tid, tpb.TournamentSpec.FromString(meta[b"spec"]), int(meta[b"status"]),
            int(meta.get(b"created_ms", b"0")), text(meta.get(b"detail", b"")),
            {int(k): json.loads(v) for k, v in rounds.items()}, parsed)

    async def status(self, tid: str) -> tuple[int, str] | None:
        """(status, detail) of a tournament, None if there is none."""
        with driver_errors():
            status, detail = await self._redis.hmget(keys.tournament_meta(tid), "status",
                                                     "detail")
        if status is None:
            return None
        return int(status), text(detail)

    async def newest(self, count: int) -> list[str]:
        """Ids of the ``count`` newest tournaments."""
        with driver_errors():
            raw: Any = await self._redis.zrevrange(keys.TOURNAMENT_INDEX, 0, count - 1)
        return [text(x) for x in raw]

    async def live(self) -> list[str]:
        """Ids of the unfinished tournaments."""
        with driver_errors():
            raw: Any = await self._redis.smembers(keys.LIVE_TOURNAMENTS)
        return sorted(text(x) for x in raw)

    async def is_live(self, tid: str) -> bool:
        """Whether the tournament exists and has not ended."""
        with driver_errors():
            return bool(await self._redis.sismember(keys.LIVE_TOURNAMENTS, tid))

    async def drop_live(self, tid: str) -> None:
        """The tournament ended: no driver needs to pick it up any more."""
        with driver_errors():
            await self._redis.srem(keys.LIVE_TOURNAMENTS, tid)

    async def finish(self, tid: str, status: int, detail: str = "") -> None:
        """Set the final status (and why) and take it out of the live set."""
        fields: dict[str, str | int] = {"status": status}
        if detail:
            fields["detail"] = detail
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            pipe.hset(keys.tournament_meta(tid), mapping=fields)
            pipe.srem(keys.LIVE_TOURNAMENTS, tid)
            await pipe.execute()

    async def plan_round(self, tid: str, token: str, round_no: int,
                         plan: dict[str, Any]) -> dict[str, Any]:
        """Store a round's plan unless one is stored already; returns the stored one.
        Fenced by the driver's lease (``FencedError``)."""
        await self.leases.fenced_hset(tid, token, keys.tournament_rounds(tid),
                                      {str(round_no): json.dumps(plan)}, only_new=True)
        with driver_errors():
            stored: Any = await self._redis.hget(keys.tournament_rounds(tid), str(round_no))
        return dict(json.loads(stored))

    async def record_result(self, tid: str, token: str, round_no: int, index: int,
                            result: dict[str, Any]) -> None:
        """Store a game's result unless stored already; fenced by the driver's lease."""
        await self.leases.fenced_hset(tid, token, keys.tournament_results(tid),
                                      {f"{round_no}:{index}": json.dumps(result)},
                                      only_new=True)
