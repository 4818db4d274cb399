"""What each seat may know (the conventions of docs/rules/, TW-3.5), events and narration."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from twistarena import engine
from twistarena.engine.twisted import GAME, TwistedState
from twistarena.engine.twisted.state import TAKE, TWIST_BASE

from .helpers import table

CARD_KEYS = ("hand", "card", "partner", "cards")


def _random_moves(state: TwistedState, moves: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(moves):
        if state.is_terminal() or state.round > 1:
            return
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))


def _cards_seen(events: list[dict[str, Any]]) -> set[int]:
    seen: set[int] = set()
    for e in events:
        for key in CARD_KEYS:
            value = e.get(key)
            if isinstance(value, list):
                seen.update(value)
            elif isinstance(value, int) and value >= 0:
                seen.add(value)
    return seen


def _walk(value: Any, path: str = "") -> list[str]:
    """Paths of values that the protobuf mirror could not carry."""
    bad = []
    if value is None:
        bad.append(path)
    elif isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str) or not k.replace("_", "a").isalnum() or k != k.lower():
                bad.append(f"{path}.{k}")
            bad += _walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, list):
                bad.append(f"{path}[{i}]")
            bad += _walk(v, f"{path}[{i}]")
    elif not isinstance(value, int | str | bool):
        bad.append(path)
    return bad


@pytest.mark.parametrize("seed", range(20))
def test_others_hands_and_pile_never_reach_a_seat(seed: int) -> None:
    """Conventions / TW-3.5: a seat's observation and its event log never show another
    hand or the draw pile; hidden cards were never shown to it."""
    players = 2 + seed % 3
    state = engine.make("twisted", players, seed, {"rounds": 1})
    assert isinstance(state, TwistedState)
    _random_moves(state, 10 + seed * 3, seed)
    for seat in range(players):
        hidden = set(state.pile)
        for other in range(players):
            if other != seat:
                hidden |= set(state.hands[other])
        assert not hidden & _cards_seen(state.event_log(seat))
        obs = state.observation(seat)
        assert obs["hand"] == state.hands[seat]
        seen_in_obs = set(obs["hand"]) | set(obs["row"])
        for info in obs["seats"]:
            seen_in_obs |= set(info["plus_pile"]) | set(info["minus_pile"])
        assert not hidden & seen_in_obs
    assert not (set(state.pile) | {c for h in state.hands for c in h}) & _cards_seen(
        state.event_log(None)
    )


def test_states_differing_only_in_hidden_cards_look_the_same() -> None:
    """Conventions: swapping cards between another hand and the draw pile, or reordering
    the pile, changes nothing that seat 0 or a spectator sees; seat 1 does see it."""
    state = engine.make("twisted", 3, 5)
    assert isinstance(state, TwistedState)
    _random_moves(state, 12, 5)
    other = state.clone()
    assert isinstance(other, TwistedState)
    a, b = other.hands[1][0], other.pile[0]
    other.hands[1] = sorted([b, *other.hands[1][1:]])
    other.pile[0] = a
    other.pile.reverse()
    other.hands[2], other.pile[:len(other.hands[2])] = (
        sorted(other.pile[:len(other.hands[2])]), other.hands[2])
    assert other.card_zones() != state.card_zones()
    assert other.observation(0) == state.observation(0)
    assert other.public_view() == state.public_view()
    assert other.observation(1) != state.observation(1)


def test_observation_holds_what_the_seat_may_know() -> None:
    """TW-3.5: own hand, the row, every plus and minus pile, pile count, hand counts."""
    state = table([[35, 43, 61], [71, 72, 73]], row=[34, 41])
    state.plus[1] = [49, 94]
    state.minus[1] = [22]
    obs = state.observation(0)
    assert obs["game"] == "twisted" and obs["seat"] == 0 and obs["to_act"] == [0]
    assert obs["hand"] == [35, 43, 61] and obs["row"] == [34, 41]
    assert (obs["extend_low"], obs["extend_high"]) == (31, 51)
    assert obs["draw_pile"] == len(state.pile)
    assert obs["seats"][1] == {
        "seat": 1, "hand_count": 3, "plus_pile": [49, 94], "minus_pile": [22],
        "round_score": -3, "total": 0, "minus_face_down": 0,
    }
    assert obs["scores"] == [0, -3]
    view = state.public_view()
    assert view["seat"] == -1 and view["hand"] == []
    assert set(view) == set(obs)


def test_an_expert_card_shows_as_a_count_until_the_round_is_scored() -> None:
    """TW-4.5 [decided]: the extra card goes face-down unseen by anyone, the taker
    included; views show how many such cards a minus pile holds, running scores leave
    them out, and the round's scoring reveals and counts them."""
    state = table([[12, 13], [14, 15]], row=[57], pile=[20, 83],
                  options={"expert": True, "rounds": 1})
    state.apply(0, TAKE)
    views = [state.observation(0), state.observation(1), state.public_view()]
    for view in views:
        assert view["seats"][0]["minus_pile"] == [57]
        assert view["seats"][0]["minus_face_down"] == 1
        assert view["seats"][0]["round_score"] == -1  # 57 only
        assert 83 not in json.dumps(view).replace(",", " ").split()
    for seat in (0, 1, None):
        assert 83 not in _cards_seen(state.event_log(seat))
    assert state.scores() == [-1, 0]
    # The round ends: the face-down card is revealed and counts (TW-4.3).
    state.apply(0, 12)  # a new row (TW-3.3)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, TAKE if TAKE in state.legal_action_ids(seat)
                    else state.legal_action_ids(seat)[0])
    end = next(e for e in state.event_log(None) if e["kind"] == "round_end")
    assert {"seat": 0, "cards": [83]} in end["face_down_revealed"]
    assert 83 in state.minus[0] and not state.face_down[0]
    assert "83" in (GAME.narrate(end) or "")


@pytest.mark.parametrize("seed", range(6))
def test_views_are_proto_friendly_and_keep_their_keys(seed: int) -> None:
    """Observations, views and events: fixed snake_case keys, no None, no list of lists."""
    state = engine.make("twisted", 2 + seed % 3, seed, {"expert": seed % 2 == 0})
    keys = set(state.public_view())
    seat_keys = set(state.public_view()["seats"][0])
    rng = random.Random(seed)
    while True:
        for seat in (None, *range(state.num_players)):
            view = state.public_view() if seat is None else state.observation(seat)
            assert set(view) == keys and _walk(view) == []
            assert all(set(s) == seat_keys for s in view["seats"])
        if state.is_terminal():
            break
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    for seat in (None, *range(state.num_players)):
        for event in state.event_log(seat):
            assert _walk(event) == [], event
    assert state.public_view()["phase"] == "over" and state.public_view()["to_act"] == []


def test_labels_payloads_and_narration() -> None:
    """Every action has a label and a JSON payload; every event kind has a line."""
    state = table([[94, 45, 12], [71, 72, 73]], row=[34, 49])
    labels = {a.id: (a.label, dict(a.payload)) for a in state.legal_actions(0)}
    assert labels[TWIST_BASE + 94] == (
        "twist 49 out of the row with 94", {"kind": "twist", "card": 94, "partner": 49})
    assert labels[TAKE] == ("take the row (2 cards)", {"kind": "take", "cards": 2})
    assert labels[45] == ("extend the row with 45", {"kind": "extend", "card": 45})
    json.dumps([a.to_json() for a in state.legal_actions(0)])
    state.apply(0, TWIST_BASE + 94)
    state.apply(1, TAKE)
    assert state.legal_actions(1)[0].payload == {"kind": "start", "card": 71}
    state.apply(1, 71)
    lines = [GAME.narrate(e) for e in state.event_log(0)]
    assert lines[-5:] == [
        "Seat 0 twists 49 out of the row with 94 (+2)",
        f"Seat 0 draws {state.events[-4].private[0]['card']} ({len(state.pile) + 1} left)",
        "Seat 1 takes the row (1 card: 34)",
        "Seat 1 starts a new row with 71",
        None,  # seat 1's draw is not shown to seat 0
    ]


def test_narration_of_a_whole_game() -> None:
    """Every event of a full match narrates without error; round scores one line per seat."""
    state = engine.make("twisted", 3, 9, {"expert": True})
    _random_moves_all(state, 9)
    lines = [GAME.narrate(e) for e in state.event_log(1)]
    text = [line for line in lines if line]
    assert text[0].startswith("Round 1: seat ") and "your hand:" in text[0]
    ends = [line for line in text if line.startswith("Round 1 over:")]
    assert len(ends) == 1 and len(ends[0].splitlines()) == 4
    assert text[-1].startswith("Game over: seat")


def _random_moves_all(state: engine.State, seed: int) -> None:
    rng = random.Random(seed)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))


def test_determinize_keeps_the_view_and_redeals() -> None:
    """determinize(seat) keeps what the seat sees and re-deals other hands and the pile."""
    state = engine.make("twisted", 4, 3)
    assert isinstance(state, TwistedState)
    _random_moves(state, 8, 3)
    other = state.determinize(2, random.Random(1))
    assert isinstance(other, TwistedState)
    assert other.observation(2) == state.observation(2)
    assert other.hands[2] == state.hands[2] and other.row == state.row
    assert other.hands[0] != state.hands[0] or other.pile != state.pile
    assert [len(h) for h in other.hands] == [len(h) for h in state.hands]
