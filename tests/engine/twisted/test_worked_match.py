"""Small Twisted rounds checked field by field: every observation and public-view
field at each phase, every event's payload, every label and illegal-move text, and
the scoring options at values other than their defaults.

Positions are built by hand (``helpers.table``); every expected value below is
worked out from docs/rules/twisted.md, not read back from the engine.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from twistarena import engine
from twistarena.engine import IllegalAction
from twistarena.engine.twisted.cards import DECK
from twistarena.engine.twisted.state import TwistedState

from .helpers import table

TAKE = 200


def seat(s: int, hand: int, plus: list[int] | None = None, minus: list[int] | None = None,
         score: int = 0, total: int = 0) -> dict[str, Any]:
    return {"seat": s, "hand_count": hand, "plus_pile": plus or [], "minus_pile": minus or [],
            "minus_face_down": 0, "round_score": score, "total": total}


def view(**fields: Any) -> dict[str, Any]:
    """A two-player view of round 1 of 1 started by seat 0; ``fields`` override."""
    out = {"game": "twisted", "seat": -1, "phase": "play", "to_act": [0], "scores": [0, 0],
           "round": 1, "rounds": 1, "starter": 0, "turn": 0, "hand": [], "row": [],
           "extend_distance": 10, "extend_low": -1, "extend_high": -1, "draw_pile": 2,
           "expert": False, "seats": [seat(0, 3), seat(1, 3)]}
    out.update(fields)
    return out


def started(hands: list[list[int]], row: list[int], pile: list[int] | None, starter: int,
            options: dict[str, Any]) -> TwistedState:
    state = table(hands, row=row, pile=pile, turn=starter, options=options)
    state.first_starter = state.starter = starter  # TW-2.2 draws it at random
    state.events.clear()
    return state


def reason(state: TwistedState, seat: int, action: int) -> str:
    error = state.check(seat, action)
    assert isinstance(error, IllegalAction) and error.reason == IllegalAction.ILLEGAL
    with pytest.raises(IllegalAction):
        state.apply(seat, action)
    return str(error)


def test_a_round_extend_twist_take_then_over() -> None:
    """TW-3.1 (start, extend within 10), TW-3.4 (draw the top card), TW-3.2 (twist the
    partner out), TW-4.1 (a take with no pile ends the round), TW-4.3 scores."""
    state = started([[12, 34, 43], [41, 55, 96]], [], [69, 15], 0, {"rounds": 1})
    assert state.observation(0) == view(seat=0, hand=[12, 34, 43])
    assert state.public_view() == view()
    assert [a.to_json() for a in state.legal_actions(0)] == [
        {"id": c, "label": f"start the row with {c}", "payload": {"kind": "extend", "card": c}}
        for c in (12, 34, 43)]
    state.apply(0, 34)  # draws 15, the top of the pile (its last card)
    assert state.observation(1) == view(
        seat=1, to_act=[1], turn=1, hand=[41, 55, 96], row=[34], extend_low=24,
        extend_high=44, draw_pile=1)
    assert [a.to_json() for a in state.legal_actions(1)] == [
        {"id": 41, "label": "extend the row with 41", "payload": {"kind": "extend", "card": 41}},
        {"id": TAKE, "label": "take the row (1 card)", "payload": {"kind": "take", "cards": 1}}]
    state.apply(1, 41)  # draws 69: the pile is empty now
    assert state.observation(0)["hand"] == [12, 15, 43]
    # 43 extends 41 or twists 34 out; 12 and 15 are too far from 41
    assert list(state.legal_action_ids(0)) == [43, 143, TAKE]
    assert state.describe(0, 143).to_json() == {
        "id": 143, "label": "twist 34 out of the row with 43",
        "payload": {"kind": "twist", "card": 43, "partner": 34}}
    state.apply(0, 143)
    assert state.public_view() == view(
        to_act=[1], turn=1, row=[41], extend_low=31, extend_high=51, draw_pile=0,
        scores=[2, 0], seats=[seat(0, 2, plus=[34, 43], score=2), seat(1, 3)])
    assert list(state.legal_action_ids(1)) == [TAKE]  # 55, 69, 96: nothing within 10, no partner
    state.apply(1, TAKE)
    over = view(phase="over", to_act=[], turn=-1, draw_pile=0, scores=[2, -1],
                seats=[seat(0, 2, plus=[34, 43], score=2, total=2),
                       seat(1, 3, minus=[41], score=-1, total=-1)])
    assert state.public_view() == over
    assert state.observation(1) == {**over, "seat": 1, "hand": [55, 69, 96]}
    assert state.event_log(None) == [
        {"kind": "extend", "seat": 0, "card": 34, "starts_row": True},
        {"kind": "draw", "seat": 0, "draw_pile": 1},
        {"kind": "extend", "seat": 1, "card": 41, "starts_row": False},
        {"kind": "draw", "seat": 1, "draw_pile": 0},
        {"kind": "twist", "seat": 0, "card": 43, "partner": 34, "row_left": 1},
        {"kind": "take", "seat": 1, "cards": [41], "face_down": 0, "ends_round": True},
        {"kind": "round_end", "round": 1, "round_scores": [2, -1], "scores": [2, -1],
         "face_down_revealed": []},
        {"kind": "game_end", "scores": [2, -1], "winners": [0]},
    ]
    assert state.event_log(0)[1] == {"kind": "draw", "seat": 0, "draw_pile": 1, "card": 15}
    assert state.event_log(1)[1] == {"kind": "draw", "seat": 0, "draw_pile": 1}


def test_start_row_phase_and_the_next_round() -> None:
    """TW-3.3: the taker starts the new row (and only that); TW-4.1/TW-4.4: the round
    ends on a take with no pile, the totals carry into round 2, which seat 0 starts
    (TW-2.2: one seat further left than round 1's seat 1)."""
    state = started([[12, 13], [41, 42, 43]], [23, 65], [77], 1, {"rounds": 2})
    state.apply(1, TAKE)
    assert state.observation(1) == view(
        seat=1, phase="start_row", to_act=[1], turn=1, rounds=2, starter=1, hand=[41, 42, 43],
        draw_pile=1, scores=[0, -2], seats=[seat(0, 2), seat(1, 3, minus=[23, 65], score=-2)])
    assert [a.to_json() for a in state.legal_actions(1)] == [
        {"id": c, "label": f"start a new row with {c}", "payload": {"kind": "start", "card": c}}
        for c in (41, 42, 43)]
    text = "after taking the row you must start a new row with a card (TW-3.3)"
    assert reason(state, 1, TAKE) == text
    assert reason(state, 1, 143) == text
    state.apply(1, 41)  # draws the toad 77, the last card
    assert state.event_log(None)[-2:] == [
        {"kind": "start", "seat": 1, "card": 41, "starts_row": True},
        {"kind": "draw", "seat": 1, "draw_pile": 0}]
    state.apply(0, TAKE)  # 12 and 13 cannot extend 41 nor twist: -1 more
    round_end, round_start = state.event_log(None)[-2:]
    assert round_end == {"kind": "round_end", "round": 1, "round_scores": [-1, -2],
                         "scores": [-1, -2], "face_down_revealed": []}
    assert round_start == {"kind": "round_start", "round": 2, "starter": 0,
                           "draw_pile": 79 - 2 * 9}  # TW-2.1: 9 cards each
    seen = state.observation(0)
    assert (seen["round"], seen["starter"], seen["turn"], seen["scores"], seen["row"]) == (
        2, 0, 0, [-1, -2], [])
    assert [(s["total"], s["round_score"], s["hand_count"]) for s in seen["seats"]] == [
        (-1, 0, 9), (-2, 0, 9)]


def test_scoring_options_away_from_their_defaults() -> None:
    """TW-4.3 with ``plus_point`` 3, ``minus_point`` 2, ``toad_penalty`` 7 and TW-3.1's
    ``extend_distance`` 7: two plus cards and a minus pile of a toad and a plain card
    score 2 * 3 - (7 + 2) = -3 (with the defaults: 2 - 5 - 1 = -4); a second twist
    adds two more plus cards: 4 * 3 - 9 = 3."""
    options = {"rounds": 1, "plus_point": 3, "minus_point": 2, "toad_penalty": 7,
               "extend_distance": 7}
    state = started([[14, 27, 48], [12, 35]], [41], [], 0, options)
    state.plus[0], state.minus[0] = [34, 43], [55, 61]
    seen = state.observation(0)
    assert (seen["extend_distance"], seen["extend_low"], seen["extend_high"]) == (7, 34, 48)
    assert seen["seats"][0]["round_score"] == -3 and seen["scores"] == [-3, 0]
    assert list(state.legal_action_ids(0)) == [48, 114, TAKE]  # 27 is 14 away
    assert reason(state, 0, 27) == "27 is more than 7 away from the rightmost card 41 (TW-3.1)"
    state.apply(0, 114)  # the row's last card twisted away with no pile: the round ends
    assert state.event_log(None)[-2] == {
        "kind": "round_end", "round": 1, "round_scores": [3, 0], "scores": [3, 0],
        "face_down_revealed": []}
    assert state.public_view()["seats"][0]["plus_pile"] == [34, 43, 41, 14]
    assert state.scores() == [3, 0] and state.winners() == [0]


def test_the_same_seed_deals_the_same_match() -> None:
    """The conventions (docs/rules/twisted.md): options, seed and moves fix the match;
    TW-2.1: 9 cards each with 3 players, the other 52 in the pile."""
    state, again = engine.make("twisted", 3, 17), engine.make("twisted", 3, 17)
    assert state.seed == 17 and state.observation(0) == again.observation(0)
    assert state.event_log(1) == again.event_log(1)
    assert state.public_view()["draw_pile"] == 79 - 27


def test_illegal_moves_and_labels_say_which_rule() -> None:
    """TW-1.2, TW-3.1, TW-3.2 and TW-3.3 each explain a refusal."""
    state = started([[12, 55, 96], [41, 42]], [], [15, 16, 17], 0, {})
    assert reason(state, 0, TAKE) == "taking is allowed only when the row is not empty (TW-3.3)"
    state.apply(0, 12)
    assert reason(state, 1, 112) == "you do not hold 12 (TW-3.2)"  # a twist with 12
    assert reason(state, 1, 13) == "you do not hold 13 (TW-3.1)"
    assert reason(state, 1, 41) == "41 is more than 10 away from the rightmost card 12 (TW-3.1)"
    state.apply(1, TAKE)
    state.apply(1, 41)
    assert reason(state, 0, 155) == "55 is a toad: toads can never be twisted (TW-1.2, TW-3.2)"
    assert reason(state, 0, 196) == "the twist partner 69 of 96 is not in the row (TW-3.2)"
    assert reason(state, 0, 150) == ("150 is not a Twisted action: 12..98 plays a card,"
                                     " 100+card twists with that card, 200 takes the row")
    assert state.describe(0, 155).to_json() == {
        "id": 155, "label": "twist with 55 (a toad: never possible)",
        "payload": {"kind": "twist", "card": 55, "partner": -1}}
    assert state.describe(0, 150).to_json() == {
        "id": 150, "label": "150 is not a Twisted action", "payload": {"kind": "none"}}
    state.row.append(42)
    assert state.describe(0, TAKE).label == "take the row (2 cards)"


def test_zones_and_determinize_with_an_unseen_expert_card() -> None:
    """TW-4.5: the expert take puts the pile's top card face-down, unseen; every card
    stays in exactly one zone, and a determinized copy re-deals what the seat cannot
    see (the other hand, the pile, the face-down card) without losing one."""
    state = started([[12, 13, 14], [21, 23, 24]], [31], None, 0, {"expert": True})
    top = state.pile[-1]
    state.apply(0, TAKE)  # a one-card row: the top of the pile goes face-down too
    state.face_down[1].append(state.pile.pop())  # as if seat 1 had done the same
    zones = state.card_zones()
    assert (zones["row"], zones["minus_0"], zones["face_down_0"], zones["hand_1"],
            zones["plus_1"]) == ([], [31], [top], [21, 23, 24], [])
    assert sorted(c for cards in zones.values() for c in cards) == list(DECK)
    assert sorted(zones) == sorted(["draw_pile", "row"] + [
        f"{zone}_{s}" for zone in ("hand", "plus", "minus", "face_down") for s in (0, 1)])
    assert zones["draw_pile"] == state.pile and len(state.pile) == 79 - 7 - 2
    assert state.observation(0)["seats"][0]["minus_face_down"] == 1
    copy = state.determinize(0, random.Random(2))
    assert isinstance(copy, TwistedState)
    zones = copy.card_zones()
    assert sorted(c for cards in zones.values() for c in cards) == list(DECK)
    assert [len(zones[z]) for z in ("face_down_0", "face_down_1", "hand_1", "draw_pile")] == [
        1, 1, 3, len(state.pile)]
    assert copy.observation(0) == state.observation(0)
    assert list(copy.legal_action_ids(0)) == [12, 13, 14]  # TW-3.3: start the new row


def test_option_bounds_and_the_vocabulary_version() -> None:
    """TW-2.1 / TW-3.1 / TW-4.4 options at their edges: one card each and a distance of
    0 are playable; more cards than the deck (79, TW-1.1) holds, a negative distance
    and zero rounds are refused with the bound. A label changes only with the phase
    or the row's length, which is what the vocabulary version follows."""
    small = engine.make("twisted", 2, 3, {"hand_size": {"2": 1}, "extend_distance": 0})
    assert [len(h) for h in small.hands] == [1, 1] and small.distance == 0
    with pytest.raises(engine.InvalidOptions,
                       match=r"^hand_size for 3 players must be 1\.\.26, got 27$"):
        engine.make("twisted", 3, 3, {"hand_size": {"3": 27}})
    options = engine.game("twisted").defaults
    for key, value, text in (("extend_distance", -1, "extend_distance must be >= 0, got -1"),
                             ("rounds", 0, "rounds must be >= 1, got 0")):
        with pytest.raises(engine.InvalidOptions, match=f"^{text}$"):
            TwistedState(2, 3, {**options, key: value})
    state = started([[12, 13, 14], [21, 23, 24]], [], None, 0, {})
    empty = state.vocabulary_version()
    assert state.describe(0, 12).label == "start the row with 12"
    state.apply(0, 12)
    assert state.vocabulary_version() != empty
    assert state.describe(1, 21).label == "extend the row with 21"
    twin = started([[15, 16, 17], [21, 23, 24]], [], None, 0, {})
    twin.apply(0, 15)
    assert twin.vocabulary_version() == state.vocabulary_version()
