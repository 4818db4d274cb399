"""Shared fixtures: a real Valkey server and an in-process twistarena server.

Both are session-scoped; every test uses its own match ids (random), so tests
do not need the store flushed between them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

#: The runner token the session's server accepts.
SESSION_RUNNER_TOKEN = "rt_session-runner-token"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--engine", choices=("as-built", "interpreted"), default="as-built",
        help="as-built: the rules compiled where the install compiled them; interpreted:"
             " from their .py source (tests/support/engine_source.py)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--engine") == "interpreted":
        from tests.support.engine_source import use_source

        use_source()


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
    from twistarena.server.config import Limits, ServerConfig

    from tests.support.server import InProcessServer

    # Every test talks to it from one address: the per-client quotas (tested on
    # servers of their own in tests/security) would count the whole suite as one client.
    unlimited = Limits(creates_per_minute=0, live_per_client=0, max_waiting_matches=0,
                       joins_per_minute_per_peer=0, registers_per_hour=0)
    # No admin token (admin calls from this machine), so no runner token is ever
    # minted: the runners' tests connect with this one.
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url,  # type: ignore[attr-defined]
                                       limits=unlimited, runner_token=SESSION_RUNNER_TOKEN))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(autouse=True)
def _logging_config_restored() -> Iterator[None]:
    """A command run in-process (``cli.main``) points structlog at the stderr of its
    test, which pytest closes afterwards; the in-process server of the session logs
    through the same global configuration, so it is put back after every test."""
    import structlog

    saved = structlog.get_config()
    yield
    structlog.configure(**saved)
