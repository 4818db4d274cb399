"""The checker: the agents' own records against the store's final state.

For every match the workload played (its final record and log read back with
``GetReplay`` once every agent is done):

- every acknowledged action is in the match's final log (same seat, same
  action, at the position its decision opened), or was announced lost to that
  seat: a Rewound heard after the acknowledgement to a length at or before that
  position, a VOIDED end the seat heard or was given by the store, or the
  decision asked again after its acknowledgement (how a seat learns of the
  loss no server can announce: docs/protocol.md, section 9);
- every end a seat or spectator heard is the stored end (same reason, same
  scores), or the seat learned of the void afterwards (its stored outcome);
- every FINISHED match's replay verifies (the engine replays the log to the
  stored result);
- no match is still RUNNING without a live owner past its lease plus a grace;
- every hosted seat is played or failed (its match is over), none left holding
  a slot: the store's runner queues (pending, assigned, held, holder) no
  longer name it.

Each match is put on the faults that overlapped its life; its losses, rewinds,
voids and violations on the latest of them (``none`` when no fault touched it).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import RedisCluster
from twistarena.clients.cli.replay import verify
from twistarena.clients.sdk import AgentError, Backoff, MatchClient, MatchResult
from twistarena.v1 import match_pb2

from .nemesis import Fault
from .workload import MatchRecord, SeatRecord

#: Decision ids are ``opened_at * SEAT_BITS + seat + 1`` (docs/protocol.md).
SEAT_BITS = 8
#: Seconds after a fault ends during which a match is still counted as hit by it.
HIT_GRACE_S = 3.0
COLUMNS = ("injected", "matches_hit", "acknowledged_then_lost", "rewound", "voided",
           "violations")


@dataclass
class Violation:
    match_id: str
    seat: int | None
    what: str
    heard: dict[str, Any]
    stored: dict[str, Any]
    faults: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    """What the checker found, per match and per fault kind."""

    table: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    violations: list[Violation] = field(default_factory=list)
    matches: int = 0
    finished: int = 0
    voided: int = 0
    #: Matches the store lost whole (created, then a crash before their fsync).
    matches_lost: int = 0
    acknowledged: int = 0
    lost: int = 0
    #: Hosted practice matches, and seats played by Play-protocol-only bots.
    hosted: int = 0
    protocol_seats: int = 0
    #: Seats played by a program through the bridge (``exec:`` entrants).
    program_seats: int = 0


def _result(result: MatchResult | None) -> dict[str, Any] | None:
    return None if result is None else {"reason": result.reason, "scores": list(result.scores)}


def _same_end(heard: MatchResult, stored: MatchResult) -> bool:
    return heard.reason == stored.reason and list(heard.scores) == list(stored.scores)


def _seat_lost(seat: SeatRecord, actions: Sequence[match_pb2.RecordedAction],
               voided: bool) -> tuple[int, list[str]]:
    """How many of the seat's acknowledged actions the final log lacks, and the
    ones nobody told it of."""
    lost, silent = 0, []
    for did, (action, rewinds_before) in sorted(seat.acks.items()):
        opened_at = (did - 1) // SEAT_BITS
        position = next((i for i in range(opened_at, len(actions))
                         if actions[i].seat == seat.seat), None)
        if position is not None and actions[position].action_id == action \
                and not actions[position].timeout:
            continue
        lost += 1
        at = position if position is not None else opened_at
        told = any(kept <= at for kept, _lost, _why in seat.rewinds[rewinds_before:]) \
            or did in seat.asked_again
        learned_void = voided and any(
            r is not None and r.reason == "VOIDED" for r in (seat.heard, seat.stored))
        if not (told or learned_void):
            silent.append(f"decision {did} (action {action}, log position {at}) acknowledged, "
                          "not in the final log, never announced lost")
    return lost, silent


def store_client(url: str) -> Any:
    """A client of the store at ``url`` (a cluster client for a cluster URL)."""
    if url.startswith("redis+cluster://"):
        host, port = url.split("//", 1)[1].split(",")[0].rsplit(":", 1)
        return RedisCluster(host=host, port=int(port), socket_timeout=5)
    return aioredis.Redis.from_url(url, socket_timeout=5)


async def _owner_lapsed(url: str, match_id: str, grace_ms: int) -> bool:
    """The match's lease (if any) ended more than ``grace_ms`` ago."""
    client = store_client(url)
    try:
        until = await client.hget(f"{{m:{match_id}}}:owner", "until")
    finally:
        await client.aclose()
    return until is None or int(until) < time.time() * 1000 - grace_ms


def _match_lost(out: Outcome, row: Counter[str], match: MatchRecord, labels: list[str]) -> None:
    """The store lost the whole match (its creation was not yet on disk when
    the store crashed): each seat's acknowledged actions are lost, and the seat
    must have been told so (its agent stopped on UNKNOWN_MATCH)."""
    out.matches_lost += 1
    for seat in match.seats:
        out.lost += len(seat.acks)
        out.acknowledged += len(seat.acks)
        row["acknowledged_then_lost"] += len(seat.acks)
        if seat.acks and "UNKNOWN_MATCH" not in seat.error:
            out.violations.append(Violation(
                match.match_id, seat.seat, "the store lost the match; the seat was not told",
                {"acknowledged": len(seat.acks), "end": _result(seat.heard),
                 "error": seat.error}, {"status": "gone"}, labels))
            row["violations"] += 1


def _seat_state(seat: SeatRecord) -> dict[str, Any]:
    return {"seat": seat.seat, "acknowledged": len(seat.acks), "rewinds": seat.rewinds,
            "end": _result(seat.heard), "stored_outcome": _result(seat.stored),
            "error": seat.error, "last_failures": seat.failures[-3:]}


#: The store's runner queues, by what a seat named there is (storage/keys.py).
RUNNER_QUEUES = (("waiting for a runner", "list", "{runners}:pending"),
                 ("assigned", "hash", "{runners}:seats"),
                 ("held", "zset", "{runners}:held"),
                 ("held by a runner", "hash", "{runners}:holder"))


#: A hosted seat of a match just over may still be on its way to a runner that
#: learns the end and says it is done (one handed out again after a store
#: failure starts its program first): the checker gives it this long.
SLOT_RELEASE_S = 20.0


async def _slot_held(url: str, match_id: str, seat: int) -> list[str]:
    """Where the store's runner queues still name this hosted seat (none once played
    or failed: its runner said it is done, or the seat was given up), once it is
    released or ``SLOT_RELEASE_S`` has passed."""
    key = f"{match_id}:{seat}"
    client = store_client(url)
    deadline = time.monotonic() + SLOT_RELEASE_S
    try:
        while True:
            found = []
            for what, kind, queue in RUNNER_QUEUES:
                if kind == "list":
                    held = await client.lpos(queue, key) is not None
                elif kind == "hash":
                    held = bool(await client.hexists(queue, key))
                else:
                    held = await client.zscore(queue, key) is not None
                if held:
                    found.append(what)
            if not found or time.monotonic() >= deadline:
                return found
            await asyncio.sleep(0.5)
    finally:
        await client.aclose()


async def _not_over(out: Outcome, row: Counter[str], client: MatchClient, match: MatchRecord,
                    labels: list[str], store_url: str, lease_ms: int) -> None:
    """A match still live when the campaign ended: without an owner past its
    lease plus a grace, or simply not played out (its agents gave up)."""
    record = await client.get_match(match.match_id)
    holds = {"status": match_pb2.MatchStatus.Name(record.status),
             "actions": record.actions}
    orphan = await _owner_lapsed(store_url, match.match_id, lease_ms + 5000)
    what = ("RUNNING without an owner past its lease plus a grace" if orphan
            else "not over when the campaign ended")
    out.violations.append(Violation(match.match_id, None, what,
                                    {"seats": [_seat_state(s) for s in match.seats]},
                                    holds, labels))
    row["violations"] += 1


async def check(matches: Sequence[MatchRecord], faults: Sequence[Fault], servers: Sequence[str],
                store_url: str, lease_ms: int) -> Outcome:
    out = Outcome()
    for fault in faults:
        out.table[fault.kind]["injected"] += 1
    client = MatchClient(list(servers), backoff=Backoff(give_up_after=30.0))
    for match in matches:
        out.matches += 1
        end = match.ended or float("inf")
        hit = [f for f in faults if f.began <= end and match.created <= f.ended + HIT_GRACE_S]
        kinds = sorted({f.kind for f in hit})
        for kind in kinds:
            out.table[kind]["matches_hit"] += 1
        blamed = max(hit, key=lambda f: f.began).kind if hit else "none"
        if not hit:
            out.table["none"]["matches_hit"] += 1
        labels = [f"{f.kind}@{f.began:.2f}s-{f.ended:.2f}s node{f.node + 1}" for f in hit]
        row = out.table[blamed]
        try:
            replay = await client.get_replay(match.match_id)
        except AgentError as exc:
            if exc.reason == "UNKNOWN_MATCH":
                _match_lost(out, row, match, labels)
            elif exc.reason == "REPLAY_CLOSED":  # not over: its replay is not public
                await _not_over(out, row, client, match, labels, store_url, lease_ms)
            else:
                out.violations.append(Violation(match.match_id, None, f"unreadable: {exc}", {},
                                                {}, labels))
                row["violations"] += 1
            continue
        record = replay.match
        stored_over = record.status in (match_pb2.MATCH_STATUS_FINISHED,
                                        match_pb2.MATCH_STATUS_CANCELLED)
        stored = MatchResult.from_proto(record.result) if stored_over else None
        holds = {"status": match_pb2.MatchStatus.Name(record.status),
                 "result": _result(stored), "actions": len(replay.actions)}
        voided = stored is not None and stored.reason == "VOIDED"
        out.voided += voided
        row["voided"] += voided
        row["rewound"] += any(s.rewinds for s in match.seats)
        problems: list[tuple[int | None, str, dict[str, Any]]] = []
        if not stored_over:
            if await _owner_lapsed(store_url, match.match_id, lease_ms + 5000):
                problems.append((None, "RUNNING without an owner past its lease plus a grace",
                                 {}))
            else:
                problems.append((None, "not over when the campaign ended", {}))
        elif record.status == match_pb2.MATCH_STATUS_FINISHED:
            out.finished += 1
            check_ = verify(replay)
            if check_.problems:
                problems.append((None, "replay does not verify: " + "; ".join(check_.problems),
                                 {}))
        if match.hosted_seat >= 0:
            out.hosted += 1
            if stored_over:
                held = await _slot_held(store_url, match.match_id, match.hosted_seat)
                if held:
                    problems.append((match.hosted_seat, "a hosted seat of a match that is over "
                                     f"is still {', '.join(held)}", {}))
        for seat in match.seats:
            out.protocol_seats += seat.protocol
            out.program_seats += seat.program
            heard = _seat_state(seat)
            out.acknowledged += len(seat.acks)
            lost, silent = _seat_lost(seat, replay.actions, voided)
            out.lost += lost
            row["acknowledged_then_lost"] += lost
            problems += [(seat.seat, s, heard) for s in silent]
            if seat.heard is not None and stored is not None and \
                    not _same_end(seat.heard, stored) and not (
                        seat.stored is not None and _same_end(seat.stored, stored)):
                problems.append((seat.seat, "heard an end the store does not hold", heard))
            # A protocol-only seat that joined a match already over (MATCH_OVER)
            # learns its end from GetMatch, as docs/protocol.md says.
            if seat.heard is None and stored_over and not (seat.protocol and seat.stored):
                problems.append((seat.seat, "never heard the end", heard))
        spectator = match.spectator
        if spectator is not None and spectator.heard is not None and stored is not None \
                and not _same_end(spectator.heard, stored):
            problems.append((None, "a spectator heard an end the store does not hold",
                             {"spectator": _result(spectator.heard)}))
        for seat_no, what, heard in problems:
            out.violations.append(Violation(match.match_id, seat_no, what, heard, holds, labels))
            row["violations"] += 1
    return out


def table_rows(outcome: Outcome) -> list[dict[str, Any]]:
    rows = []
    for kind in sorted(outcome.table):
        counts = outcome.table[kind]
        rows.append({"fault": kind, **{c: counts.get(c, 0) for c in COLUMNS}})
    return rows
