"""The Hosting service: agents' versions submitted, listed, activated and inspected.

An archive arrives in chunks and is held in memory (at most the packed cap);
``twistarena.hosted.archives`` checks it, decompressing as it counts, in a
thread so that the node's matches go on meanwhile; nothing is ever unpacked
to disk here and no submitted code runs in the server. What is stored, and
how, is ``twistarena.storage.versions``'s.
"""

from __future__ import annotations

import asyncio
import hashlib
import posixpath
import re
import time
from collections.abc import AsyncIterator
from typing import Any, NoReturn

import grpc
from grpc import aio
from prometheus_client import Counter
from twistarena.hosted import archives
from twistarena.hosted.entries import split_entry
from twistarena.storage import VersionRecord, VersionStats, version_id
from twistarena.storage.versions import (
    STDERR_TAIL_BYTES,
    TooManyBytes,
    TooManyVersions,
    VersionActive,
    VersionPlaying,
)
from twistarena.v1 import hosting_pb2 as hpb
from twistarena.v1 import hosting_pb2_grpc as hgrpc
from twistarena.v1 import matchmaking_pb2 as kpb

from .. import auth, logs
from ..config import ServerConfig
from ..errors import is_undecodable, refuse_undecodable
from ..league.agents import Agents
from ..league.arenas import agent_arena_ratings, set_rating
from ..limits import Quotas
from ..match.decisions import DECISION_ID_STRIDE
from ..rpc import api_agent, fail, known_agent, shown

log = logs.get("twistarena.hosting")

VERSIONS = Counter("twistarena_versions_submitted_total",
                   "Versions submitted, by outcome (stored, existing, refused)", ["outcome"])
#: Longest entry and build command.
MAX_COMMAND = 1000
#: A build log keeps its last this many bytes.
BUILD_LOG_BYTES = 64 * 1024
#: Shortest version id prefix ActivateVersion accepts.
MIN_PREFIX = 6
#: Versions whose build log and failures an answer carries (the newest; and the
#: active one): at most 6 x (64 KiB log + 5 x 64 KiB stderr), about 2.3 MiB.
PRIVATE_VERSIONS = 5
#: Archives checked at once on one node (each costs a core while it runs).
CHECKS_AT_ONCE = 2
HEX = re.compile(r"[0-9a-f]+")


class Hosting(hgrpc.HostingServicer):
    """Versions of hosted agents: SubmitVersion, ListVersions, ActivateVersion,
    GetAgentDetails."""

    def __init__(self, config: ServerConfig, agents: Agents, quotas: Quotas) -> None:
        self.config = config
        self.agents = agents
        self.versions = agents.store.versions
        self.quotas = quotas
        self.checks = asyncio.Semaphore(CHECKS_AT_ONCE)

    async def SubmitVersion(self, request_iterator: AsyncIterator[hpb.SubmitVersionChunk],
                            context: aio.ServicerContext[Any, Any],
                            ) -> hpb.SubmitVersionResponse:
        """Receive, check and store a new version of the calling agent."""
        # The first message is read first, so that an undecodable stream is
        # INVALID_ARGUMENT like any undecodable request; the archive only after the token.
        chunks = aiter(request_iterator)
        first = await anext(chunks, None)
        if is_undecodable(first):
            await refuse_undecodable(context)
        agent_id = await api_agent(context, self.agents.by_token, "SubmitVersion")
        await self.quotas.admit_creation(context, makes_match=False)
        try:
            manifest, data = await self._receive(first, chunks, context)
            async with self.checks:
                summary = await asyncio.to_thread(archives.inspect, data,
                                                  self.config.version_caps)
        except archives.ArchiveTooLarge as exc:
            await _refuse(context, agent_id, grpc.StatusCode.RESOURCE_EXHAUSTED,
                          "ARCHIVE_TOO_LARGE", f"{exc} (serve --version-max-packed-mb/"
                          "--version-max-unpacked-mb/--version-max-files)")
        except archives.ArchiveRefused as exc:
            await _refuse(context, agent_id, grpc.StatusCode.INVALID_ARGUMENT,
                          "ARCHIVE_REFUSED", str(exc))
        missing = _missing_program(manifest.entry, summary)
        if missing:
            await _refuse(context, agent_id, grpc.StatusCode.INVALID_ARGUMENT,
                          "ENTRY_NOT_IN_ARCHIVE",
                          f"the entry command starts {shown(missing)}, which the archive "
                          "does not hold (the entry runs in the archive's top directory)")
        content_hash = hashlib.sha256(data).hexdigest()
        vid = version_id(content_hash, manifest.entry, manifest.build)
        most = self.config.max_versions_per_agent
        # Asked first so that a refused archive is not stored; put() asks again, atomically.
        if await self.versions.get(agent_id, vid) is None and \
                len(await self.versions.ids(agent_id)) >= most:
            await _too_many(context, agent_id, most)
        log_bytes = manifest.build_log.encode()[-BUILD_LOG_BYTES:]
        record = VersionRecord(
            agent_id, vid, content_hash, manifest.entry, manifest.build,
            log_bytes.decode("utf-8", "ignore"), len(data), summary.unpacked, summary.files,
            int(time.time() * 1000))
        try:
            stored, created = await self.versions.put(
                record, data, most, self.config.agent_max_archive_bytes,
                self.config.store_max_archive_bytes)
        except TooManyVersions:
            await _too_many(context, agent_id, most)
        except TooManyBytes as exc:
            await _refuse(context, agent_id, grpc.StatusCode.RESOURCE_EXHAUSTED,
                          "TOO_MANY_BYTES", f"{exc} (serve --agent-max-archive-mb/"
                          "--store-max-archive-mb; twistarena agent versions delete frees "
                          "room)")
        if manifest.activate or await self.versions.active_id(agent_id) is None:
            await self.versions.activate(agent_id, vid)
        VERSIONS.labels("stored" if created else "existing").inc()
        log.info("version_submitted", agent_id=agent_id, version_id=vid, created=created,
                 size=len(data), unpacked=summary.unpacked, files=summary.files)
        active = await self.versions.active_id(agent_id)
        stats = await self.versions.stats(agent_id, [vid])
        return hpb.SubmitVersionResponse(
            version=_info(stored, active, stats[vid], private=True), created=created)

    async def _receive(self, first: hpb.SubmitVersionChunk | None,
                       chunks: AsyncIterator[hpb.SubmitVersionChunk],
                       context: aio.ServicerContext[Any, Any],
                       ) -> tuple[hpb.VersionManifest, bytes]:
        """The manifest and the archive's bytes, refused as soon as they exceed the cap."""
        cap = self.config.version_caps.packed
        if first is None or first.WhichOneof("part") != "manifest":
            await _malformed(context, "the first message of SubmitVersion must be the manifest")
        manifest = first.manifest
        await _check_manifest(context, manifest)
        if manifest.size > cap:
            raise archives.ArchiveTooLarge(
                f"the archive has {manifest.size} bytes packed; the cap is {cap}")
        data = bytearray()
        async for chunk in chunks:
            if is_undecodable(chunk):
                await refuse_undecodable(context)
            if chunk.WhichOneof("part") != "data":
                await _malformed(context, "the manifest comes once, in the first message")
            data += chunk.data
            if len(data) > cap:
                raise archives.ArchiveTooLarge(
                    f"the archive has more than {cap} bytes packed; the cap is {cap}")
        return manifest, bytes(data)

    async def ListVersions(self, request: hpb.ListVersionsRequest,
                           context: aio.ServicerContext[Any, Any],
                           ) -> hpb.ListVersionsResponse:
        """The calling agent's versions, private parts included."""
        agent_id = await api_agent(context, self.agents.by_token, "ListVersions")
        return hpb.ListVersionsResponse(agent_id=agent_id,
                                        versions=await self._infos(agent_id, private=True))

    async def ActivateVersion(self, request: hpb.ActivateVersionRequest,
                              context: aio.ServicerContext[Any, Any],
                              ) -> hpb.ActivateVersionResponse:
        """Make a version (by id or unique prefix) the one the agent's seats run."""
        agent_id = await api_agent(context, self.agents.by_token, "ActivateVersion")
        vid = await self._version_of(context, agent_id, request.version_id)
        if not await self.versions.activate(agent_id, vid):
            await _unknown_version(context, agent_id, vid)
        log.info("version_activated", agent_id=agent_id, version_id=vid)
        record = await self.versions.get(agent_id, vid)
        assert record is not None  # the active version is never deleted
        stats = await self.versions.stats(agent_id, [vid])
        return hpb.ActivateVersionResponse(version=_info(record, vid, stats[vid], private=True))

    async def DeleteVersion(self, request: hpb.DeleteVersionRequest,
                            context: aio.ServicerContext[Any, Any],
                            ) -> hpb.DeleteVersionResponse:
        """Delete a version no seat needs (not the active one, none playing it):
        its bytes leave the agent's count, its archive goes with its last version."""
        agent_id = await api_agent(context, self.agents.by_token, "DeleteVersion")
        vid = await self._version_of(context, agent_id, request.version_id)
        try:
            deleted = await self.versions.delete(agent_id, vid, int(time.time() * 1000))
        except VersionActive:
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "VERSION_ACTIVE",
                       f"version {vid[:12]} is the active one: activate another first")
        except VersionPlaying as exc:
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "VERSION_PLAYING",
                       f"{exc}; delete it once its matches are over")
        if deleted is None:
            await _unknown_version(context, agent_id, vid)
        log.info("version_deleted", agent_id=agent_id, version_id=vid, size=deleted.size,
                 archive_freed=deleted.archive_freed)
        return hpb.DeleteVersionResponse(version_id=vid, size=deleted.size,
                                         archive_freed=deleted.archive_freed)

    async def _version_of(self, context: aio.ServicerContext[Any, Any], agent_id: str,
                          given: str) -> str:
        """The agent's version id that ``given`` (an id or a unique prefix) names."""
        prefix = given.strip().lower()
        if len(prefix) < MIN_PREFIX or not HEX.fullmatch(prefix):
            await _malformed(context, f"a version id is hex; give at least {MIN_PREFIX} "
                             f"digits of one (got {shown(given)})")
        found = [vid for vid in await self.versions.ids(agent_id) if vid.startswith(prefix)]
        if not found:
            await _unknown_version(context, agent_id, prefix)
        if len(found) > 1:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "AMBIGUOUS_VERSION",
                       f"{shown(prefix)} starts {len(found)} versions; give more digits")
        return found[0]

    async def GetAgentDetails(self, request: hpb.GetAgentDetailsRequest,
                              context: aio.ServicerContext[Any, Any]) -> hpb.AgentDetails:
        """An agent with its versions and stats; private parts for its owner only."""
        record = await known_agent(context, self.agents, request.agent_id)
        token = auth.bearer(context.invocation_metadata())
        owner = bool(token) and await self.agents.by_token(token) == record.agent_id
        rated = kpb.AgentInfo()
        set_rating(rated, await agent_arena_ratings(self.agents.store, record.agent_id, False))
        return hpb.AgentDetails(
            agent_id=record.agent_id, name=record.name, mu=rated.mu, sigma=rated.sigma,
            matches=rated.matches,
            active_version_id=await self.versions.active_id(record.agent_id) or "",
            versions=await self._infos(record.agent_id, private=owner), owner=owner)

    async def GetSeatLogs(self, request: hpb.GetSeatLogsRequest,
                          context: aio.ServicerContext[Any, Any]) -> hpb.SeatLogs:
        """The calling agent's own seats' per-decision logs in a match (no one
        else's: the token names the agent whose logs are read)."""
        agent_id = await api_agent(context, self.agents.by_token, "GetSeatLogs")
        found = await self.versions.seat_logs(agent_id, request.match_id[:200],
                                              DECISION_ID_STRIDE)
        if not found:
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_MATCH",
                       f"agent {agent_id} has no seat log in match {shown(request.match_id)}")
        return hpb.SeatLogs(match_id=request.match_id, seats=[hpb.SeatLog(
            seat=s.seat, version_id=s.version_id, steps=[
                hpb.StepLog(step=t.step, text=t.text, failure=t.failure, why=t.why)
                for t in s.steps]) for s in found])

    async def _infos(self, agent_id: str, private: bool) -> list[hpb.VersionInfo]:
        """The agent's versions as messages, newest first; the private parts (when
        ``private``) of the newest few and the active one only, so that an answer
        stays far below the message caps whatever the number of versions."""
        active = await self.versions.active_id(agent_id)
        shown: set[str] = set()
        if private:
            shown = {*(await self.versions.ids(agent_id))[:PRIVATE_VERSIONS], active or ""}
        records = await self.versions.all_of(agent_id, logs_of=shown)
        stats = await self.versions.stats(agent_id, [r.version_id for r in records],
                                          failures_of=shown)
        return [_info(r, active, stats[r.version_id], r.version_id in shown)
                for r in records]


async def _refuse(context: aio.ServicerContext[Any, Any], agent_id: str,
                  code: grpc.StatusCode, reason: str, why: str) -> NoReturn:
    """Refuse a submission: counted, logged, and the caller told why."""
    VERSIONS.labels("refused").inc()
    log.info("version_refused", agent_id=agent_id, reason=reason, why=why)
    await fail(context, code, reason, why)


async def _too_many(context: aio.ServicerContext[Any, Any], agent_id: str,
                    most: int) -> NoReturn:
    await _refuse(context, agent_id, grpc.StatusCode.RESOURCE_EXHAUSTED, "TOO_MANY_VERSIONS",
                  f"agent {agent_id} has {most} versions, the most one agent may keep "
                  "(serve --version-max-per-agent)")


async def _unknown_version(context: aio.ServicerContext[Any, Any], agent_id: str,
                           vid: str) -> NoReturn:
    await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_VERSION",
               f"agent {agent_id} has no version {shown(vid)} "
               "(twistarena agent versions lists them)")


async def _malformed(context: aio.ServicerContext[Any, Any], why: str) -> NoReturn:
    await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", why)


async def _check_manifest(context: aio.ServicerContext[Any, Any],
                          manifest: hpb.VersionManifest) -> None:
    """An entry command a runner can start: 1-1000 characters, shell-like words."""
    entry = manifest.entry
    if not entry.strip() or len(entry) > MAX_COMMAND or "\x00" in entry:
        await _malformed(context, f"the entry command has 1-{MAX_COMMAND} characters "
                         "(e.g. 'python3 bot.py')")
    try:
        program = split_entry(entry)[1]
    except ValueError as exc:
        await _malformed(context, f"the entry command {shown(entry)} does not split into "
                         f"words: {exc}")
    if not program:
        await _malformed(context, f"the entry command {shown(entry)} names no program")
    if len(manifest.build) > MAX_COMMAND:
        await _malformed(context, f"the build command has at most {MAX_COMMAND} characters")


def _missing_program(entry: str, summary: archives.Summary) -> str:
    """The entry's program when it is a path into the archive (``./bot``,
    ``bin/run``) that the archive lacks; '' otherwise (``python3 bot.py``)."""
    program = split_entry(entry)[1][0]
    if "/" not in program or program.startswith("/"):
        return ""
    name = posixpath.normpath(program)
    held = {e.name for e in summary.entries if e.kind != "dir"}
    return "" if name in held else program


def _info(record: VersionRecord, active: str | None, stats: VersionStats,
          private: bool) -> hpb.VersionInfo:
    """A version as the contract shows it; build log and failures only when private."""
    failures = [hpb.VersionFailure(
        match_id=f.match_id, at_ms=f.at_ms, crashes=f.crashes, timeouts=f.timeouts,
        illegal_outputs=f.illegal_outputs, restarts=f.restarts,
        stderr_tail=f.stderr_tail[-STDERR_TAIL_BYTES:], seat=f.seat, step=f.step,
        reason=f.reason) for f in stats.failures] if private else []
    return hpb.VersionInfo(
        version_id=record.version_id, content_hash=record.content_hash, entry=record.entry,
        build=record.build, size=record.size, unpacked_size=record.unpacked,
        files=record.files, created_ms=record.created_ms,
        active=record.version_id == active,
        stats=hpb.VersionStats(
            matches=stats.matches, decisions=stats.decisions, crashes=stats.crashes,
            timeouts=stats.timeouts, illegal_outputs=stats.illegal_outputs,
            restarts=stats.restarts, cpu_ms_mean=stats.cpu_ms_mean,
            cpu_ms_max=stats.cpu_ms_max, failures=failures),
        build_log=record.build_log if private else "")
