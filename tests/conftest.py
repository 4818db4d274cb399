"""Shared fixtures: a real Valkey server and an in-process twistarena server.

Both are session-scoped; every test uses its own match ids (random), so tests
do not need the store flushed between them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def valkey() -> Iterator[object]:
    from tests.support.valkey import ValkeyProcess

    proc = ValkeyProcess().start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="session")
def server(valkey: object) -> Iterator[object]:
    from twistarena.server.config import ServerConfig

    from tests.support.server import InProcessServer

    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url))  # type: ignore[attr-defined]
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()
