"""The author's console: sign in with an agent's api token and do in the browser
what ``twistarena submit`` and ``twistarena agent ...`` do in a terminal.

Every call upstream carries the signed-in agent's own token, so the node
decides what the author may see and change, exactly as for the CLI; this
module only holds the session (``sessions``) and turns forms into calls. What
is private (versions' build logs and failures, seat logs) is served only under
``/console/api/`` and only with a live session; every request that changes
something passes the CSRF and origin checks first.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Any

import grpc
import structlog
from aiohttp import BodyPartReader, web
from twistarena import engine
from twistarena.clients.sdk import AgentError
from twistarena.clients.sdk.arenas import ArenaLadderClient
from twistarena.clients.sdk.matchmaking import get_agent, practice, register_agent
from twistarena.clients.sdk.versions import VersionClient, seat_logs_json
from twistarena.hosted.archives import (
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_PACKED,
    DEFAULT_MAX_UNPACKED,
    ArchiveRefused,
    archive_format,
    pack_directory,
)
from twistarena.v1 import hosting_pb2

from .app import api, page
from .gateway import Gateway
from .sessions import (
    COOKIE,
    REGISTERS_PER_HOUR,
    AttemptLimiter,
    Session,
    SessionStore,
    clear_cookie,
    csrf_ok,
    same_origin,
    set_cookie,
)

log = structlog.get_logger("twistarena.web.console")

#: The house ladder's rungs a practice match may be played against, weakest first.
STRENGTHS = ("random", "heuristic", "ismcts-fast", "ismcts", "ismcts-strong")
JSON = dict[str, Any]


class Console:
    """The console's state: the gateway's servers, the sessions, the sign-in limits."""

    def __init__(self, gateway: Gateway, sessions: SessionStore | None = None,
                 limiter: AttemptLimiter | None = None) -> None:
        self.gateway = gateway
        self.sessions = sessions or SessionStore()
        self.limiter = limiter or AttemptLimiter()
        self.registers = AttemptLimiter(attempts=REGISTERS_PER_HOUR, window_s=3600.0)

    @property
    def tls(self) -> dict[str, Any]:
        return {"root_cert": self.gateway.root_cert, "tls": self.gateway.tls}

    def versions(self, session: Session) -> VersionClient:
        return VersionClient(",".join(self.gateway.servers), api_token=session.token,
                             **self.tls)

    def ladder(self, session: Session) -> ArenaLadderClient:
        return ArenaLadderClient(self.gateway.servers, admin_token=session.token, **self.tls)


CONSOLE = web.AppKey("console", Console)


class Refused(Exception):
    """A console request turned down here (not upstream): its HTTP status and why."""

    def __init__(self, status: int, error: str) -> None:
        super().__init__(error)
        self.status = status


def console_of(request: web.Request) -> Console:
    return request.app[CONSOLE]


def session_of(request: web.Request) -> Session:
    """The request's live session; 401 without one."""
    session = console_of(request).sessions.get(request.cookies.get(COOKIE))
    if session is None:
        raise Refused(401, "sign in first: your session is missing, expired or signed out")
    return session


async def checked_form(request: web.Request) -> tuple[Session, dict[str, str]]:
    """A state-changing request's session and fields, once its CSRF token and
    origin are checked (403 otherwise)."""
    session = session_of(request)
    fields = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    if not csrf_ok(request, session, fields.get("csrf")):
        raise Refused(403, "refused: the form's CSRF token or origin is not this site's")
    return session, fields


def guarded(handler: Callable[[web.Request], Awaitable[Any]]
            ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A console handler: as an ``/api`` one, and a refusal here as its HTTP status."""
    async def refusing(request: web.Request) -> Any:
        try:
            return await handler(request)
        except Refused as refused:
            return web.json_response({"error": str(refused)}, status=refused.status)
        except ArchiveRefused as error:
            return web.json_response({"error": f"archive refused: {error}",
                                      "reason": "ARCHIVE_REFUSED"}, status=400)
    return api(refusing)


# -- signing in and out ----------------------------------------------------------


def signin_allowed(request: web.Request) -> None:
    """Sign-in and registration: from this site's own page, within the address's limit."""
    if not same_origin(request):
        raise Refused(403, "refused: the form comes from another site")
    if not console_of(request).limiter.allow(request.remote or "?"):
        raise Refused(429, "too many sign-in attempts from your address; wait a minute")


def signed_in(request: web.Request, agent_id: str, token: str, **extra: Any) -> web.Response:
    """Open a session for the agent and answer with its cookie (never the token)."""
    console = console_of(request)
    console.sessions.close(request.cookies.get(COOKIE))
    sid, session = console.sessions.open(agent_id, token)
    response = web.json_response({"agent_id": agent_id, "csrf": session.csrf, **extra})
    set_cookie(request, response, sid, console.sessions.ttl_s)
    log.info("console_signed_in", agent_id=agent_id, sessions=len(console.sessions))
    return response


@guarded
async def signin(request: web.Request) -> web.Response:
    signin_allowed(request)
    token = str((await request.post()).get("token", "")).strip()
    if not token or len(token) > 200:
        raise Refused(400, "paste the agent's api token")
    session = Session("", token, 0.0)
    try:
        listed = await console_of(request).versions(session).versions()
    except AgentError as error:
        if error.code == grpc.StatusCode.UNAUTHENTICATED:
            raise Refused(401, "that is not an agent's api token") from error
        raise
    return signed_in(request, listed.agent_id, token)


@guarded
async def register(request: web.Request) -> web.Response:
    signin_allowed(request)
    if not console_of(request).registers.allow(request.remote or "?"):
        raise Refused(429, f"at most {REGISTERS_PER_HOUR} agents registered an hour "
                           "from your address; wait")
    name = str((await request.post()).get("name", "")).strip()
    try:
        agent_id, token = await register_agent(console_of(request).gateway.servers, name,
                                               **console_of(request).tls)
    except AgentError as error:
        if error.code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
            raise Refused(403, "this server registers agents only with its admin token "
                              "(twistarena agent register --admin-token; its host may "
                              "open registration: serve --open-registration)") from error
        raise
    return signed_in(request, agent_id, token, api_token=token)


@guarded
async def signout(request: web.Request) -> web.Response:
    await checked_form(request)
    console_of(request).sessions.close(request.cookies.get(COOKIE))
    response = web.json_response({"signed_out": True})
    clear_cookie(request, response)
    return response


# -- my agent ----------------------------------------------------------------------


def version_json(v: hosting_pb2.VersionInfo, number: int) -> JSON:
    s = v.stats
    return {"version_id": v.version_id, "number": number, "active": v.active,
            "created_ms": v.created_ms, "entry": v.entry, "build": v.build, "size": v.size,
            "unpacked_size": v.unpacked_size, "files": v.files, "build_log": v.build_log,
            "matches": s.matches, "decisions": s.decisions, "crashes": s.crashes,
            "timeouts": s.timeouts, "illegal_outputs": s.illegal_outputs,
            "restarts": s.restarts, "cpu_ms_mean": round(s.cpu_ms_mean, 3),
            "cpu_ms_max": round(s.cpu_ms_max, 3)}


def failures_json(versions: list[hosting_pb2.VersionInfo]) -> list[JSON]:
    """Every failed match the node keeps for the agent's versions, newest first."""
    out = [{"match_id": f.match_id, "at_ms": f.at_ms, "version_id": v.version_id,
            "number": len(versions) - i, "seat": f.seat, "step": f.step,
            "reason": f.reason or ("restarted" if f.restarts else "failed"),
            "crashes": f.crashes, "timeouts": f.timeouts,
            "illegal_outputs": f.illegal_outputs, "restarts": f.restarts,
            "stderr_tail": f.stderr_tail[-4000:]}
           for i, v in enumerate(versions) for f in v.stats.failures]
    return sorted(out, key=lambda f: -f["at_ms"])


@guarded
async def me(request: web.Request) -> JSON:
    """The signed-in agent: versions, failures first, arenas with its ratings."""
    session = session_of(request)
    console = console_of(request)
    listed, info, arenas = await asyncio.gather(
        console.versions(session).versions(),
        get_agent(console.gateway.servers, session.agent_id, **console.tls),
        console.gateway.ladder.list())
    versions = list(listed.versions)
    enrolled = set(info.enrolled_arenas)
    ratings: dict[str, list[JSON]] = {}
    for r in info.arena_ratings:
        ratings.setdefault(r.arena_id, []).append(
            {"version": r.version, "mu": r.mu, "sigma": r.sigma,
             "conservative": r.mu - 3 * r.sigma, "games": r.games, "wins": r.wins})
    return {
        "agent_id": session.agent_id, "name": info.name, "csrf": session.csrf,
        "versions": [version_json(v, len(versions) - i) for i, v in enumerate(versions)],
        "failures": failures_json(versions),
        "arenas": [{"arena_id": a.arena_id, "game_id": a.game_id,
                    "num_players": a.num_players, "enrolled": a.arena_id in enrolled,
                    "ratings": ratings.get(a.arena_id, [])} for a in arenas],
        "games": [{"game_id": g, "name": engine.game(g).name} for g in engine.GAME_IDS],
        "strengths": list(STRENGTHS),
    }


async def session_state(request: web.Request) -> web.Response:
    """Whether this browser is signed in (pages ask before calling what needs it)."""
    session = console_of(request).sessions.get(request.cookies.get(COOKIE))
    return web.json_response({"signed_in": session is not None,
                              "agent_id": session.agent_id if session else ""})


@guarded
async def activate(request: web.Request) -> JSON:
    session, fields = await checked_form(request)
    version = await console_of(request).versions(session).activate(fields.get("version_id", ""))
    return {"version_id": version.version_id, "active": version.active}


#: The node's refusals of DeleteVersion, said as what to do about them.
DELETE_REFUSALS = {
    "VERSION_ACTIVE": "this is the active version: activate another one first, then delete it",
    "VERSION_PLAYING": "this version is still playing matches: delete it once they are over",
}


@guarded
async def delete_version(request: web.Request) -> JSON:
    session, fields = await checked_form(request)
    try:
        done = await console_of(request).versions(session).delete(fields.get("version_id", ""))
    except AgentError as error:
        if error.reason in DELETE_REFUSALS:
            raise Refused(409, DELETE_REFUSALS[error.reason]) from error
        raise
    return {"version_id": done.version_id, "size": done.size,
            "archive_freed": done.archive_freed}


@guarded
async def enroll(request: web.Request) -> JSON:
    session, fields = await checked_form(request)
    withdraw = fields.get("withdraw", "") == "1"
    done = await console_of(request).ladder(session).enroll(
        fields.get("arena_id", ""), session.agent_id, withdraw=withdraw)
    return {"arena_id": done.arena.arena_id, "enrolled": done.enrolled}


@guarded
async def start_practice(request: web.Request) -> JSON:
    session, fields = await checked_form(request)
    game = fields.get("game_id", "")
    strength = fields.get("strength", "heuristic")
    created = await practice(console_of(request).gateway.servers, game, strength=strength,
                             api_token=session.token, hosted=True, **console_of(request).tls)
    return {"match_id": created.match.match_id, "seat": created.seat}


@guarded
async def seat_logs(request: web.Request) -> JSON:
    """The signed-in agent's own seats' logs in a match, step by step."""
    session = session_of(request)
    return seat_logs_json(await console_of(request).versions(session).seat_logs(
        request.match_info["match_id"]))


# -- uploading a version -------------------------------------------------------------


class Upload:
    """What an upload form brought: its fields, and an archive or a folder's files."""

    def __init__(self) -> None:
        self.fields: dict[str, str] = {}
        self.archive = b""
        self.files: list[tuple[str, bytes]] = []
        #: Each file's path in the folder, sent before it (a part's file name may
        #: come percent-encoded, and names no folder).
        self.paths: list[str] = []
        self.unpacked = 0

    async def read(self, request: web.Request) -> None:
        """Read the multipart body within the caps ``submit`` has (413 beyond them)."""
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader) or part.name is None:
                continue
            if part.name == "archive" and part.filename:
                self.archive = await self._bytes(part, DEFAULT_MAX_PACKED,
                                                 "a packed archive has at most")
            elif part.name == "files" and part.filename:
                if len(self.files) >= DEFAULT_MAX_FILES:
                    raise Refused(413, f"a folder has at most {DEFAULT_MAX_FILES} files")
                data = await self._bytes(part, DEFAULT_MAX_UNPACKED - self.unpacked,
                                         "a folder's files together have at most")
                self.unpacked += len(data)
                index = len(self.files)
                self.files.append((self.paths[index] if index < len(self.paths)
                                   else part.filename, data))
            elif part.name == "path" and len(self.paths) < DEFAULT_MAX_FILES:
                self.paths.append((await part.read(decode=True))[:4096].decode(
                    errors="replace"))
            elif len(self.fields) < 20:
                self.fields[part.name] = (await part.read(decode=True))[:4000].decode(
                    errors="replace")

    @staticmethod
    async def _bytes(part: BodyPartReader, most: int, what: str) -> bytes:
        data = bytearray()
        while chunk := await part.read_chunk(64 * 1024):
            data += chunk
            if len(data) > most:
                raise Refused(413, f"too large: {what} {DEFAULT_MAX_PACKED // 2**20} MiB "
                                  "packed, 50 MiB unpacked")
        return bytes(data)

    def packed(self) -> bytes:
        """The archive to submit: the one uploaded as it is, or the folder packed
        exactly as ``twistarena submit DIR`` packs one."""
        if self.archive:
            archive_format(self.archive)  # a .tar.gz or .zip, nothing else
            return self.archive
        if not self.files:
            raise ArchiveRefused("choose an archive or a folder")
        names = [folder_path(name) for name, _ in self.files]
        # The picked folder's own name leads every path: the version holds its content.
        tops = {n.parts[0] for n in names}
        strip = len(tops) == 1 and all(len(n.parts) > 1 for n in names)
        with tempfile.TemporaryDirectory(prefix="twistarena-upload-") as scratch:
            root = Path(scratch)
            for name, (_, data) in zip(names, self.files, strict=True):
                target = root.joinpath(*(name.parts[1:] if strip else name.parts))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            return pack_directory(root)


def folder_path(raw: str) -> PurePosixPath:
    """A file's path inside the picked folder; refused if it could leave it."""
    path = PurePosixPath(raw)
    if (not raw or "\x00" in raw or "\\" in raw or path.is_absolute()
            or any(p in ("", ".", "..") for p in path.parts)):
        raise ArchiveRefused(f"{raw!r}: not a path inside the folder")
    return path


@guarded
async def upload(request: web.Request) -> JSON:
    """A new version from an uploaded archive or folder: the same checks and caps
    as ``twistarena submit`` (the node checks the archive again)."""
    session = session_of(request)
    if not same_origin(request):
        raise Refused(403, "refused: the form comes from another site")
    form = Upload()
    await form.read(request)
    if not csrf_ok(request, session, form.fields.get("csrf")):
        raise Refused(403, "refused: the form's CSRF token or origin is not this site's")
    archive = await asyncio.to_thread(form.packed)
    stored = await console_of(request).versions(session).submit(
        archive, form.fields.get("entry", ""), activate=form.fields.get("activate") == "1")
    log.info("console_version_uploaded", agent_id=session.agent_id,
             version_id=stored.version.version_id, created=stored.created)
    return {"created": stored.created, "version": version_json(stored.version, 0)}


async def console_page(request: web.Request) -> web.Response:
    return page("Console", '<p class="loading">loading your console...</p>', "console.js")


def install(app: web.Application, gateway: Gateway) -> None:
    """Add the console's pages and calls to the web face."""
    app[CONSOLE] = Console(gateway)
    app.router.add_get("/console", console_page)
    app.router.add_get("/console/api/me", me)
    app.router.add_get("/console/api/session", session_state)
    app.router.add_get("/console/api/matches/{match_id}/logs", seat_logs)
    app.router.add_post("/console/api/signin", signin)
    app.router.add_post("/console/api/register", register)
    app.router.add_post("/console/api/signout", signout)
    app.router.add_post("/console/api/versions", upload)
    app.router.add_post("/console/api/activate", activate)
    app.router.add_post("/console/api/delete-version", delete_version)
    app.router.add_post("/console/api/enroll", enroll)
    app.router.add_post("/console/api/practice", start_practice)
