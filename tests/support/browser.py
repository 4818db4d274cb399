"""Headless Debian ``chromium`` driven over the Chrome DevTools Protocol.

A few dozen lines of CDP over aiohttp's WebSocket client instead of a browser
automation library: nothing is downloaded, the browser is the system's.
Under CI (``CI=true``) a missing browser fails the tests; elsewhere they skip
with the command that installs it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

INSTALL = "apt-get update && apt-get install -y chromium"
DEVTOOLS = re.compile(r"DevTools listening on (ws://\S+)")
#: Screenshots of the pages, kept after the run (gitignored).
ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artefacts" / "screenshots"


def find_browser() -> str:
    """The chromium binary, or fail (CI) / skip (elsewhere) saying how to install it."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    message = f"no headless chromium found; install it with: {INSTALL}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


class CdpError(Exception):
    pass


class Page:
    """One browser tab: navigate, evaluate, wait for a condition, screenshot.

    Console errors and uncaught exceptions are collected in ``errors``."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        self.errors: list[str] = []
        self.loaded = asyncio.Event()

    async def send(self, method: str, **params: Any) -> Any:
        return await self.browser.send(method, params, self.session)

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                        for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.errors.append(details.get("exception", {}).get("description")
                               or details.get("text", "exception"))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(f"{entry.get('text')} ({entry.get('url', '')})")
        elif method == "Page.loadEventFired":
            self.loaded.set()

    async def goto(self, url: str, timeout: float = 15.0) -> None:
        self.loaded.clear()
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(self.loaded.wait(), timeout)

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression,
                                returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression!r}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 15.0,
                       what: str = "") -> Any:
        """Poll ``expression`` until it is truthy; fail with ``what`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                shown = await self.evaluate("document.documentElement.outerHTML")
                raise AssertionError(f"timed out waiting for {what or expression}; the page "
                                     f"shows: {str(shown)[:1500]}")
            await asyncio.sleep(0.05)

    async def press(self, key: str, code: str, key_code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            await self.send("Input.dispatchKeyEvent", type=kind, key=key, code=code,
                            windowsVirtualKeyCode=key_code)

    async def screenshot(self, name: str) -> Path:
        reply = await self.send("Page.captureScreenshot", format="png")
        ARTEFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTEFACTS / f"{name}.png"
        path.write_bytes(base64.b64decode(reply["data"]))
        return path


class Browser:
    """A headless chromium process and its DevTools WebSocket."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.profile = tempfile.mkdtemp(prefix="ta-chromium-")
        self.proc: subprocess.Popen[bytes] | None = None
        self.http: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.pages: dict[str, Page] = {}
        self.reader: asyncio.Task[None] | None = None

    async def start(self, timeout: float = 30.0) -> Browser:
        log = Path(self.profile) / "stderr.log"
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                [self.binary, "--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                 "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
                 "--window-size=1280,900", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout
        url = ""
        while not url:
            found = DEVTOOLS.search(log.read_text(errors="replace"))
            if found:
                url = found.group(1)
            elif self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not start:\n{log.read_text()[-2000:]}")
            else:
                await asyncio.sleep(0.05)
        self.http = aiohttp.ClientSession()
        self.ws = await self.http.ws_connect(url, max_msg_size=0)
        self.reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data:
                future = self.pending.pop(data["id"], None)
                if future is not None and not future.done():
                    if "error" in data:
                        future.set_exception(CdpError(str(data["error"])))
                    else:
                        future.set_result(data.get("result", {}))
            elif data.get("sessionId") in self.pages:
                self.pages[data["sessionId"]].on_event(data["method"], data.get("params", {}))

    async def send(self, method: str, params: dict[str, Any] | None = None,
                   session: str | None = None, timeout: float = 20.0) -> Any:
        assert self.ws is not None
        message: dict[str, Any] = {"id": next(self.ids), "method": method,
                                   "params": params or {}}
        if session:
            message["sessionId"] = session
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[message["id"]] = future
        await self.ws.send_str(json.dumps(message))
        return await asyncio.wait_for(future, timeout)

    async def new_page(self) -> Page:
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send("Target.attachToTarget",
                                   {"targetId": target["targetId"], "flatten": True})
        page = Page(self, attached["sessionId"])
        self.pages[page.session] = page
        for domain in ("Page", "Runtime", "Log"):
            await page.send(f"{domain}.enable")
        await page.send("Emulation.setDeviceMetricsOverride", width=1280, height=900,
                        deviceScaleFactor=1, mobile=False)
        return page

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        if self.ws is not None:
            await self.ws.close()
        if self.http is not None:
            await self.http.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)


@contextlib.asynccontextmanager
async def browser_page(binary: str) -> AsyncIterator[Page]:
    """A fresh headless browser with one tab, closed afterwards."""
    browser = await Browser(binary).start()
    try:
        yield await browser.new_page()
    finally:
        await browser.close()
