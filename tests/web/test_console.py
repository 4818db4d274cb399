"""The console's sessions over real HTTP against a real node: the cookie holds a
random id (never the token), forms from another site and forms without the
session's CSRF token are refused, nothing private is served without a live
session, a session sees its own agent's seat logs only, sign-in attempts are
limited per address, and an uploaded folder is packed as ``submit`` packs one."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.versions import VersionClient
from twistarena.clients.web.console import CONSOLE, Console
from twistarena.clients.web.sessions import COOKIE, REGISTERS_PER_HOUR, SIGNIN_ATTEMPTS
from twistarena.hosted.archives import pack_directory
from twistarena.storage import Holder, Store
from twistarena.storage.versions import SeatLogRecord, StepLogRecord

from tests.support.agents import run
from tests.support.server import InProcessServer


@contextlib.asynccontextmanager
async def console_app(target: str) -> AsyncIterator[tuple[str, web.Application]]:
    """The web face on a free port, with its application (to reach the sessions)."""
    from twistarena.clients.web.app import make_app
    from twistarena.clients.web.gateway import Gateway

    gateway = Gateway(target)
    app = make_app(gateway)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        await gateway.close()
        await runner.cleanup()


@pytest.fixture(scope="module")
def site(server: InProcessServer) -> Iterator[tuple[str, web.Application]]:
    stack = contextlib.AsyncExitStack()
    found = server.call(stack.enter_async_context(console_app(server.target)))
    try:
        yield found
    finally:
        server.call(stack.aclose())


@pytest.fixture(autouse=True)
def fresh_limits(site: tuple[str, web.Application]) -> None:
    """Every test signs in from 127.0.0.1: each starts with the address's attempts unused."""
    site[1][CONSOLE].limiter._seen.clear()
    site[1][CONSOLE].registers._seen.clear()


class Browser:
    """An HTTP client that keeps the console's cookie itself (and shows it)."""

    def __init__(self, url: str, http: aiohttp.ClientSession) -> None:
        self.url = url
        self.http = http
        self.sid = ""
        self.csrf = ""
        self.set_cookie = ""

    def headers(self, origin: str | None) -> dict[str, str]:
        out = {"Cookie": f"{COOKIE}={self.sid}"} if self.sid else {}
        if origin is not None:
            out["Origin"] = origin
        return out

    async def post(self, path: str, fields: dict[str, str], *, origin: str | None = "",
                   csrf: bool = True) -> tuple[int, dict[str, Any]]:
        data = dict(fields, csrf=self.csrf) if csrf and self.csrf else dict(fields)
        async with self.http.post(self.url + path, data=data,
                                  headers=self.headers(self.url if origin == "" else origin)
                                  ) as response:
            cookie = response.headers.get("Set-Cookie", "")
            if cookie:
                self.set_cookie = cookie
                self.sid = response.cookies[COOKIE].value if COOKIE in response.cookies else ""
            return response.status, await response.json()

    async def get(self, path: str) -> tuple[int, Any]:
        async with self.http.get(self.url + path, headers=self.headers(None)) as response:
            return response.status, await response.json()

    async def sign_in(self, token: str) -> dict[str, Any]:
        status, body = await self.post("/console/api/signin", {"token": token})
        assert status == 200, body
        self.csrf = body["csrf"]
        return body


async def two_agents(target: str) -> tuple[tuple[str, str], tuple[str, str]]:
    return (await register_agent(target, "owner-" + secrets.token_hex(3)),
            await register_agent(target, "other-" + secrets.token_hex(3)))


def test_the_console_bounds_each_address_registrations_itself(
        site: tuple[str, web.Application]) -> None:
    """The node sees only the console's address; the console counts each visitor's."""
    url, _app = site

    async def scenario() -> list[int]:
        async with aiohttp.ClientSession() as http:
            me = Browser(url, http)
            statuses = []
            for i in range(REGISTERS_PER_HOUR + 1):
                status, body = await me.post("/console/api/register",
                                             {"name": f"visitor-{i}"})
                statuses.append(status)
                if status == 200:
                    assert body["api_token"] and body["agent_id"]
            return statuses

    assert run(scenario()) == [200] * REGISTERS_PER_HOUR + [429]


def test_the_cookie_is_a_strict_httponly_session_id_never_the_token(
        site: tuple[str, web.Application], server: InProcessServer) -> None:
    url, _app = site

    async def scenario() -> None:
        (agent, token), _ = await two_agents(server.target)
        async with aiohttp.ClientSession() as http:
            me = Browser(url, http)
            body = await me.sign_in(token)
            assert body["agent_id"] == agent and token not in str(body)
            cookie = me.set_cookie.lower()
            assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
            assert "secure" not in cookie  # plain http here; under TLS it is Secure
            assert token not in me.set_cookie and me.sid and token not in me.sid
            status, mine = await me.get("/console/api/me")
            assert status == 200 and mine["agent_id"] == agent and token not in str(mine)
            # Under TLS (ended by a proxy that says so) the cookie is Secure.
            https = "https://" + url.removeprefix("http://")
            async with http.post(url + "/console/api/signin", data={"token": token},
                                 headers={"Origin": https, "X-Forwarded-Proto": "https"}
                                 ) as response:
                assert response.status == 200
                assert "secure" in response.headers["Set-Cookie"].lower()

    run(scenario())


def test_cross_site_forms_and_forms_without_the_csrf_token_are_refused(
        site: tuple[str, web.Application], server: InProcessServer, tmp_path: Path) -> None:
    url, _app = site

    async def scenario() -> None:
        (_agent, token), _ = await two_agents(server.target)
        (tmp_path / "bot.py").write_text("print(1)\n")
        client = VersionClient(server.target, api_token=token)
        await client.submit(pack_directory(tmp_path), "python3 bot.py")
        (tmp_path / "bot.py").write_text("print(2)\n")
        second = await client.submit(pack_directory(tmp_path), "python3 bot.py")
        vid = second.version.version_id
        async with aiohttp.ClientSession() as http:
            me = Browser(url, http)
            status, _ = await me.post("/console/api/signin", {"token": token},
                                      origin="http://evil.example")
            assert status == 403 and not me.sid  # a sign-in form on another site
            await me.sign_in(token)
            for origin, csrf in (("http://evil.example", True), ("", False)):
                status, body = await me.post("/console/api/activate", {"version_id": vid},
                                             origin=origin, csrf=csrf)
                assert status == 403, body
            assert not (await client.versions()).versions[0].active
            status, body = await me.post("/console/api/activate", {"version_id": vid})
            assert status == 200 and body["active"]
            assert (await client.versions()).versions[0].active

    run(scenario())


def test_delete_a_version_and_say_why_the_node_refuses(
        site: tuple[str, web.Application], server: InProcessServer, valkey: Any,
        tmp_path: Path) -> None:
    url, _app = site

    async def scenario() -> None:
        (agent, token), _ = await two_agents(server.target)
        client = VersionClient(server.target, api_token=token)
        vids = []
        for text in ("print(1)\n", "print(2)\n", "print(3)\n"):
            (tmp_path / "bot.py").write_text(text)
            vids.append((await client.submit(pack_directory(tmp_path), "python3 bot.py")
                         ).version.version_id)
        active, playing, idle = vids  # the first became active by itself
        store = Store(valkey.url, Holder("node-t", "", 2000))
        await store.connect()
        try:
            await store.versions.note_playing(agent, playing, "seat-x", 2**62)
        finally:
            await store.close()
        async with aiohttp.ClientSession() as http:
            me = Browser(url, http)
            await me.sign_in(token)
            for origin, csrf in (("http://evil.example", True), ("", False)):
                status, body = await me.post("/console/api/delete-version",
                                             {"version_id": idle}, origin=origin, csrf=csrf)
                assert status == 403, body
            status, body = await me.post("/console/api/delete-version", {"version_id": active})
            assert status == 409 and "activate another one first" in body["error"], body
            status, body = await me.post("/console/api/delete-version", {"version_id": playing})
            assert status == 409 and "still playing matches" in body["error"], body
            assert len((await client.versions()).versions) == 3
            status, body = await me.post("/console/api/delete-version", {"version_id": idle})
            assert status == 200 and body["version_id"] == idle, body
            left = [v.version_id for v in (await client.versions()).versions]
            assert sorted(left) == sorted([active, playing])

    run(scenario())


def test_nothing_private_without_a_live_session(
        site: tuple[str, web.Application], server: InProcessServer) -> None:
    url, app = site
    console: Console = app[CONSOLE]

    async def scenario() -> None:
        (_agent, token), _ = await two_agents(server.target)
        async with aiohttp.ClientSession() as http:
            anonymous = Browser(url, http)
            for path in ("/console/api/me", "/console/api/matches/any/logs"):
                assert (await anonymous.get(path))[0] == 401
            assert (await anonymous.get("/console/api/session"))[1]["signed_in"] is False
            # Signed out: the old cookie is worth nothing.
            me = Browser(url, http)
            await me.sign_in(token)
            old = me.sid
            status, _ = await me.post("/console/api/signout", {})
            assert status == 200 and me.sid == ""
            me.sid = old
            assert (await me.get("/console/api/me"))[0] == 401
            # Expired: a session ends its time after sign-in.
            await me.sign_in(token)
            assert (await me.get("/console/api/me"))[0] == 200
            clock = console.sessions.clock
            console.sessions.clock = lambda: clock() + console.sessions.ttl_s + 1
            try:
                assert (await me.get("/console/api/me"))[0] == 401
            finally:
                console.sessions.clock = clock

    run(scenario())


def test_a_session_reads_its_own_agents_seat_logs_only(
        site: tuple[str, web.Application], server: InProcessServer, valkey: Any) -> None:
    url, _app = site

    async def scenario() -> None:
        (owner, owner_token), (_other, other_token) = await two_agents(server.target)
        match_id = "m-" + secrets.token_hex(4)
        store = Store(valkey.url, Holder("node-t", "", 2000))
        await store.connect()
        try:
            await store.versions.record_seat_log(owner, SeatLogRecord(
                match_id, 0, "f" * 64, [StepLogRecord(3, "<b>mine</b>\n", "timeout", "late")]))
        finally:
            await store.close()
        async with aiohttp.ClientSession() as http:
            other = Browser(url, http)
            await other.sign_in(other_token)
            status, body = await other.get(f"/console/api/matches/{match_id}/logs")
            assert status == 404 and "<b>mine</b>" not in str(body)
            mine = Browser(url, http)
            await mine.sign_in(owner_token)
            status, body = await mine.get(f"/console/api/matches/{match_id}/logs")
            assert status == 200
            assert body["seats"][0]["steps"] == [
                {"step": 3, "text": "<b>mine</b>\n", "failure": "timeout", "why": "late"}]

    run(scenario())


def test_sign_in_attempts_are_limited_per_address(
        site: tuple[str, web.Application]) -> None:
    url, _app = site

    async def scenario() -> None:
        async with aiohttp.ClientSession() as http:
            guesser = Browser(url, http)
            codes = [(await guesser.post("/console/api/signin", {"token": f"at_guess{n}"}))[0]
                     for n in range(SIGNIN_ATTEMPTS + 1)]
        assert codes == [401] * SIGNIN_ATTEMPTS + [429]

    run(scenario())


def test_a_folder_is_packed_as_submit_packs_it_and_a_path_out_of_it_refused(
        site: tuple[str, web.Application], server: InProcessServer, tmp_path: Path) -> None:
    url, _app = site
    folder = tmp_path / "mybot"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.py").write_text("import lib.util\n")
    (folder / "lib" / "util.py").write_text("X = 1\n")

    def form(csrf: str, files: list[tuple[str, bytes]]) -> aiohttp.FormData:
        data = aiohttp.FormData()
        data.add_field("csrf", csrf)
        data.add_field("entry", "python3 bot.py")
        for name, content in files:
            data.add_field("path", name)
            data.add_field("files", content, filename=name.rpartition("/")[2])
        return data

    async def scenario() -> None:
        (_agent, token), _ = await two_agents(server.target)
        async with aiohttp.ClientSession() as http:
            me = Browser(url, http)
            await me.sign_in(token)
            files = [("mybot/bot.py", b"import lib.util\n"), ("mybot/lib/util.py", b"X = 1\n")]
            async with http.post(url + "/console/api/versions", data=form(me.csrf, files),
                                 headers=me.headers(url)) as response:
                body = await response.json()
                assert response.status == 200, body
            version = (await VersionClient(server.target, api_token=token).versions()).versions[0]
            assert version.content_hash == hashlib.sha256(pack_directory(folder)).hexdigest()
            assert version.files == 2 and version.version_id == body["version"]["version_id"]
            async with http.post(url + "/console/api/versions",
                                 data=form(me.csrf, [("mybot/../../etc/x", b"x")]),
                                 headers=me.headers(url)) as response:
                assert response.status == 400
                assert "not a path inside the folder" in (await response.json())["error"]
            async with http.post(url + "/console/api/versions", data=form("forged", files),
                                 headers=me.headers(url)) as response:
                assert response.status == 403

    run(scenario())
