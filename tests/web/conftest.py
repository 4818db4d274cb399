"""The web face served in the test server's own process and event loop, as
``twistarena serve --web-port`` runs it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from tests.support.server import InProcessServer


@pytest.fixture(scope="module")
def web(server: InProcessServer) -> Iterator[str]:
    """The web face's base URL (no trailing slash)."""
    from twistarena.clients.web import running_web

    stack = contextlib.AsyncExitStack()
    url = server.call(stack.enter_async_context(running_web(server.target, port=0)))
    try:
        yield url.rstrip("/")
    finally:
        server.call(stack.aclose())
