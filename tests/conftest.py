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


#: Folders whose tests run servers, subprocesses and timers on a shared 2-core
#: machine. A failure there is retried once, so that a stall under load does not
#: hide the rest of the run; a test that fails twice still fails the suite.
_TIMING_BOUND = ("server", "clients", "system", "node")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "tests" in parts and parts[parts.index("tests") + 1] in _TIMING_BOUND:
            item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=1))
