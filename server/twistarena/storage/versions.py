"""Hosted agents in the store: their immutable versions, the archives, the active
version and what each version did in its matches.

Keys (tag ``{av:<agent>}``, see ``keys``): ``{av:<agent>}:versions``,
``{av:<agent>}:version:<id>``, ``{av:<agent>}:active``, the stats
(``:counts``, ``:cpumax``, ``:seen``), ``{av:<agent>}:failures:<id>`` and the
seats' per-decision logs (``{av:<agent>}:seatlogs``, ``:seatlogs:order``); one
agent's keys share a slot so that one script counts a match report. The
archives are ``twistarena:archive:<sha256>``, one per content, shared by every
version with those bytes and readable by every node and runner.

A version is identified by what makes it run: its archive's content hash, its
entry command and its build command (``version_id``). Submitting the same
again gives the same version (stored once); nothing of a version changes after
it is stored.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from twistarena.hosted.versions import version_id as version_id

from . import keys
from .connection import Connections, StorePart
from .errors import StoreError, driver_errors
from .replies import integer, text
from .scripts import Scripts

#: The tail of a program's stderr kept per failed match (the newest bytes).
STDERR_TAIL_BYTES = 64 * 1024
#: Failures kept per version (the newest); older ones are dropped.
FAILURES_KEPT = 5
#: Hosted seats whose per-decision logs an agent keeps (the newest).
SEAT_LOGS_KEPT = 50
#: Steps and text bytes kept per seat log (the runner keeps no more either).
SEAT_LOG_STEPS = 2000
SEAT_LOG_BYTES = 64 * 1024
#: A version's fields but its build log (what a list of versions reads).
LISTED_FIELDS = ("content_hash", "entry", "build", "size", "unpacked", "files", "created_ms")
#: Counters of a version, summed over its match reports.
COUNTERS = ("matches", "decisions", "cpu_us", "crashes", "timeouts", "illegal_outputs",
            "restarts")


class TooManyVersions(StoreError):
    """The agent keeps as many versions as it may; the new one was not stored."""


class TooManyBytes(StoreError):
    """The new version would take its agent, or the whole store, over its cap on
    archive bytes; it was not stored."""


class VersionActive(StoreError):
    """The version is the agent's active one: its seats start it; not deleted."""


class VersionPlaying(StoreError):
    """Seats handed out with the version may still be playing it; not deleted."""


@dataclass(frozen=True, slots=True)
class Deleted:
    """What deleting a version freed: its packed bytes, and the archive's bytes
    when no other version used it (0: the archive stays for the others)."""

    content_hash: str
    size: int
    archive_freed: int


def _tail_text(raw: bytes) -> str:
    """The newest ``STDERR_TAIL_BYTES`` of a stream as text of at most that many
    bytes in UTF-8 (a replaced undecodable byte takes three)."""
    text = raw[-STDERR_TAIL_BYTES:].decode("utf-8", "replace")
    return text.encode()[-STDERR_TAIL_BYTES:].decode("utf-8", "ignore")


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """One immutable version of a hosted agent, as stored (the archive apart)."""

    agent_id: str
    version_id: str
    #: sha256 (hex) of the packed archive: the key of its bytes (``archive``).
    content_hash: str
    #: The command that starts the program, run in the version's directory.
    entry: str
    #: The build command the archive was made with ('' when none).
    build: str
    #: The build's output (private to the agent's owner).
    build_log: str
    #: Packed bytes.
    size: int
    #: Unpacked bytes, all files together.
    unpacked: int
    files: int
    created_ms: int


def _record(agent_id: str, vid: str, raw: dict[bytes, bytes]) -> VersionRecord:
    def get(name: str) -> Any:
        return raw.get(name.encode())

    return VersionRecord(agent_id, vid, text(get("content_hash")), text(get("entry")),
                         text(get("build")), text(get("build_log")), integer(get("size")),
                         integer(get("unpacked")), integer(get("files")),
                         integer(get("created_ms")))


@dataclass(slots=True, kw_only=True)
class FailureCounts:
    """How often a program crashed, timed out, answered illegally or was restarted:
    counted per match by its runner (``MatchReport``) and added up per version
    (``VersionStats``). Keyword-only, so that it adds no positional parameter."""

    crashes: int = 0
    timeouts: int = 0
    illegal_outputs: int = 0
    restarts: int = 0


@dataclass(slots=True)
class MatchReport(FailureCounts):
    """What one seat's program did in one match, as the runner that ran it saw it."""

    #: Counted once per id (a report sent again after a lost reply is not
    #: counted twice): the match id and the seat, e.g. ``<match>:<seat>``.
    report_id: str
    match_id: str
    decisions: int = 0
    #: CPU the program used for its decisions, all together and the slowest one.
    cpu_ms_total: float = 0.0
    cpu_ms_max: float = 0.0
    #: The end of the program's stderr; only the last ``STDERR_TAIL_BYTES`` are kept,
    #: and only when something failed.
    stderr_tail: bytes = b""
    #: The seat, and its per-decision logs (oldest first).
    seat: int = 0
    steps: tuple[StepLogRecord, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether anything went wrong (then the failure is kept with its stderr)."""
        return bool(self.crashes or self.timeouts or self.illegal_outputs or self.restarts)


@dataclass(frozen=True, slots=True)
class StepLogRecord:
    """What a hosted program wrote to stderr while it had one decision."""

    #: The replay's step at which the decision was asked.
    step: int
    text: str
    #: "" (answered), "crash", "timeout" or "illegal".
    failure: str = ""
    why: str = ""


@dataclass(frozen=True, slots=True)
class SeatLogRecord:
    """One hosted seat's per-decision logs."""

    match_id: str
    seat: int
    version_id: str
    steps: list[StepLogRecord]


@dataclass(frozen=True, slots=True)
class FailureRecord:
    """One match in which a version failed, with the tail of its stderr."""

    match_id: str
    at_ms: int
    crashes: int
    timeouts: int
    illegal_outputs: int
    restarts: int
    stderr_tail: str
    #: The seat, the step of its first failed decision and why (absent from
    #: records an older node stored).
    seat: int = 0
    step: int = 0
    reason: str = ""


@dataclass(slots=True)
class VersionStats(FailureCounts):
    """A version's match reports added up."""

    matches: int = 0
    decisions: int = 0
    cpu_ms_mean: float = 0.0
    cpu_ms_max: float = 0.0
    #: Newest first, at most ``FAILURES_KEPT``.
    failures: list[FailureRecord] = field(default_factory=list)


class VersionStore(StorePart):
    """Versions of hosted agents, their archives and their per-version stats."""

    def __init__(self, conn: Connections, scripts: Scripts) -> None:
        super().__init__(conn)
        self.scripts = scripts

    # -- versions ---------------------------------------------------------------------

    async def put(self, record: VersionRecord, archive: bytes, most: int = 0,
                  most_bytes: int = 0, store_bytes: int = 0) -> tuple[VersionRecord, bool]:
        """Store a version and its archive: the archive first (once per content
        hash, noting the version as one of its users), so that a stored version
        never lacks its bytes. Returns the stored version and whether it is new (an
        existing one is returned unchanged). Refused (0: no cap): ``TooManyVersions``
        when the agent already has ``most`` others; ``TooManyBytes`` when its
        versions would pack more than ``most_bytes``, or a new archive would take
        the store's archives over ``store_bytes`` (counted before the write, so
        submissions at the same moment may each pass: over by a few archives)."""
        fields = asdict(record)
        vid = fields.pop("version_id")
        agent_id = fields.pop("agent_id")
        args: list[str | int] = [vid, record.created_ms, most, most_bytes, record.size]
        for name, value in fields.items():
            args += [name, value]
        archive_keys = [keys.archive(record.content_hash), keys.archive_refs(record.content_hash)]
        user = f"{agent_id}/{vid}"
        with driver_errors():
            await self._backfill_bytes(agent_id)
            if store_bytes and not await self._redis.exists(archive_keys[0]) and \
                    await self.stored_bytes() + len(archive) > store_bytes:
                raise TooManyBytes(f"the store holds {store_bytes} bytes of archives, its cap")
            if await self.scripts.run(self._redis, self.scripts.archive_put, archive_keys,
                                      [archive, user]):
                await self._redis.incrby(keys.ARCHIVE_BYTES, len(archive))
            created = await self.scripts.run(
                self._redis, self.scripts.version_put,
                [keys.agent_version(agent_id, vid), keys.agent_versions(agent_id),
                 keys.agent_version_seq(agent_id), keys.agent_archive_bytes(agent_id)], args)
            if created < 0:
                await self._release(record.content_hash, user)
        if created == -1:
            raise TooManyVersions(f"agent {agent_id} has {most} versions already")
        if created == -2:
            raise TooManyBytes(f"agent {agent_id} would keep more than {most_bytes} bytes "
                               "of archives")
        if created:
            return record, True
        stored = await self.get(agent_id, vid)
        return (stored or record), False

    async def _release(self, content_hash: str, user: str) -> int:
        """The version ``user`` no longer uses the archive; its bytes freed if it was
        the last user."""
        freed = int(await self.scripts.run(
            self._redis, self.scripts.archive_release,
            [keys.archive(content_hash), keys.archive_refs(content_hash)], [user]))
        if freed:
            await self._redis.decrby(keys.ARCHIVE_BYTES, freed)
        return freed

    async def _backfill_bytes(self, agent_id: str) -> None:
        """Count the bytes of an agent's versions stored before bytes were counted."""
        if await self._redis.exists(keys.agent_archive_bytes(agent_id)):
            return
        sizes = [r.size for r in await self.all_of(agent_id, logs_of=())]
        await self._redis.set(keys.agent_archive_bytes(agent_id), sum(sizes), nx=True)

    async def stored_bytes(self) -> int:
        """Packed bytes of every archive the store holds (as counted since counted)."""
        with driver_errors():
            return integer(await self._redis.get(keys.ARCHIVE_BYTES))

    async def agent_bytes(self, agent_id: str) -> int:
        """Packed bytes of the agent's versions."""
        with driver_errors():
            await self._backfill_bytes(agent_id)
            return integer(await self._redis.get(keys.agent_archive_bytes(agent_id)))

    async def delete(self, agent_id: str, vid: str, now_ms: int) -> Deleted | None:
        """Delete a version that is neither the active one (``VersionActive``) nor
        handed to a runner for a seat that may still be playing (``VersionPlaying``):
        its record, stats and failures, and its archive when no other version uses
        it. None when the agent has no such version. The numbers of the others
        (what arenas rate) do not change."""
        counts, cpumax, _seen = keys.version_stats(agent_id)
        with driver_errors():
            await self._backfill_bytes(agent_id)
            await self._keep_numbers(agent_id)
            result = await self.scripts.run(
                self._redis, self.scripts.version_delete,
                [keys.agent_version(agent_id, vid), keys.agent_versions(agent_id),
                 keys.agent_active_version(agent_id), keys.agent_archive_bytes(agent_id),
                 keys.version_playing(agent_id, vid), keys.version_failures(agent_id, vid),
                 counts, cpumax], [vid, now_ms, *COUNTERS])
            code = int(result[0])
            if code == -1:
                return None
            if code == -2:
                raise VersionActive(f"version {vid} is the active one of agent {agent_id}")
            if code == -3:
                raise VersionPlaying(f"{int(result[1])} seats handed out with version {vid} "
                                     "may still be playing it")
            content_hash, size = text(result[1]), int(result[2])
            freed = await self._release(content_hash, f"{agent_id}/{vid}") \
                if content_hash else 0
        return Deleted(content_hash, size, freed)

    async def _keep_numbers(self, agent_id: str) -> None:
        """Give every version stored before numbers were kept its number (its rank),
        before a deletion would change the ranks."""
        vids = await self.ids(agent_id)
        pipe = self._redis.pipeline(transaction=False)
        for rank, vid in enumerate(reversed(vids), 1):
            pipe.hsetnx(keys.agent_version(agent_id, vid), "number", rank)
        pipe.setnx(keys.agent_version_seq(agent_id), len(vids))
        await pipe.execute()

    async def numbers(self, agent_id: str, vids: Sequence[str]) -> list[int]:
        """Each version's number (1: the agent's first stored), 0 when unknown."""
        return await self._numbers([(agent_id, vid) for vid in vids])

    async def _numbers(self, versions: Sequence[tuple[str, str]]) -> list[int]:
        """The number of each (agent, version id), 0 when unknown: the one it kept,
        or for a version stored before numbers were kept, its rank."""
        if not versions:
            return []
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for agent_id, vid in versions:
                pipe.hget(keys.agent_version(agent_id, vid), "number")
                pipe.zrank(keys.agent_versions(agent_id), vid)
            raw = await pipe.execute()
        return [int(number) if number is not None else (int(rank) + 1 if rank is not None
                                                         else 0)
                for number, rank in zip(raw[::2], raw[1::2], strict=True)]

    async def active_versions(self, agent_ids: Sequence[str]) -> list[tuple[int, str]]:
        """Each agent's active hosted version: (its number, see ``numbers``; its id),
        (0, "") for none, in two pipelined round trips."""
        if not agent_ids:
            return []
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for agent_id in agent_ids:
                pipe.get(keys.agent_active_version(agent_id))
            active = [text(vid) if vid else "" for vid in await pipe.execute()]
        numbers = await self._numbers(list(zip(agent_ids, active, strict=True)))
        return [(number, vid) if vid and number else (0, "")
                for vid, number in zip(active, numbers, strict=True)]

    async def note_playing(self, agent_id: str, vid: str, seat_key: str,
                           until_ms: int) -> None:
        """A seat was handed to the runners with this version: not deleted meanwhile."""
        with driver_errors():
            await self._redis.zadd(keys.version_playing(agent_id, vid), {seat_key: until_ms})

    async def done_playing(self, agent_id: str, vid: str, seat_key: str) -> None:
        """The seat's runner reported it over."""
        with driver_errors():
            await self._redis.zrem(keys.version_playing(agent_id, vid), seat_key)

    async def get(self, agent_id: str, vid: str) -> VersionRecord | None:
        """One version of the agent, None if it has no such version."""
        with driver_errors():
            raw: Any = await self._redis.hgetall(keys.agent_version(agent_id, vid))
        return _record(agent_id, vid, raw) if raw else None

    async def ids(self, agent_id: str) -> list[str]:
        """The agent's version ids, newest first."""
        with driver_errors():
            raw: Any = await self._redis.zrevrange(keys.agent_versions(agent_id), 0, -1)
        return [text(v) for v in raw]

    async def all_of(self, agent_id: str,
                     logs_of: Collection[str] | None = None) -> list[VersionRecord]:
        """The agent's versions, newest first; the build log only of the versions
        in ``logs_of`` (None: of all), so that a long list does not read them all."""
        vids = await self.ids(agent_id)
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for vid in vids:
                if logs_of is None or vid in logs_of:
                    pipe.hgetall(keys.agent_version(agent_id, vid))
                else:
                    pipe.hmget(keys.agent_version(agent_id, vid), LISTED_FIELDS)
            rows = await pipe.execute()
        records = []
        for vid, raw in zip(vids, rows, strict=True):
            if isinstance(raw, list):
                raw = {f.encode(): v for f, v in zip(LISTED_FIELDS, raw, strict=True)
                       if v is not None}
            if raw:
                records.append(_record(agent_id, vid, raw))
        return records

    async def activate(self, agent_id: str, vid: str) -> bool:
        """Make ``vid`` the version the agent's hosted seats run from now on;
        False if the agent has no such version. (The active version is never
        deleted, so one that exists now exists when its seats start.)"""
        with driver_errors():
            done = await self.scripts.run(
                self._redis, self.scripts.version_activate,
                [keys.agent_version(agent_id, vid), keys.agent_active_version(agent_id)], [vid])
        return bool(done)

    async def active_id(self, agent_id: str) -> str | None:
        """The id of the agent's active version, None when none was activated."""
        with driver_errors():
            raw: Any = await self._redis.get(keys.agent_active_version(agent_id))
        return text(raw) if raw else None

    async def active(self, agent_id: str) -> VersionRecord | None:
        """The agent's active version (what a runner starts for its seats)."""
        vid = await self.active_id(agent_id)
        return await self.get(agent_id, vid) if vid else None

    # -- archives ---------------------------------------------------------------------

    async def archive(self, content_hash: str) -> bytes | None:
        """The packed archive with this sha256, None if the store has none. What
        a runner fetches (and caches by the hash) before it starts a version."""
        with driver_errors():
            raw: Any = await self._redis.get(keys.archive(content_hash))
        return bytes(raw) if raw is not None else None

    # -- stats ------------------------------------------------------------------------

    async def record_match(self, agent_id: str, vid: str, report: MatchReport) -> bool:
        """Add one match report to the version's stats; a failed match is also kept
        (newest ``FAILURES_KEPT``) with its stderr tail. False when this report id
        was counted already."""
        failure = ""
        if report.failed:
            first = next((s for s in report.steps if s.failure), None)
            failure = json.dumps(asdict(FailureRecord(
                report.match_id, await self._now_ms(), report.crashes, report.timeouts,
                report.illegal_outputs, report.restarts, _tail_text(report.stderr_tail),
                seat=report.seat, step=first.step if first else 0,
                reason=f"{first.failure}: {first.why}" if first else "")))
        increments = {
            "matches": 1, "decisions": report.decisions,
            "cpu_us": round(report.cpu_ms_total * 1000), "crashes": report.crashes,
            "timeouts": report.timeouts, "illegal_outputs": report.illegal_outputs,
            "restarts": report.restarts}
        args: list[str | int | float] = [vid, report.report_id, report.cpu_ms_max,
                                         FAILURES_KEPT, failure]
        for name, value in increments.items():
            args += [name, value]
        with driver_errors():
            counted = await self.scripts.run(
                self._redis, self.scripts.version_stats,
                [*keys.version_stats(agent_id), keys.version_failures(agent_id, vid)], args)
        return bool(counted)

    async def record_seat_log(self, agent_id: str, log: SeatLogRecord) -> None:
        """Keep a hosted seat's per-decision logs (capped in steps and bytes),
        dropping the agent's oldest beyond ``SEAT_LOGS_KEPT``."""
        steps, room = [], SEAT_LOG_BYTES
        for step in log.steps[:SEAT_LOG_STEPS]:
            text_kept = step.text.encode()[:max(room, 0)].decode(errors="ignore")
            room -= len(text_kept.encode())
            steps.append(asdict(StepLogRecord(step.step, text_kept, step.failure,
                                              step.why[:500])))
        data_key, order_key = keys.seat_logs(agent_id)
        member = f"{log.match_id}:{log.seat}"
        value = json.dumps({"version_id": log.version_id, "steps": steps})
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            pipe.hset(data_key, member, value)
            pipe.zadd(order_key, {member: await self._now_ms()})
            pipe.zrange(order_key, 0, -SEAT_LOGS_KEPT - 1)
            *_, dropped = await pipe.execute()
            if dropped:
                await self._redis.hdel(data_key, *dropped)
                await self._redis.zrem(order_key, *dropped)

    async def seat_logs(self, agent_id: str, match_id: str, seats: int) -> list[SeatLogRecord]:
        """The agent's per-decision logs of its seats (below ``seats``) in a match."""
        data_key, _order = keys.seat_logs(agent_id)
        with driver_errors():
            raw: Any = await self._redis.hmget(data_key,
                                               [f"{match_id}:{s}" for s in range(seats)])
        out = []
        for seat, value in enumerate(raw):
            if value is not None:
                stored = json.loads(value)
                out.append(SeatLogRecord(match_id, seat, stored["version_id"],
                                         [StepLogRecord(**s) for s in stored["steps"]]))
        return out

    async def stats(self, agent_id: str, vids: Sequence[str],
                    failures_of: Collection[str] | None = None) -> dict[str, VersionStats]:
        """Each version's stats added up (zeros for a version never reported on);
        the failures only of the versions in ``failures_of`` (None: of all)."""
        counts_key, cpumax_key, _seen = keys.version_stats(agent_id)
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            for vid in vids:
                pipe.hmget(counts_key, [f"{vid}:{name}" for name in COUNTERS])
                pipe.zscore(cpumax_key, vid)
                if failures_of is None or vid in failures_of:
                    pipe.lrange(keys.version_failures(agent_id, vid), 0, FAILURES_KEPT - 1)
            rows = iter(await pipe.execute())
        out: dict[str, VersionStats] = {}
        for vid in vids:
            counts_raw, cpu_max = next(rows), next(rows)
            failures = next(rows) if failures_of is None or vid in failures_of else []
            counts = dict(zip(COUNTERS, (integer(x) for x in counts_raw), strict=True))
            decisions = counts["decisions"]
            out[vid] = VersionStats(
                matches=counts["matches"], decisions=decisions, crashes=counts["crashes"],
                timeouts=counts["timeouts"], illegal_outputs=counts["illegal_outputs"],
                restarts=counts["restarts"],
                cpu_ms_mean=counts["cpu_us"] / 1000 / decisions if decisions else 0.0,
                cpu_ms_max=float(cpu_max or 0.0),
                failures=[FailureRecord(**json.loads(f)) for f in failures])
        return out

    async def _now_ms(self) -> int:
        """The store's clock (TIME), so that every runner stamps failures alike."""
        with driver_errors():
            seconds, micros = await self._redis.time()
        return int(seconds) * 1000 + int(micros) // 1000
