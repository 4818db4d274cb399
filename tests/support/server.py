"""An in-process twistarena server on its own event loop thread, for tests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from dataclasses import replace
from typing import Any, TypeVar

from twistarena.server.app import App
from twistarena.server.config import ServerConfig

T = TypeVar("T")


class InProcessServer:
    """``App`` served by a background thread; tests talk to it over real gRPC."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = replace(config, port=0) if config.port else config
        self.app = App(self.config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def port(self) -> int:
        return self.app.port

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.app.port}"

    def start(self, timeout: float = 30.0) -> InProcessServer:
        self._thread = threading.Thread(target=self._run, name="twistarena-test-server",
                                        daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("in-process server did not start")
        if self._error is not None:
            raise self._error
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self.app.start())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run a coroutine on the server's loop and wait for its result."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self, timeout: float = 30.0) -> None:
        if self.loop is None or self._thread is None:
            return
        try:
            self.call(self.app.drain(), timeout)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout)
            self._thread = None
