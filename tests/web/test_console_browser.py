"""The author's console in a real headless browser, against ``twistarena serve``
with its runners (the sandbox) and an arena: register and sign in, upload an
archive and a folder, activate, enroll until the leaderboard rates the bot,
practice and watch live, and find a failing version's crash in the replay's
step log, with every name and log line shown as text."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.versions import VersionClient

from tests.support.agents import run
from tests.support.browser import Page, browser_page, find_browser
from tests.support.hosting import FIRST_LEGAL, SLOW_FIRST_LEGAL, Arena, pack, running_arena
from tests.support.waiting import wait_until

#: Writes to stderr at every decision and crashes at its third, with HTML in both.
CRASHER = """\
import json, sys
n = 0
print("<script>window.pwned = 1</script> starting", file=sys.stderr, flush=True)
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "decision":
        n += 1
        print(f"deciding {n}: <b>{len(message['legal_actions'])} choices</b>",
              file=sys.stderr, flush=True)
        if n == 3:
            raise RuntimeError("<img src=x onerror='window.pwned=2'> the bot broke")
        print(message["legal_actions"][0]["id"], flush=True)
    elif message["type"] == "over":
        break
"""
ARENA = "twisted-2"


class WebFace:
    """The web face in a thread of its own, in front of a serve subprocess."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.stack = contextlib.AsyncExitStack()
        self.url = ""

    def __enter__(self) -> WebFace:
        from twistarena.clients.web import running_web

        self.thread.start()
        url = asyncio.run_coroutine_threadsafe(self.stack.enter_async_context(
            running_web(self.target, port=0)), self.loop).result(30)
        self.url = url.rstrip("/")
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.stack.aclose(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_browser()


@pytest.fixture(scope="module")
def arena() -> Iterator[tuple[Arena, str]]:
    with running_arena(runners=1, extra=["--arena", "twisted:2:random"]) as started, \
            WebFace(started.serve.target) as face:
        yield started, face.url


async def sign_in(page: Page, url: str, token: str) -> None:
    await page.goto(f"{url}/console")
    await page.wait_for("document.body?.dataset.signedIn === 'no'", what="the sign-in form")
    await page.evaluate(f"""(() => {{ const f = document.getElementById('signin-form');
        f.token.value = {token!r}; f.requestSubmit(); }})()""")
    await page.wait_for("document.body?.dataset.signedIn === 'yes'", what="signed in")


async def choose_files(page: Page, selector: str, files: list[str]) -> None:
    """Put files in a file input, as a person picking them does."""
    root = (await page.send("DOM.getDocument"))["root"]["nodeId"]
    node = (await page.send("DOM.querySelector", nodeId=root, selector=selector))["nodeId"]
    await page.send("DOM.setFileInputFiles", nodeId=node, files=files)


async def upload(page: Page, entry: str, *, archive: str = "", folder: list[str] = ()
                 ) -> None:
    before = await page.evaluate("document.body.dataset.loaded")
    if archive:
        await choose_files(page, "#upload-form input[name=archive]", [archive])
    if folder:
        await choose_files(page, "#upload-form input[name=folder]", list(folder))
        # The browser reads a picked folder's files in the background.
        await page.wait_for("document.querySelector('#upload-form input[name=folder]')"
                            ".files.length > 0", what="the folder's files picked")
    await page.evaluate(f"""(() => {{ const f = document.getElementById('upload-form');
        f.entry.value = {entry!r}; f.requestSubmit(); }})()""")
    status = "document.getElementById('upload-status').textContent"
    await page.wait_for(f"{status} !== 'uploading...' && ({status}.includes('stored') || "
                        f"document.body.dataset.loaded === {before!r})", what="the upload done")
    shown = await page.evaluate(status)
    assert "stored" in shown, shown


async def practice(page: Page) -> None:
    """Start a Twisted practice match against the random house rung from the console."""
    await page.evaluate("""(() => { const f = document.getElementById('practice-form');
        f.game_id.value = 'twisted'; f.strength.value = 'random'; f.requestSubmit(); })()""")


def pwned(page: Page) -> Any:
    return page.evaluate("window.pwned === undefined && !document.querySelector("
                         "'#main img, #main b, #seat-logs img, #seat-logs b, #seat-logs script')")


def test_register_from_the_page_shows_the_token_once_and_names_as_text(
        arena: tuple[Arena, str], chromium: str) -> None:
    _arena, url = arena
    name = "<img src=x onerror='window.pwned=1'>bot"

    async def scenario() -> None:
        async with browser_page(chromium) as page:
            await page.goto(f"{url}/console")
            await page.wait_for("document.body?.dataset.signedIn === 'no'")
            await page.evaluate(f"""(() => {{ const f = document.getElementById('register-form');
                f.name.value = {name!r}; f.requestSubmit(); }})()""")
            await page.wait_for("document.body?.dataset.signedIn === 'yes'", what="registered")
            token = await page.evaluate("document.querySelector('#new-token code').textContent")
            assert token and await page.evaluate("document.cookie") == ""  # HttpOnly
            assert name in await page.evaluate("document.querySelector('h1').textContent")
            assert await pwned(page)
            await page.goto(f"{url}/console")  # the token is shown once
            await page.wait_for("document.body?.dataset.signedIn === 'yes'")
            assert not await page.evaluate("document.getElementById('new-token')")
            await page.evaluate("document.getElementById('signout').click()")
            await page.wait_for("document.body?.dataset.signedIn === 'no'", what="signed out")
            await page.goto(f"{url}/console")
            await page.wait_for("document.body?.dataset.signedIn === 'no'")
            await sign_in(page, url, token)  # and it signs in again
            await page.screenshot("console-registered")

    run(scenario())


def test_upload_activate_enroll_until_rated_against_the_house_then_withdraw(
        arena: tuple[Arena, str], chromium: str, tmp_path: Path) -> None:
    started, url = arena
    archive = tmp_path / "bot.tar.gz"
    archive.write_bytes(pack({"bot.py": FIRST_LEGAL}))
    folder = tmp_path / "slowbot"
    folder.mkdir()
    (folder / "bot.py").write_text(SLOW_FIRST_LEGAL)

    async def scenario() -> None:
        agent_id, token = await register_agent(started.serve.target, "uploader")
        async with browser_page(chromium) as page:
            await sign_in(page, url, token)
            await upload(page, "python3 bot.py", archive=str(archive))
            # The bar followed the XHR's upload progress to its end.
            assert await page.evaluate("document.body.dataset.uploadProgress") == "100"
            assert await page.evaluate("document.getElementById('upload-progress').value") == 100
            await upload(page, "python3 bot.py", folder=[str(folder)])
            rows = "document.querySelectorAll('#versions tr[data-version]')"
            assert await page.evaluate(f"{rows}.length") == 2
            # The first version became active by itself; activate the newer one.
            assert await page.evaluate(f"{rows}[1].classList.contains('active')")
            await page.evaluate("document.querySelector('#versions button.activate').click()")
            await page.wait_for(f"{rows}[0].classList.contains('active')", what="v2 active")
            listed = await VersionClient(started.serve.target, api_token=token).versions()
            assert listed.versions[0].active
            # Delete asks once, then deletes: the active v2 is refused, v1 goes.
            delete = "document.querySelector('#versions tr[data-version=\"{}\"] button.delete')"
            for _ in range(2):
                await page.evaluate(delete.format(listed.versions[0].version_id) + ".click()")
            await page.wait_for("document.getElementById('versions-status').textContent"
                                ".includes('activate another one first')", what="refusal said")
            for _ in range(2):
                await page.evaluate(delete.format(listed.versions[1].version_id) + ".click()")
            await page.wait_for(f"{rows}.length === 1", what="v1 deleted")
            await page.evaluate(f"document.querySelector('#my-arenas tr[data-arena=\"{ARENA}\"] "
                                "button').click()")
            await page.wait_for(f"document.querySelector('#my-arenas tr[data-arena=\"{ARENA}\"]')"
                                ".dataset.enrolled === 'yes'", what="enrolled")

            async def rated_row() -> str:
                """The console's rating cell of the arena once it shows one."""
                await page.goto(f"{url}/console")
                await page.wait_for("document.body?.dataset.signedIn === 'yes'")
                shown = await page.evaluate(
                    f"document.querySelector('#my-arenas tr[data-arena=\"{ARENA}\"]')"
                    ".cells[3].textContent")
                return "" if shown == "—" else str(shown)

            # The arena seats it against its house rungs and rates it.
            rated = await wait_until(rated_row, "the console shows the arena's rating",
                                     timeout=60, interval=0.5)
            assert rated.startswith("v2: "), rated
            await page.screenshot("console-rated")
            await page.goto(f"{url}/arenas/{ARENA}")
            await page.wait_for("document.body.innerText.includes('uploader')",
                                what="the agent on the public leaderboard", timeout=20)
            await page.goto(f"{url}/console")
            await page.wait_for("document.body?.dataset.signedIn === 'yes'")
            await page.evaluate(f"document.querySelector('#my-arenas tr[data-arena=\"{ARENA}\"] "
                                "button.withdraw').click()")
            await page.wait_for(f"document.querySelector('#my-arenas tr[data-arena=\"{ARENA}\"]')"
                                ".dataset.enrolled === 'no'", what="withdrawn")
        assert agent_id

    run(scenario(), timeout=150)


def test_practice_is_watched_live_and_a_crash_is_found_in_the_step_log(
        arena: tuple[Arena, str], chromium: str) -> None:
    started, url = arena
    target = started.serve.target

    async def scenario() -> None:
        _agent_id, token = await register_agent(target, "crasher")
        versions = VersionClient(target, api_token=token)
        await versions.submit(pack({"bot.py": SLOW_FIRST_LEGAL}), "python3 bot.py")
        async with browser_page(chromium) as page:
            await sign_in(page, url, token)
            await practice(page)
            await page.wait_for("location.pathname.startsWith('/matches/') && "
                                "document.body?.dataset.mode === 'live'",
                                what="the practice match live", timeout=30)
            await page.screenshot("console-practice-live")
            # The failing version: it crashes at its third decision.
            await versions.submit(pack({"bot.py": CRASHER}), "python3 bot.py", activate=True)
            await page.goto(f"{url}/console")
            await page.wait_for("document.body?.dataset.signedIn === 'yes'")
            await practice(page)
            await page.wait_for("location.pathname.startsWith('/matches/')")
            match_id = (await page.evaluate("location.pathname")).rsplit("/", 1)[1]

            async def failure_listed() -> Any:
                listed = await versions.versions()
                return [f for f in listed.versions[0].stats.failures if f.match_id == match_id]

            [failure] = await wait_until(failure_listed, "the crash reported", timeout=60)
            assert failure.reason.startswith("crash") and failure.crashes >= 1
            await page.goto(f"{url}/console")
            await page.wait_for(f"!!document.querySelector('#failures tr[data-match=\"{match_id}\"]"
                                " a')", what="the failed match listed")
            assert "crash" in await page.evaluate(
                f"document.querySelector('#failures tr[data-match=\"{match_id}\"]').innerText")
            await page.evaluate(f"document.querySelector('#failures tr[data-match=\"{match_id}\"]"
                                " a').click()")
            await page.wait_for(f"document.body?.dataset.step === '{failure.step}' && "
                                "!!document.querySelector('#seat-logs .step-log.failed')",
                                what="the replay at the failing step with its log", timeout=30)
            shown = await page.evaluate("document.getElementById('seat-logs').innerText")
            assert "crash: it exited" in shown and "the bot broke" in shown
            assert "<img src=x onerror='window.pwned=2'>" in shown  # as text
            assert await pwned(page)
            await page.screenshot("console-failing-step")
            assert str(failure.step) in await page.evaluate(
                "document.querySelector('#seat-logs a.failed-step').dataset.step")

    run(scenario(), timeout=150)
