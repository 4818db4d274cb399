"""Re-deals for search bots respect what the table has seen (TT-4.3, TT-4.1)."""

from __future__ import annotations

import random

from twistarena import engine
from twistarena.engine.tricky_twist.cards import FAMILY_OF
from twistarena.engine.tricky_twist.state import TrickyTwistState


def _play_until_a_void(seed: int) -> tuple[TrickyTwistState, int, int]:
    """Random play until some seat fails to follow; returns (state, seat, family)."""
    rng = random.Random(seed)
    state = engine.make("tricky_twist", 4, seed)
    assert isinstance(state, TrickyTwistState)
    while not state.is_terminal():
        seat = state.to_act()[0]
        ids = list(state.legal_action_ids(seat))
        led = state.trick[0] if state.phase == "play" and state.trick else -1
        action = rng.choice(ids)
        state.apply(seat, action)
        if led >= 0 and action < 48 and FAMILY_OF[action] != FAMILY_OF[led] and \
                state.phase == "play":
            return state, seat, FAMILY_OF[led]
    raise AssertionError("no seat ever failed to follow")


def test_a_seat_that_did_not_follow_is_never_dealt_that_family() -> None:
    """TT-4.3: not following shows the whole table that the hand holds none of
    the led family, so no re-deal seen from another seat may give it one."""
    checked = 0
    for seed in range(40):
        state, void_seat, family = _play_until_a_void(seed)
        if state.voids[void_seat] == 0:
            continue  # refilled from the reserve in the same step (cannot happen mid-trick)
        observer = (void_seat + 1) % 4
        for k in range(30):
            world = state.determinize(observer, random.Random(k))
            assert isinstance(world, TrickyTwistState)
            hidden = [c for c in world.hands[void_seat] if c not in world.known[void_seat]]
            assert all(FAMILY_OF[c] != family for c in hidden)
        checked += 1
    assert checked >= 20


def test_taking_a_reserve_card_lifts_the_void() -> None:
    """TT-4.1: the card taken from the reserve is unseen and may be of any family."""
    for seed in range(40):
        state, void_seat, _ = _play_until_a_void(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            seat = state.to_act()[0]
            ids = list(state.legal_action_ids(seat))
            if seat == void_seat and state.phase == "reserve_window" and 96 in ids:
                state.apply(seat, 96)
                assert state.voids[void_seat] == 0
                return
            state.apply(seat, rng.choice(ids))
    raise AssertionError("the seat never took a reserve card")
