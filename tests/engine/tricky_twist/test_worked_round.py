"""A small Tricky Twist round checked field by field: every observation and
public-view field at each phase (reserve, reserve window, play, bonus pick, take
back, end bonus, the next round, game over), every event's payload, every label
and the illegal-move text of each phase; then the end-of-round bonus steps.

The positions are set by hand and every expected value is worked out from
docs/rules/tricky_twist.md, not read back from the engine. Card ids are
``family * 12 + value - 1`` with the families moon, sun, square, circle.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from twistarena import engine
from twistarena.engine import IllegalAction
from twistarena.engine.tricky_twist import state as st
from twistarena.engine.tricky_twist.cards import BLANK, DECK_SIZE, FLIP
from twistarena.engine.tricky_twist.data import DEFAULTS, SCORING_CARDS

from .helpers import act, c, cs, end_position, new, play_position

FAMILY = ("moon", "sun", "square", "circle")
#: TT-6.4: odd_values shows the framed faces.
FRAMED = ["odd", "even", "any", "modifier"]
SUPPLY = [{"bonus": b, "face": b} for b in ("take_back", "flip", "blank", "plus")] + [
    {"bonus": f"v{i + 1}", "face": face} for i, face in enumerate(FRAMED)]
NO_DECISION = {"bonus": "", "face": "", "index": -1, "pick_queue": [], "window_queue": []}


def card(spec: str) -> dict[str, Any]:
    value, family = spec.split()
    return {"id": FAMILY.index(family) * 12 + int(value) - 1, "family": family,
            "value": int(value)}


def cards(*specs: str) -> list[dict[str, Any]]:
    return [card(s) for s in specs]


def player(s: int, hand: int, reserve: int, **fields: Any) -> dict[str, Any]:
    out = {"seat": s, "hand_count": hand, "reserve_count": reserve, "known_in_hand": [],
           "tricks": [], "false_tricks": [], "bonuses": [], "score": 0, "void": []}
    out.update(fields)
    return out


def decision(kind: str, seat: int = -1, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "seat": seat, **NO_DECISION, **fields}


def view(**fields: Any) -> dict[str, Any]:
    """The public view of round 1 of 3 before anyone acts; ``fields`` override."""
    out = {"game": "tricky_twist", "seat": -1, "num_players": 3, "phase": "reserve",
           "to_act": [0, 1, 2], "first_player": 0, "leader": 0, "hand": [], "reserve": [],
           "trick": [], "led_family": "", "decision": decision("reserve"), "round": 1,
           "rounds": 3, "scoring_card": "odd_values", "scoring_cards_left": 2,
           "past_scoring_cards": [], "scores": [0, 0, 0], "supply": SUPPLY, "bonus_out": [],
           "end_choices": [], "last_round": [],
           "players": [player(s, 3, 0) for s in range(3)]}
    out.update(fields)
    return out


def reason(state: st.TrickyTwistState, seat: int, action: int) -> str:
    error = state.check(seat, action)
    assert isinstance(error, IllegalAction) and error.reason == IllegalAction.ILLEGAL
    with pytest.raises(IllegalAction):
        state.apply(seat, action)
    return str(error)


def labels(state: st.TrickyTwistState, seat: int) -> list[tuple[int, str]]:
    return [(a.id, a.label) for a in state.legal_actions(seat)]


def dealt() -> st.TrickyTwistState:
    """3 players, 3 cards each and a reserve of 1 (TT-3.2, TT-3.3 at smaller sizes), the
    same scoring card every round, seat 0 first (TT-2.2 draws it at random)."""
    state = new(3, options={"hand_size_3p": 3, "reserve_size": 1,
                            "scoring_cards": ["odd_values"] * 3})
    state.first_player = state.leader = state.turn = 0
    state.hands = [cs("7 moon", "9 moon", "2 sun"), cs("5 moon", "7 square", "1 circle"),
                   cs("12 moon", "3 sun", "4 square")]
    used = {x for h in state.hands for x in h}
    state.box = [x for x in range(DECK_SIZE) if x not in used]
    state.events.clear()
    return state


def test_a_round_through_every_phase() -> None:
    """TT-3.3 reserve, TT-4.1 window, TT-4.3 following, TT-5.1/5.2 resolution, TT-5.4
    a 7 earns a bonus pick, TT-6.1a Take back, TT-5.6 end check, TT-6.1b Flip with its
    top card, TT-7.2 scoring, TT-2.3 the next round."""
    state = dealt()
    assert state.observation(0) == view(
        seat=0, hand=cards("7 moon", "9 moon", "2 sun"))
    assert labels(state, 0) == [(54, "reserve 7 moon"), (56, "reserve 9 moon"),
                                (61, "reserve 2 sun")]  # 48 + card
    assert state.describe(0, 56).payload == {"kind": "reserve", "card": card("9 moon")}
    assert reason(state, 0, 6) == (
        "choose a card of your hand for your reserve, one at a time (TT-3.3); "
        "legal ids [54, 56, 61]")
    act(state, 0, 56)
    assert state.to_act() == (1, 2)
    error = state.check(0, 54)
    assert error is not None and (error.reason, str(error)) == (
        "not_to_act", "seat 0 is not to act; waiting for seat(s) 1, 2")  # TT-3.3
    act(state, 1, 48 + c("1 circle"))
    act(state, 2, 48 + c("4 square"))
    # TT-4.1: every reserve holds a card, so the window runs 0, 1, 2 from the leader.
    act(state, 0, st.DECLINE)
    players = [player(s, 2, 1) for s in range(3)]
    assert state.observation(1) == view(
        seat=1, phase="reserve_window", to_act=[1], hand=cards("5 moon", "7 square"),
        reserve=cards("1 circle"), players=players,
        decision=decision("reserve_window", 1, window_queue=[1, 2]))
    assert labels(state, 1) == [(96, "take reserve card"), (97, "decline")]
    assert reason(state, 1, 4) == (
        "before the trick you may only take the top reserve card (96) or decline (97) (TT-4.1)")
    act(state, 1, st.TAKE_RESERVE)
    act(state, 2, st.DECLINE)
    assert state.event_log(None) == [
        {"kind": "reserve_pick", "seat": 0, "count": 1},
        {"kind": "reserve_pick", "seat": 1, "count": 1},
        {"kind": "reserve_pick", "seat": 2, "count": 1},
        {"kind": "reserves_ready"},
        {"kind": "reserve_decline", "seat": 0},
        {"kind": "reserve_take", "seat": 1, "reserve_count": 0},
        {"kind": "reserve_decline", "seat": 2},
    ]
    assert state.event_log(1)[1]["card"] == card("1 circle")
    assert state.event_log(1)[5]["card"] == card("1 circle")
    # Trick 1: seat 0 leads the 7 moon; both others hold a moon and must follow.
    act(state, 0, c("7 moon"))
    assert labels(state, 1) == [(4, "play 5 moon")]
    assert reason(state, 1, c("7 square")) == (
        "you hold a moon card and must follow the led family moon; 7 square is not allowed"
        " (TT-4.3)")
    assert reason(state, 1, c("1 moon")) == (
        "you do not hold 1 moon; play a card from your hand (TT-4.2)")
    assert reason(state, 1, st.TAKE_RESERVE) == (
        "a reserve card may only be taken in the window before a trick's first card,"
        " at most one per trick (TT-4.1)")
    assert reason(state, 1, st.DECLINE) == "play a card from your hand: ids [4] (TT-4.2)"
    seen = state.observation(1)
    assert (seen["trick"], seen["led_family"], seen["decision"]) == (
        [{"seat": 0, "card": card("7 moon")}], "moon", decision("play", 1))
    act(state, 1, c("5 moon"))
    act(state, 2, c("12 moon"))
    # The 12 wins all three moons, the 7 among them: seat 2 may take a bonus (TT-5.4).
    trick_1 = {"cards": cards("7 moon", "5 moon", "12 moon"), "blank": False}
    players = [player(0, 1, 1), player(1, 2, 0), player(2, 1, 1, tricks=[trick_1])]
    assert state.public_view() == view(
        phase="bonus_pick", to_act=[2], leader=2, players=players,
        decision=decision("bonus_pick", 2, pick_queue=[2]))
    assert labels(state, 2) == [
        (97, "decline"), (100, "take bonus take_back"), (101, "take bonus flip"),
        (102, "take bonus blank"), (103, "take bonus plus"), (104, "take bonus v1 (odd)"),
        (105, "take bonus v2 (even)"), (106, "take bonus v3 (any)"),
        (107, "take bonus v4 (modifier)")]
    assert state.describe(2, 104).payload == {"kind": "bonus", "bonus": "v1", "face": "odd"}
    assert reason(state, 2, 3) == (
        "for your 7 you may take a bonus card still in the supply or decline (TT-5.4);"
        " legal ids [97, 100, 101, 102, 103, 104, 105, 106, 107]")
    act(state, 2, 101)  # Flip
    # Trick 2, led by the winner: the window skips seat 1's empty reserve (TT-4.1).
    assert state.to_act() == (2,) and state.observation(2)["decision"] == decision(
        "reserve_window", 2, window_queue=[2, 0])
    act(state, 2, st.DECLINE)
    act(state, 0, st.TAKE_RESERVE)
    act(state, 2, c("3 sun"))
    act(state, 0, c("2 sun"))
    assert labels(state, 1) == [(30, "play 7 square"), (36, "play 1 circle")]  # no sun
    act(state, 1, c("7 square"))
    # Seat 1's 7 square comes back as a false trick (TT-5.2) and earns it a pick.
    act(state, 1, 100)  # Take back: used at once (TT-5.5)
    false_7 = {"family": "square", "value": 7, "cards": cards("7 square"), "source": "card",
               "modifier": 0}
    trick_2 = {"cards": cards("3 sun", "2 sun"), "blank": False}
    flip = [{"bonus": "flip", "face": "flip"}]
    players = [player(0, 1, 0), player(1, 1, 0, false_tricks=[false_7], void=["sun"]),
               player(2, 0, 1, tricks=[trick_1, trick_2], bonuses=flip)]
    assert state.public_view() == view(
        phase="take_back", to_act=[1], leader=2, players=players, supply=SUPPLY[2:],
        bonus_out=["take_back"], decision=decision("take_back", 1))
    assert labels(state, 1) == [(97, "decline"), (150, "take back 7 square")]  # 120 + 30
    zones = state.card_zones()
    assert (zones["false_tricks_1"], zones["tricks_2"], zones["trick"], zones["reserve_2"]) == (
        [30], cs("7 moon", "5 moon", "12 moon", "3 sun", "2 sun"), [], [c("4 square")])
    assert sorted(x for cards in zones.values() for x in cards) == list(range(DECK_SIZE))
    declined = state.clone()
    act(declined, 1, st.DECLINE)  # TT-6.1a: declining is allowed too
    assert declined.event_log(None)[-1] == {
        "kind": "take_back", "seat": 1, "declined": True,
        "card": {"id": -1, "family": "", "value": -1}}
    assert reason(state, 1, 120 + c("3 sun")) == (
        "Take back returns one of your own false tricks to your hand, or you decline"
        " (TT-6.1a); legal ids [97, 150]")
    act(state, 1, 150)
    # Seat 2's hand is empty: the round ends (TT-5.6) and seat 2 decides its Flip.
    players = [player(0, 1, 0),
               player(1, 2, 0, known_in_hand=cards("7 square"), void=["sun"]),
               player(2, 0, 1, tricks=[trick_1, trick_2], bonuses=flip)]
    end = view(phase="end_bonus", to_act=[2], leader=2, players=players, supply=SUPPLY[2:],
               bonus_out=["take_back"],
               decision=decision("flip", 2, bonus="flip", face="flip"))
    assert state.public_view() == end
    assert labels(state, 2) == [(97, "decline"), (200, "flip trick 1 to a false trick"),
                                (201, "flip trick 2 to a false trick")]
    assert state.describe(2, 200).payload == {"kind": "flip_trick", "trick": 0}
    act(state, 2, 200)
    assert state.public_view()["decision"] == decision("flip_top", 2, bonus="flip",
                                                       face="flip", index=0)
    assert labels(state, 2) == [(304, "5 moon on top"), (306, "7 moon on top"),
                                (311, "12 moon on top")]
    assert state.describe(2, 311).payload == {"kind": "flip_top", "card": card("12 moon")}
    assert reason(state, 2, 97) == (
        "Flip turns one of your tricks into a false trick or back, then the top card"
        " (TT-6.1b, TT-6.5); legal ids [304, 306, 311]")
    act(state, 2, 311)
    # TT-7.2: seat 2 has 1 trick and 1 false trick: 1 + one balanced pair (5) = 6; the
    # false trick's 12 is even, so odd_values adds nothing (TT-7.5).
    flipped = {"seat": 2, "bonus": "flip", "face": "flip", "choice": "trick_to_false",
               "family": "moon", "value": 12, "delta": 0,
               "cards": cards("12 moon", "7 moon", "5 moon")}
    rows = [{"seat": s, "tricks": 0, "false_tricks": 0, "base": 0, "plus": 0, "card": 0,
             "round_total": 0, "total": 0} for s in (0, 1)] + [
        {"seat": 2, "tricks": 1, "false_tricks": 1, "base": 6, "plus": 0, "card": 0,
         "round_total": 6, "total": 6}]
    assert state.event_log(None)[7:] == [
        {"kind": "play", "seat": 0, "card": card("7 moon")},
        {"kind": "play", "seat": 1, "card": card("5 moon")},
        {"kind": "play", "seat": 2, "card": card("12 moon")},
        {"kind": "trick", "winner": 2, "cards": cards("7 moon", "5 moon", "12 moon"),
         "false_tricks": []},
        {"kind": "bonus_take", "seat": 2, "bonus": "flip", "face": "flip"},
        {"kind": "reserve_decline", "seat": 2},
        {"kind": "reserve_take", "seat": 0, "reserve_count": 0},
        {"kind": "play", "seat": 2, "card": card("3 sun")},
        {"kind": "play", "seat": 0, "card": card("2 sun")},
        {"kind": "play", "seat": 1, "card": card("7 square")},
        {"kind": "trick", "winner": 2, "cards": cards("3 sun", "2 sun"),
         "false_tricks": [{"seat": 1, "card": card("7 square")}]},
        {"kind": "bonus_take", "seat": 1, "bonus": "take_back", "face": "take_back"},
        {"kind": "take_back", "seat": 1, "declined": False, "card": card("7 square")},
        {"kind": "bonus_use", **flipped},
        {"kind": "round_scored", "round": 1, "scoring_card": "odd_values", "rows": rows},
        {"kind": "round_start", "round": 2, "scoring_card": "odd_values", "first_player": 1,
         "faces": FRAMED},
    ]
    # TT-2.3: round 2 reveals the next card; seat 1 (left of seat 0) is first. A fresh
    # deal of 3 cards each; the bonus cards are all back in the supply (TT-3.1).
    round_2 = state.public_view()
    assert round_2 == view(first_player=1, leader=1, round=2, scoring_cards_left=1,
                           past_scoring_cards=["odd_values"], scores=[0, 0, 6],
                           last_round=rows,
                           players=[player(s, 3, 0, score=[0, 0, 6][s]) for s in range(3)])
    # TT-2.1: the third round is the last; its end is the game's end.
    state.round_no = 2
    end_position(state, "odd_values", first_player=2)
    over = state.public_view()
    assert (over["phase"], over["to_act"], over["decision"], over["round"],
            over["scoring_cards_left"], over["past_scoring_cards"], over["scores"]) == (
        "over", [], decision(""), 3, 0, ["odd_values", "odd_values"], [0, 0, 6])
    assert state.event_log(None)[-1] == {"kind": "game_over", "scores": [0, 0, 6],
                                         "winners": [2]}


def test_end_of_round_bonus_steps_in_order_with_their_records() -> None:
    """TT-6.5: one holder at a time, clockwise from the round's first player (seat 1),
    each holder's Flip first, then Blank, the faces, the Modifier last; every choice is
    recorded publicly. Then TT-7.2 and TT-7.5 (longest run) score the result."""
    state = new(4)
    end_position(state, "longest_run", first_player=1,
                 tricks={0: [cs("5 moon")], 3: [cs("9 sun", "10 sun")]},
                 false={0: cs("3 square"), 3: cs("8 circle")},
                 held={0: [BLANK, 7], 1: [4], 2: [6], 3: [FLIP, 5]})
    assert (state.to_act(), labels(state, 1)) == ((1,), [
        (97, "decline"), (370, "value 1"), (372, "value 3"), (374, "value 5"),
        (376, "value 7"), (378, "value 9"), (380, "value 11")])  # TT-6.3 Odd
    assert reason(state, 1, 371) == (
        "the Odd face takes one of the listed odd values (TT-6.3, TT-6.5);"
        " legal ids [97, 370, 372, 374, 376, 378, 380]")
    act(state, 1, 374)
    assert state.public_view()["players"][1]["false_tricks"] == [
        {"family": "", "value": 5, "cards": [], "source": "odd", "modifier": 0}]
    assert labels(state, 2) == [(97, "decline"), *((369 + v, f"value {v}") for v in range(1, 13))]
    act(state, 2, st.DECLINE)
    assert labels(state, 3) == [(97, "decline"), (200, "flip trick 1 to a false trick"),
                                (293, "flip false trick 8 circle to a trick")]  # 250 + 43
    act(state, 3, 293)
    assert labels(state, 3) == [(97, "decline"), *((369 + v, f"value {v}") for v in
                                                   (2, 4, 6, 8, 10, 12))]
    act(state, 3, 377)
    seen = state.public_view()["players"][3]
    assert (seen["tricks"], seen["false_tricks"]) == (
        [{"cards": cards("9 sun", "10 sun"), "blank": False},
         {"cards": cards("8 circle"), "blank": False}],
        [{"family": "", "value": 8, "cards": [], "source": "even", "modifier": 0}])
    assert labels(state, 0) == [(97, "decline"), (350, "blank as trick"),
                                (351, "blank as false trick")]
    assert state.describe(0, 351).payload == {"kind": "blank", "as": "false_trick"}
    act(state, 0, 351)
    # The Modifier: only false tricks with a value (the 3 square, not the Blank).
    assert labels(state, 0) == [(97, "decline"), (400, "modify false trick 1")]
    assert state.observation(2)["players"][0]["false_tricks"] == [
        {"family": "square", "value": 3, "cards": cards("3 square"), "source": "card",
         "modifier": 0},
        {"family": "", "value": -1, "cards": [], "source": "blank", "modifier": 0}]
    act(state, 0, 400)
    assert state.observation(0)["decision"] == decision(
        "modifier_delta", 0, bonus="v4", face="modifier", index=0)
    assert [a.to_json() for a in state.legal_actions(0)] == [
        {"id": 450, "label": "value -1", "payload": {"kind": "modify_delta", "delta": -1}},
        {"id": 451, "label": "value +1", "payload": {"kind": "modify_delta", "delta": 1}}]
    act(state, 0, 450)
    nothing = {"family": "", "value": -1, "delta": 0, "cards": []}
    assert state.last_round and state.event_log(None)[-8:-2] == [
        {"kind": "bonus_use", "seat": 1, "bonus": "v1", "face": "odd", "choice": "value",
         **nothing, "value": 5},
        {"kind": "bonus_use", "seat": 2, "bonus": "v3", "face": "any", "choice": "decline",
         **nothing},
        {"kind": "bonus_use", "seat": 3, "bonus": "flip", "face": "flip",
         "choice": "false_to_trick", **nothing, "cards": cards("8 circle")},
        {"kind": "bonus_use", "seat": 3, "bonus": "v2", "face": "even", "choice": "value",
         **nothing, "value": 8},
        {"kind": "bonus_use", "seat": 0, "bonus": "blank", "face": "blank",
         "choice": "false_trick", **nothing},
        {"kind": "bonus_use", "seat": 0, "bonus": "v4", "face": "modifier", "choice": "modify",
         "family": "square", "value": 2, "delta": -1, "cards": cards("3 square")},
    ]
    # Seat 0: T 1, F 2 (the 2 square, the Blank): 1 + 3 = 4, run of one value: 1 star.
    # Seat 1: F 1 (the Odd 5): 0 + run 1. Seat 3: T 2, F 1 (the Even 8): 2 + 3 + 1.
    assert [(r["base"], r["card"], r["round_total"]) for r in state.last_round] == [
        (4, 1, 5), (0, 1, 1), (0, 0, 0), (5, 1, 6)]


def test_symbol_faces_single_card_flip_and_blank_as_a_trick() -> None:
    """TT-6.3 Symbol (a family, no value), TT-6.1b Flip of a one-card trick (no top to
    choose), TT-6.1c Blank as a trick; a family scoring card shows the plain faces
    (TT-6.4), so V4 is a Symbol sun/circle, not the Modifier."""
    state = new(3)
    end_position(state, "largest_family", first_player=0,
                 tricks={0: [cs("6 sun")]}, false={1: cs("2 circle")},
                 held={0: [FLIP, 4], 1: [BLANK, 7]})
    assert state.faces[4:] == ("symbol_moon_sun", "symbol_square_circle",
                               "symbol_moon_square", "symbol_sun_circle")
    act(state, 0, 200)  # the 6 sun alone: flipped at once
    assert state.public_view()["players"][0]["false_tricks"] == [
        {"family": "sun", "value": 6, "cards": cards("6 sun"), "source": "flip", "modifier": 0}]
    assert labels(state, 0) == [(97, "decline"), (360, "symbol moon"), (361, "symbol sun")]
    assert state.describe(0, 361).payload == {"kind": "symbol", "family": "sun"}
    assert reason(state, 0, 362) == (
        "the Symbol face is a false trick of one of its two families (TT-6.3, TT-6.5);"
        " legal ids [97, 360, 361]")
    moon = state.clone()
    act(moon, 0, 360)
    assert moon.end_choices[-1]["family"] == "moon"
    act(state, 0, 361)
    assert state.public_view()["players"][0]["false_tricks"][1] == {
        "family": "sun", "value": -1, "cards": [], "source": "symbol", "modifier": 0}
    assert reason(state, 1, 352) == (
        "Blank counts as a trick or a false trick (TT-6.1c, TT-6.5); legal ids [97, 350, 351]")
    act(state, 1, 350)
    assert state.public_view()["players"][1]["tricks"] == [{"cards": [], "blank": True}]
    assert labels(state, 1) == [(97, "decline"), (361, "symbol sun"), (363, "symbol circle")]
    act(state, 1, 363)
    nothing = {"value": -1, "delta": 0, "cards": []}
    assert [e for e in state.event_log(None) if e["kind"] == "bonus_use"] == [
        {"kind": "bonus_use", "seat": 0, "bonus": "flip", "face": "flip",
         "choice": "trick_to_false", "family": "sun", "value": 6, "delta": 0,
         "cards": cards("6 sun")},
        {"kind": "bonus_use", "seat": 0, "bonus": "v1", "face": "symbol_moon_sun",
         "choice": "family", "family": "sun", **nothing},
        {"kind": "bonus_use", "seat": 1, "bonus": "blank", "face": "blank", "choice": "trick",
         "family": "", **nothing},
        {"kind": "bonus_use", "seat": 1, "bonus": "v4", "face": "symbol_sun_circle",
         "choice": "family", "family": "circle", **nothing},
    ]
    # TT-7.5 largest family (0, 0, 1, ...): two suns for seat 0, two circles for seat 1:
    # 1 star each. TT-7.2: seat 0 T 0, F 2: 0; seat 1 T 1 (the Blank), F 2: 1 + 3 = 4.
    assert [(r["tricks"], r["false_tricks"], r["base"], r["card"]) for r in state.last_round] \
        == [(0, 2, 0, 1), (1, 2, 4, 1), (0, 0, 0, 0)]


def test_refusal_boundaries_and_the_remaining_face_texts() -> None:
    """TT-4.3 with the lowest card id, TT-5.4 with a bonus already taken and an id past
    the bonus cards, TT-6.3's Even, Any and Modifier texts."""
    state = new(3)
    play_position(state, [cs("3 sun", "1 moon"), cs("7 sun"), cs("5 sun", "9 sun")], leader=1)
    act(state, 1, c("7 sun"))
    act(state, 2, c("5 sun"))
    assert reason(state, 0, c("1 moon")) == (
        "you hold a sun card and must follow the led family sun; 1 moon is not allowed"
        " (TT-4.3)")
    assert reason(state, 0, DECK_SIZE) == f"play a card from your hand: ids {[c('3 sun')]} (TT-4.2)"
    act(state, 0, c("3 sun"))  # the 7 sun wins: seat 1 picks a bonus (TT-5.4)
    state.supply.remove(0)  # Take back is gone already
    state._cache_seat = -1
    assert reason(state, 1, 100) == "bonus take_back is not in the supply (TT-5.4)"
    assert reason(state, 1, 108) == (
        "for your 7 you may take a bonus card still in the supply or decline (TT-5.4);"
        " legal ids [97, 101, 102, 103, 104, 105, 106, 107]")
    ends = new(3)
    end_position(ends, "even_values", false={0: cs("12 moon")}, held={0: [5, 6, 7]})
    assert reason(ends, 0, 370) == (
        "the Even face takes one of the listed even values (TT-6.3, TT-6.5);"
        " legal ids [97, 371, 373, 375, 377, 379, 381]")
    act(ends, 0, st.DECLINE)
    assert reason(ends, 0, 450) == (
        "the Any face takes a value from 1 to 12 (TT-6.3, TT-6.5); legal ids "
        f"{[97, *range(370, 382)]}")
    act(ends, 0, st.DECLINE)
    assert reason(ends, 0, 401) == (
        "the Modifier changes a valued false trick by +1 or -1 within 1..12 (TT-6.3, TT-6.5);"
        " legal ids [97, 400]")
    act(ends, 0, 400)
    assert list(ends.legal_action_ids(0)) == [450]  # 12 + 1 would leave 1..12


def test_a_clone_and_a_determinized_copy_go_on_alone() -> None:
    """clone() mid end-of-round and mid reserve choice, and determinize() with a box,
    reserves, a known card and future scoring cards: every card stays in one zone
    (TT-3.2), what the seat knows stays, the original is untouched."""
    state = new(3, options={"hand_size_3p": 12})  # 12 of the 48 cards stay in the box
    assert state.phase == "reserve"
    first = list(state.legal_action_ids(0))
    twin = state.clone()
    assert list(twin.legal_action_ids(1)) == [48 + x for x in state.hands[1]]
    assert list(twin.legal_action_ids(0)) == first
    while state.phase == "reserve":
        for seat in state.to_act():
            act(state, seat, state.legal_action_ids(seat)[0])
    assert twin.phase == "reserve" and [len(r) for r in twin.reserves] == [0, 0, 0]
    seat = state.to_act()[0]
    state.known[seat].append(state.hands[seat][0])
    own_reserve = sorted(state.reserves[seat])
    state.legal_action_ids(seat)
    copy = state.determinize(seat, random.Random(4))
    assert isinstance(copy, st.TrickyTwistState)
    zones = copy.card_zones()
    assert sorted(x for cards in zones.values() for x in cards) == list(range(DECK_SIZE))
    assert (len(zones["box"]), sorted(copy.reserves[seat])) == (12, own_reserve)
    assert [len(r) for r in copy.reserves] == [5, 5, 5]
    assert copy.observation(seat) == state.observation(seat)
    assert copy.scoring_deck[:1] == state.scoring_deck[:1]
    assert sorted(copy.scoring_deck) == sorted(state.scoring_deck)
    assert list(copy.legal_action_ids(seat)) == list(state.legal_action_ids(seat))
    ends = new(3)
    end_position(ends, "longest_run", false={0: cs("4 moon")}, held={0: [BLANK, 7]})
    other = ends.clone()
    act(other, 0, 351)
    act(other, 0, 400)
    assert ends.end_steps == [(0, BLANK), (0, 7)] and ends.false[0] == [st._card_false(3)]


def test_observation_parts_and_their_versions() -> None:
    """The observation in slices: the table, the round and one part per player; a
    slice's version changes exactly when its content does (TT-4.3 play, TT-5.1 the
    trick to its winner, TT-5.4 pick)."""
    state = new(3)
    play_position(state, [cs("7 sun", "2 moon"), cs("3 sun"), cs("5 sun")], leader=0)

    def merged(seat: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for _, _, build in state.observation_parts(seat):
            for key, value in build().items():
                out[key] = out[key] + value if key == "players" and key in out else value
        return out

    def versions() -> list[Any]:
        return [(slot, version) for slot, version, _ in state.observation_parts(1)]

    assert merged(1) == state.observation(1)
    before = versions()
    assert [slot for slot, _ in before] == ["table", "round", 0, 1, 2]
    assert before[0][1] is None
    act(state, 0, c("7 sun"))  # only seat 0's part changes (one card fewer in hand)
    after = versions()
    assert (after[1], after[3], after[4]) == (before[1], before[3], before[4])
    assert after[2] != before[2]
    act(state, 1, c("3 sun"))
    played = versions()
    act(state, 2, c("5 sun"))  # the 7 sun wins: seat 0 picks a bonus
    resolved = versions()  # the trick is seat 0's; seat 1 followed and lost
    assert (resolved[1], resolved[3]) == (played[1], played[3])
    assert resolved[2] != played[2] and resolved[4] != played[4]
    act(state, 0, 103)  # Plus leaves the supply: the round's part changes
    assert versions()[1] != after[1] and merged(2) == state.observation(2)


def test_a_determinized_copy_deals_any_family_to_reserves_and_the_box() -> None:
    """TT-3.3: a reserve is unseen, so no family is ruled out for another seat's reserve
    or the undealt box; the seat to act gets legal ids from its re-dealt hand."""
    state = new(3, options={"hand_size_3p": 12})
    state.first_player = 1  # leads the first trick (TT-2.2 draws it at random)
    while state.phase == "reserve":
        for seat in state.to_act():
            act(state, seat, state.legal_action_ids(seat)[-1])
    while state.phase == "reserve_window":
        act(state, state.to_act()[0], st.DECLINE)
    leader, observer = 1, 2
    assert state.to_act() == (leader,) and state.phase == "play"
    state.legal_action_ids(leader)
    moons_in_box = moons_in_reserves = 0
    for k in range(20):
        copy = state.determinize(observer, random.Random(k))
        assert isinstance(copy, st.TrickyTwistState)
        assert list(copy.legal_action_ids(leader)) == copy.hands[leader]  # TT-4.2
        moons_in_box += any(x < 12 for x in copy.box)
        moons_in_reserves += any(x < 12 for x in copy.reserves[leader])
    assert moons_in_box > 0 and moons_in_reserves > 0


@pytest.mark.parametrize(("action", "label", "payload"), [
    (0, "play 1 moon", {"kind": "play", "card": card("1 moon")}),
    (47, "play 12 circle", {"kind": "play", "card": card("12 circle")}),
    (48, "reserve 1 moon", {"kind": "reserve", "card": card("1 moon")}),
    (95, "reserve 12 circle", {"kind": "reserve", "card": card("12 circle")}),
    (96, "take reserve card", {"kind": "take_reserve"}),
    (97, "decline", {"kind": "decline"}),
    (100, "take bonus take_back", {"kind": "bonus", "bonus": "take_back", "face": "take_back"}),
    (107, "take bonus v4 (modifier)", {"kind": "bonus", "bonus": "v4", "face": "modifier"}),
    (120, "take back 1 moon", {"kind": "take_back", "card": card("1 moon")}),
    (167, "take back 12 circle", {"kind": "take_back", "card": card("12 circle")}),
    (200, "flip trick 1 to a false trick", {"kind": "flip_trick", "trick": 0}),
    (249, "flip trick 50 to a false trick", {"kind": "flip_trick", "trick": 49}),
    (250, "flip false trick 1 moon to a trick", {"kind": "flip_false_trick",
                                                 "card": card("1 moon")}),
    (297, "flip false trick 12 circle to a trick", {"kind": "flip_false_trick",
                                                    "card": card("12 circle")}),
    (300, "1 moon on top", {"kind": "flip_top", "card": card("1 moon")}),
    (347, "12 circle on top", {"kind": "flip_top", "card": card("12 circle")}),
    (350, "blank as trick", {"kind": "blank", "as": "trick"}),
    (351, "blank as false trick", {"kind": "blank", "as": "false_trick"}),
    (360, "symbol moon", {"kind": "symbol", "family": "moon"}),
    (363, "symbol circle", {"kind": "symbol", "family": "circle"}),
    (370, "value 1", {"kind": "value", "value": 1}),
    (381, "value 12", {"kind": "value", "value": 12}),
    (400, "modify false trick 1", {"kind": "modify", "false_trick": 0}),
    (449, "modify false trick 50", {"kind": "modify", "false_trick": 49}),
    (450, "value -1", {"kind": "modify_delta", "delta": -1}),
    (451, "value +1", {"kind": "modify_delta", "delta": 1}),
    *((a, f"unknown action {a}", {"kind": "unknown"})
      for a in (98, 108, 168, 298, 348, 352, 364, 369, 382, 452)),
])
def test_every_action_range_is_labelled_at_its_edges(action: int, label: str,
                                                     payload: dict[str, Any]) -> None:
    """The action ids of docs/rules/tricky_twist.md's bot table, first and last of each
    range and the gaps between them; bonus faces as TT-6.4 shows them for odd_values."""
    state = dealt()
    assert state.describe(0, action).to_json() == {"id": action, "label": label,
                                                   "payload": payload}


def test_the_modifier_on_a_flipped_trick_records_its_top_card() -> None:
    """TT-6.1b: a flipped trick of two cards is a false trick whose top card alone gives
    its value; TT-6.3: the Modifier changes that value, and the record names the top."""
    state = new(3)
    end_position(state, "odd_values", tricks={0: [cs("1 moon", "6 moon")]},
                 held={0: [FLIP, 7]})
    act(state, 0, 200)
    lowest = state.clone()
    act(lowest, 0, 300)  # card id 0, the 1 moon, on top
    assert lowest.false[0] == [(0, 1, (0, 5), "flip", 0)]
    act(state, 0, 300 + c("6 moon"))
    assert state.public_view()["players"][0]["false_tricks"] == [
        {"family": "moon", "value": 6, "cards": cards("6 moon", "1 moon"), "source": "flip",
         "modifier": 0}]
    act(state, 0, 400)
    act(state, 0, 450)
    assert state.event_log(None)[-3] == {
        "kind": "bonus_use", "seat": 0, "bonus": "v4", "face": "modifier", "choice": "modify",
        "family": "moon", "value": 5, "delta": -1, "cards": cards("6 moon")}
    # TT-7.5 odd values: the modified 5 counts (1 star); TT-7.2: T 0, F 1: 0.
    assert (state.last_round[0]["base"], state.last_round[0]["card"]) == (0, 1)


@pytest.mark.parametrize(("value", "legal"), [(1, [451]), (2, [450, 451]), (11, [450, 451]),
                                              (12, [450])])
def test_the_modifier_stays_within_1_to_12(value: int, legal: list[int]) -> None:
    """TT-6.3: +1 or -1, staying within 1..12."""
    state = new(3)
    end_position(state, "odd_values", false={0: [c(f"{value} sun")]}, held={0: [7]})
    act(state, 0, 400)
    assert list(state.legal_action_ids(0)) == legal


def test_other_variable_faces_pairs_and_plus() -> None:
    """Options away from their defaults: ``variable_cards`` (TT-6.4) gives V1 the
    Modifier and V4 the Odd face, so V4 is decided first and V1 last (TT-6.5: the
    Modifier after the faces, whatever the card); ``pair_stars`` 2 and
    ``balanced_pair_stars`` 4 (TT-7.2); Plus adds a star per trick (TT-6.1d)."""
    options = {"variable_cards": {"v1": {"framed": "modifier"}, "v4": {"framed": "odd"}},
               "pair_stars": 2, "balanced_pair_stars": 4}
    state = new(3, options=options)
    end_position(state, "odd_values", first_player=0,
                 tricks={0: [cs("9 sun")], 1: [cs("10 sun"), cs("11 sun")]},
                 false={0: cs("4 square"), 1: cs("2 circle")}, held={0: [4, 7], 1: [3]})
    assert state.faces[4:] == ("modifier", "even", "any", "odd")
    assert state.observation(0)["decision"] == decision("odd", 0, bonus="v4", face="odd")
    act(state, 0, 369 + 3)  # the Odd face as a 3
    assert state.observation(0)["decision"] == decision("modifier", 0, bonus="v1",
                                                        face="modifier")
    act(state, 0, 401)  # the Odd face's 3 ...
    act(state, 0, 451)  # ... becomes a 4
    # Seat 0: T 1, F 2 (4 square, the face's 4): 1 + one pair at 2 = 3; odd values: none.
    # Seat 1: T 2, F 1: 2 + one pair at 2 = 4, Plus: +2 (its two tricks): 6.
    rows = state.last_round
    assert [(r["base"], r["plus"], r["card"], r["round_total"], r["total"]) for r in rows] == [
        (3, 0, 0, 3, 3), (4, 2, 0, 6, 6), (0, 0, 0, 0, 0)]
    balanced = new(3, options=options)
    end_position(balanced, "odd_values", tricks={2: [cs("5 moon")]}, false={2: cs("6 sun")})
    assert balanced.last_round[2]["base"] == 1 + 4  # T = F = 1: one balanced pair


def test_sevens_pick_clockwise_from_a_winner_who_is_not_seat_0() -> None:
    """TT-5.4: three 7s collected; the picks go clockwise from the winner (seat 1): 1,
    2, 0. TT-5.1 with the lowest ids: the 2 moon beats the 1 moon."""
    lowest = new(3)
    play_position(lowest, [cs("1 moon", "9 sun"), cs("2 moon", "9 circle"), cs("5 sun", "8 sun")],
                  leader=0)
    act(lowest, 0, c("1 moon"))
    act(lowest, 1, c("2 moon"))
    trick = lowest.observation(2)["trick"]
    assert [t["seat"] for t in trick] == [0, 1]
    act(lowest, 2, c("5 sun"))
    assert lowest.event_log(None)[-1]["winner"] == 1
    several = new(4)
    play_position(several, [cs("7 moon", "1 moon"), cs("7 sun", "2 moon"),
                            cs("7 square", "3 moon"), cs("3 sun", "4 moon")], leader=3)
    for seat, spec in ((3, "3 sun"), (0, "7 moon"), (1, "7 sun"), (2, "7 square")):
        act(several, seat, c(spec))
    assert several.observation(0)["decision"]["pick_queue"] == [1, 2, 0]
    act(several, 1, st.DECLINE)
    assert several.event_log(None)[-1] == {"kind": "bonus_decline", "seat": 1}
    assert several.observation(0)["players"][0]["void"] == ["sun"]


def test_voids_in_two_families_and_a_known_card_played() -> None:
    """TT-4.3: a seat that does not follow shows a void in each family it fails; a card
    taken back (known to all, TT-6.1a) stops being known once played."""
    state = new(3)
    play_position(state, [cs("9 moon", "9 sun", "10 circle"),
                          cs("1 circle", "2 circle", "3 circle"),
                          cs("5 moon", "5 sun", "6 circle")], leader=0)
    state.known[1].append(c("3 circle"))
    for seat, spec in ((0, "9 moon"), (1, "3 circle"), (2, "5 moon")):
        act(state, seat, c(spec))
    assert state.observation(2)["players"][1]["known_in_hand"] == []
    for seat, spec in ((0, "9 sun"), (1, "1 circle"), (2, "5 sun")):
        act(state, seat, c(spec))
    assert state.observation(2)["players"][1]["void"] == ["moon", "sun"]


def test_the_round_start_event_and_a_round_without_reserves() -> None:
    """TT-3.3 with ``reserve_size`` 0: no reserve phase, the first player leads at once
    (TT-2.2); the round_start event gives each seat its own hand only."""
    state = new(3, seed=4, options={"reserve_size": 0, "hand_size_3p": 1})
    first = state.first_player
    assert (state.phase, state.to_act(), state.leader) == ("play", (first,), first)
    (event,) = state.event_log(None)
    assert event == {"kind": "round_start", "round": 1, "scoring_card": state.scoring_card,
                     "first_player": first, "faces": list(state.faces[4:])}
    for seat in range(3):
        assert state.event_log(seat)[0] == {**event, "hand": state.observation(seat)["hand"]}


def test_options_refused_with_their_reason() -> None:
    """TT-3.2/TT-3.3 sizes, TT-2.1/TT-7.5 the scoring deck, TT-6.3/TT-6.4 the faces and
    their values, TT-7.6 the place stars."""
    defaults = dict(DEFAULTS)
    for players, changes, text in (
        (5, {}, "no hand size for 5 players"),
        (3, {"hand_size_3p": 17}, "hand_size_3p must be 1..16"),
        (3, {"reserve_size": 16}, "reserve_size must be at least 0 and below the hand size"),
        (3, {"scoring_cards": ["odd_values", "most"]},
         f"unknown scoring card 'most'; known: {SCORING_CARDS}"),
        (3, {"scoring_cards": ["odd_values"] * 2},
         "the scoring deck needs at least 3 cards (one per round)"),
        (3, {"odd_values": [1, 13]}, "odd_values must be values 1..12"),
        (3, {"variable_cards": {"v1": DEFAULTS["variable_cards"]["v1"]}},
         "variable_cards must describe v1..v4"),
        (3, {"place_stars": []}, "star tables must not be empty"),
    ):
        with pytest.raises(engine.InvalidOptions) as raised:
            st.TrickyTwistState(players, 1, {**defaults, **changes})
        assert str(raised.value) == text
    for face in ("symbol", "symbol_planet_sun", "symbol_sun_sun", "joker"):
        with pytest.raises(engine.InvalidOptions) as raised:
            st.parse_face(face)
        assert str(raised.value) == (
            f"unknown variable bonus face {face!r}; use symbol_<family>_<family>, odd, even,"
            " any or modifier")
    assert st.parse_face("symbol_sun_moon") == ("symbol", (0, 1))
