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


#: What `make test` runs one test at a time (marked ``serial`` here), with the tests
#: marked ``clock``: the faults of whole clusters (nodes killed, paused, cut from their
#: store, whose leases of a few seconds a starved node loses), and the tests that load
#: the machine or measure how it copes (load tests, soaks, sandboxed fork bombs and
#: spinners). Every other test starts its servers on free ports and checks no time or
#: rate, so it runs on both cores.
SERIAL_PATHS = (
    "tests/system/",
    "tests/runners/test_runner_load.py",
    "tests/clients/test_loadtest.py",
    "tests/clients/test_loadtest_stall.py",
    "tests/clients/test_loadreport.py",
    "tests/clients/test_soak.py",
    "tests/security/test_canary.py",
    "tests/security/test_hostile_entrants.py",
    "tests/node/test_node_agent_store_down.py",
    # ratings read back after a queue's matches: seen racing the other worker's load
    "tests/clients/test_practice_tournament_cli.py",
    # leases left to lapse on their clock by two nodes in one process
    "tests/server/test_owners_first.py",
    "tests/server/test_tournament_nodes.py",
    "tests/runners/test_lost_hosted_seat.py",
    # a grace measured against the clock across a takeover
    "tests/server/test_grace_owners.py",
)


#: The system tests that run on both cores all the same: they play matches over
#: clusters to their end, on nobody's clock (no lease to lapse, no time measured).
SYSTEM_ON_BOTH_CORES = (
    "tests/system/test_cluster_command.py",
    "tests/system/test_cluster_durability.py",
    "tests/system/test_cluster_tournaments.py",
    "tests/system/test_hostile_numbers.py",
    "tests/system/test_log_lines.py",
    "tests/system/test_retention.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SERIAL_PATHS) and \
                not item.nodeid.startswith(SYSTEM_ON_BOTH_CORES):
            item.add_marker(pytest.mark.serial)


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
