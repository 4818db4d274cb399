"""Differential leak test: what a seat or a spectator receives depends on nothing it
may not know.

Each match is played twice: as dealt, and with one hidden card of seat ``p``
swapped for another card hidden from the observers (in another hand, the draw
pile, the box or a reserve). The same actions are replayed on both. For every
other seat and for spectators, every byte they would be sent (events in their
view, observations, legal actions, the public view) must be identical in both
worlds for as long as both swapped cards stay hidden from them by the rules
(``tests/server/hidden.py``). A byte that differs is a leak. The serialization
is the server's own (``twistarena.wire``), so the bytes are the wire's.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from twistarena import engine, wire
from twistarena.engine import IllegalAction, State
from twistarena.v1 import play_pb2 as ppb

from tests.server.hidden import hidden_from

MATCHES = 200
#: game -> (players, options) cycled over the matches.
SETUPS: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "tricky_twist": [(3, {}), (4, {})],
    "twisted": [(2, {"expert": True}), (3, {}), (2, {"expert": True, "rounds": 1}), (4, {})],
    "twhist": [(3, {}), (4, {}), (5, {})],
}
#: Attributes of each game's state that hold cards by id, where the swap happens.
ZONES = {"tricky_twist": ("hands", "reserves", "box"), "twisted": ("hands", "pile"),
         "twhist": ("hands",)}


def _swap(state: State, x: int, y: int) -> None:
    """Exchange cards ``x`` and ``y`` wherever the state keeps them (hands stay sorted)."""
    def fix(cards: list[int]) -> list[int]:
        out = [y if c == x else x if c == y else c for c in cards]
        return sorted(out) if cards == sorted(cards) else out

    for name in ZONES[state.game_id]:
        zone = getattr(state, name)
        if zone and isinstance(zone[0], list):
            setattr(state, name, [fix(z) for z in zone])
        else:
            setattr(state, name, fix(zone))


def _holder(state: State, card: int) -> int | None:
    """The seat whose hand or reserve holds ``card`` (None: no seat's)."""
    st: Any = state
    for seat in range(state.num_players):
        if card in st.hands[seat] or card in getattr(st, "reserves", [[]] * 8)[seat]:
            return seat
    return None


def _received(state: State, observer: int | None, first_event: int) -> Iterator[bytes]:
    """What ``observer`` (None: a spectator) would be sent after the latest step."""
    info = engine.game(state.game_id)
    for seq in range(first_event, len(state.events)):
        yield wire.event(seq, state.events[seq].view(observer), info).SerializeToString()
    if observer is None:
        yield wire.public_view(state.game_id, state.public_view()).SerializeToString()
        return
    yield wire.observation_bytes(state.game_id, state.observation(observer))
    for action in state.legal_actions(observer):
        yield ppb.LegalAction(id=action.id, label=action.label,
                              payload=wire.struct(action.payload)).SerializeToString()


def _play(game_id: str, players: int, seed: int, options: dict[str, Any]) -> list[tuple[int, int]]:
    state = engine.make(game_id, players, seed, options)
    rng = random.Random(seed)
    actions = []
    while not state.is_terminal():
        seat = rng.choice(state.to_act())
        action = rng.choice(list(state.legal_action_ids(seat)))
        state.apply(seat, action)
        actions.append((seat, action))
    return actions


def _differential(game_id: str, players: int, seed: int, options: dict[str, Any]) -> int:
    """Compare both worlds of one match; the number of messages compared."""
    actions = _play(game_id, players, seed, options)
    a = engine.make(game_id, players, seed, options)
    rng = random.Random(seed * 7 + 1)
    p = seed % players
    st: Any = a
    hidden = {q: hidden_from(a, q) for q in [*range(players), None]}

    def observers(holder: int | None) -> list[int | None]:
        return [q for q in [*range(players), None] if q not in (p, holder)]

    # y: a card of another hand, the pile or the box, hidden from every observer
    # but its holder (who sees its own hand and is left out of the comparison).
    pairs = [(x, y) for x in st.hands[p] for y in sorted(hidden[None] - set(st.hands[p]))
             if all({x, y} <= hidden[q] for q in observers(_holder(a, y)))]
    if not pairs:
        return 0
    x, y = rng.choice(pairs)
    b = engine.make(game_id, players, seed, options)
    _swap(b, x, y)
    watching = observers(_holder(a, y))
    compared = 0
    first = 0
    for step, (seat, action) in enumerate([(-1, -1), *actions]):
        if step:
            a.apply(seat, action)
            try:
                b.apply(seat, action)
            except IllegalAction:
                break  # the swap changed what p may do: the worlds part here
        still = []
        for q in watching:
            if not ({x, y} <= hidden_from(a, q) and {x, y} <= hidden_from(b, q)):
                continue  # the rules show q one of the cards now: nothing left to compare
            got_a = list(_received(a, q, first))
            got_b = list(_received(b, q, first))
            assert got_a == got_b, (
                f"{game_id} seed {seed}: what {'a spectator' if q is None else f'seat {q}'} "
                f"receives after step {step} depends on seat {p}'s hidden card "
                f"{x} (swapped with {y})")
            compared += len(got_a)
            still.append(q)
        watching = still
        first = len(a.events)
        if not watching:
            break
    return compared


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_no_byte_depends_on_a_hidden_card(game_id: str) -> None:
    setups = SETUPS[game_id]
    compared = [_differential(game_id, *setups[seed % len(setups)][:1], seed,
                              setups[seed % len(setups)][1]) for seed in range(MATCHES)]
    # The test compares something in nearly every match, not a vacuous few.
    assert sum(1 for c in compared if c) >= MATCHES * 0.9
    assert sum(compared) >= MATCHES * 20
