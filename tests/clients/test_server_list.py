"""The SDK's server rotation: a server that gave a retry hint is skipped for that
long while the others are tried, and waited for only when every one gave one."""

from __future__ import annotations

import time

from twistarena.clients.sdk.connection import ServerList


def test_the_next_server_without_a_running_hint_comes_first() -> None:
    turns = ServerList(["a:1", "b:2", "c:3"])
    assert turns.current == "a:1"
    turns.not_before["b:2"] = time.monotonic() + 60
    assert turns.advance() == 0.0
    assert turns.current == "c:3"  # b:2 asked not to be called for a minute
    assert turns.advance() == 0.0
    assert turns.current == "a:1"


def test_when_every_server_gave_a_hint_the_soonest_is_waited_for() -> None:
    turns = ServerList(["a:1", "b:2"])
    now = time.monotonic()
    turns.not_before.update({"a:1": now + 60, "b:2": now + 30})
    wait = turns.advance()
    assert turns.current == "b:2"
    assert 25 < wait <= 30


def test_a_hint_that_ran_out_no_longer_counts() -> None:
    turns = ServerList(["a:1", "b:2"])
    turns.not_before["b:2"] = time.monotonic() - 1
    assert turns.advance() == 0.0
    assert turns.current == "b:2"
