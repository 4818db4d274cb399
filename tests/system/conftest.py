"""A Valkey of its own for each system test: nodes are killed and paused there."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.valkey import ValkeyProcess


@pytest.fixture
def store() -> Iterator[ValkeyProcess]:
    proc = ValkeyProcess().start()
    try:
        yield proc
    finally:
        proc.stop()
