"""Hidden information of Twhist: what each seat and a spectator may know (the
conventions of docs/rules/, TH-2.1, TH-2.2)."""

from __future__ import annotations

import json
import random

import pytest
from twistarena import engine
from twistarena.engine.twhist.state import TwhistState

from .helpers import pick, play, position


def _state(n: int, seed: int, visible: bool) -> TwhistState:
    state = engine.make("twhist", n, seed, {"twhist_visible": visible})
    assert isinstance(state, TwhistState)
    return state


def _swap_hidden(state: TwhistState, a: int, b: int) -> TwhistState:
    """A twin that differs only in one card swapped between the hands of a and b."""
    twin = state.clone()
    assert isinstance(twin, TwhistState)
    ca, cb = twin.hands[a][0], twin.hands[b][0]
    twin.hands[a] = sorted([cb, *twin.hands[a][1:]])
    twin.hands[b] = sorted([ca, *twin.hands[b][1:]])
    return twin


@pytest.mark.parametrize("visible", [True, False])
@pytest.mark.parametrize("n", [3, 4, 5])
def test_other_hands_never_show(n: int, visible: bool) -> None:
    """Two states that differ only in the other seats' hands look the same to seat 0 and
    to spectators, in observations and in event views."""
    state = _state(n, 5, visible)
    twin = _swap_hidden(state, 1, 2)
    assert twin.observation(0) == state.observation(0)
    assert twin.public_view() == state.public_view()
    assert twin.observation(1) != state.observation(1)
    for seat in range(n):
        for view in state.event_log(seat):
            text = json.dumps(view)
            for other in range(n):
                if other != seat:
                    for card in state.hands[other]:
                        needle = json.dumps(state.t.card_json(card))
                        in_open = card in state.open_cards
                        assert needle not in text or in_open, (seat, other, card)
    deal = state.event_log(0)[0]
    assert [c["id"] for c in deal["hand"]] == state.hands[0]
    assert "hand" not in state.event_log(None)[0]


def test_visible_twhist_cards_show_who_holds_which() -> None:
    """TH-2.2 (default): Twhist cards lie open; everyone sees who still holds which."""
    state = position(3, {0: ["red 1"], 1: ["red 2"], 2: ["red 3"]})
    play(state, ["T"])
    for viewer in (0, 1):
        players = state.observation(viewer)["players"]
        assert players[0]["twhist_names"] == ["round_winner", "pole_position", "pass"]
        assert players[2]["twhist_names"] == ["round_winner", "thief", "pole_position", "pass"]
    assert state.public_view()["players"][0]["twhist_names"] == ["round_winner", "pole_position",
                                                           "pass"]


def test_hidden_twhist_cards_show_only_counts() -> None:
    """TH-2.2 (option hidden): others' Twhist cards show as counts only; the own ones in
    full; spectators see counts only."""
    state = position(3, {0: ["red 1"], 1: ["red 2"], 2: ["red 3"]},
                     options={"twhist_visible": False})
    play(state, ["T"])
    obs = state.observation(1)
    assert obs["twhist_hand"] == ["round_winner", "thief", "pole_position", "pass"]
    assert obs["players"][1]["twhist_names"] == obs["twhist_hand"]
    assert obs["players"][0]["twhist_names"] == [] and obs["players"][0]["twhist_count"] == 3
    assert obs["players"][2]["twhist_names"] == [] and obs["players"][2]["twhist_count"] == 4
    spectator = state.public_view()["players"]
    assert [p["twhist_names"] for p in spectator] == [[], [], []]
    assert [p["twhist_count"] for p in spectator] == [3, 4, 4]
    assert state.observation(0)["twhist_hand"] == ["round_winner", "pole_position", "pass"]


def test_observation_keys_are_the_same_in_every_phase() -> None:
    """Proto-friendly views: one key set for all phases, no None values."""
    state = _state(4, 3, True)
    keys = set(state.observation(0))
    rng = random.Random(0)
    phases = set()
    while True:
        for seat in range(4):
            obs = state.observation(seat)
            assert set(obs) == keys
            phases.add(obs["phase"])
            assert "None" not in repr(obs) and "null" not in json.dumps(obs)
        if state.is_terminal():
            break
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    assert phases == {"play", "pick", "over"}


def test_determinize_keeps_voids_and_twhist_cards() -> None:
    """A re-deal for seat 0 never gives a seat a colour it has shown it lacks (TH-3.3), keeps
    hand sizes and the Twhist cards, and leaves seat 0's observation unchanged."""
    state = position(4, {0: ["red 5", "yellow 1", "blue 3"],
                         1: ["green 1", "yellow 2", "blue 4"],
                         2: ["red 1", "red 2", "green 2"],
                         3: ["red 3", "yellow 3", "green 3"]})
    play(state, ["red 5", "green 1", "red 1", "red 3"])  # seat 1 shows it has no red
    pick(state, ["red 5"])
    rng = random.Random(1)
    seen_change = False
    for _ in range(200):
        other = state.determinize(0, rng)
        assert isinstance(other, TwhistState)
        assert other.observation(0) == state.observation(0)
        assert not any(other.t.colour_of[c] == 0 for c in other.hands[1])
        assert [len(h) for h in other.hands] == [len(h) for h in state.hands]
        assert other.twhist == state.twhist
        seen_change |= other.hands != state.hands
    assert seen_change


def test_determinize_finds_the_only_consistent_deal() -> None:
    """When the shown voids leave one way to deal the hidden cards, every re-deal is it
    (rejection sampling gives up; the matching fallback must respect every void)."""
    hands = {0: ["red 5"], 1: ["red -1", "red 0", "red 1"], 2: ["yellow -1", "yellow 0",
             "yellow 1"], 3: ["green -1", "green 0", "green 1"]}
    state = position(4, hands)
    colours = {1: 0, 2: 1, 3: 2}  # seat -> the only colour it may hold
    for seat, colour in colours.items():
        state.voids[seat] = 0b1111 & ~(1 << colour)
    rng = random.Random(7)
    for _ in range(50):
        other = state.determinize(0, rng)
        assert isinstance(other, TwhistState)
        assert other.hands == state.hands
