"""One server with small caps on versions, shared by the hosting tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from twistarena.hosted.archives import Caps
from twistarena.server.config import ServerConfig

from tests.support.server import InProcessServer

#: Small enough that a test builds an archive over each cap in milliseconds.
SMALL_CAPS = Caps(packed=64 * 1024, unpacked=256 * 1024, files=20)
MAX_VERSIONS = 7


@pytest.fixture(scope="package")
def hosting_server(valkey: Any) -> Iterator[InProcessServer]:
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url, version_caps=SMALL_CAPS,
                                       max_versions_per_agent=MAX_VERSIONS)).start()
    try:
        yield srv
    finally:
        srv.stop()
