"""A canary match keeps at least half of its quiet pace under each attack of
the hostile suite, against a default `twistarena serve` in its own process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.security.attacks import ATTACKS, under
from tests.security.hostile import canary_rate
from tests.support.agents import run
from tests.support.process import ServeProcess

SECONDS = 2.0


@pytest.fixture(scope="module")
def serve() -> Iterator[ServeProcess]:
    # Dual-stack: the attacker comes from 127.0.0.1, the canary from ::1.
    proc = ServeProcess(["--host", "::", "--insecure", "--port", "0", "--no-web"]).start()
    try:
        yield proc
    finally:
        proc.terminate()
        proc.cleanup()


@pytest.mark.parametrize("name", list(ATTACKS))
@pytest.mark.clock
def test_the_canary_keeps_half_its_pace(serve: ServeProcess, name: str) -> None:
    canary = f"[::1]:{serve.port}"
    # Quiet and attacked paces taken in turns, each attacked pace compared with the
    # quiet one just before it: the machine's own load drifts (other processes
    # share its cores), and a pair a few seconds apart sees the same machine. The
    # attack fails the test when it halves the pace in every pair, so a first pair
    # that keeps half the pace already decides it: the second is taken only when
    # the first did not.
    pairs: list[tuple[float, float]] = []
    for _ in range(2):
        quiet = run(canary_rate(canary, SECONDS))
        attacked = run(under(serve.target, canary, ATTACKS[name], SECONDS))
        assert quiet > 0
        pairs.append((quiet, attacked))
        if attacked / quiet >= 0.5:
            break
    assert max(attacked / quiet for quiet, attacked in pairs) >= 0.5, (
        f"{name}: (quiet, attacked) decisions/s {pairs}")
