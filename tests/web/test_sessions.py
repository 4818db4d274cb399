"""The console's in-memory stores are bounded: sessions in count and time,
sign-in attempts per address and in addresses counted."""

from __future__ import annotations

from twistarena.clients.web.sessions import AttemptLimiter, SessionStore


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_sessions_are_capped_in_count_and_end_with_their_time() -> None:
    clock = Clock()
    store = SessionStore(ttl_s=60.0, most=3, clock=clock)
    ids = [store.open(f"ag_{n}", f"at_{n}")[0] for n in range(4)]
    assert len(store) == 3 and store.get(ids[0]) is None  # the oldest made room
    session = store.get(ids[3])
    assert session is not None and session.agent_id == "ag_3"
    assert len({store.get(i).csrf for i in ids[1:]}) == 3  # type: ignore[union-attr]
    clock.now = 59.9
    assert store.get(ids[1]) is not None
    clock.now = 60.0
    assert store.get(ids[1]) is None and len(store) == 2  # an expired one is forgotten
    store.close(ids[2])
    assert store.get(ids[2]) is None and store.get("") is None and store.get(None) is None


def test_attempts_are_limited_per_address_over_a_bounded_set_of_addresses() -> None:
    clock = Clock()
    limiter = AttemptLimiter(attempts=2, window_s=10.0, most=2, clock=clock)
    assert [limiter.allow("a") for _ in range(3)] == [True, True, False]
    assert limiter.allow("b")
    clock.now = 10.0
    assert limiter.allow("a")  # the window moved on
    limiter.allow("c")
    assert len(limiter._seen) == 2  # the oldest address is forgotten
