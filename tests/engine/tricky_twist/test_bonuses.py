"""End-of-round bonus cards (TT-6.1 b-d, TT-6.3, TT-6.4) and their order (TT-6.5)."""

from __future__ import annotations

from typing import Any

import pytest
from twistarena.engine import IllegalAction
from twistarena.engine.tricky_twist import state as st
from twistarena.engine.tricky_twist.data import SCORING_CARDS

from .helpers import act, c, cs, end_position, new, play_position

TAKE_BACK, FLIP, BLANK, PLUS, V1, V2, V3, V4 = range(8)


def uses(state: st.TrickyTwistState) -> list[dict[str, Any]]:
    """The end-of-round choices logged so far (TT-6.5: public)."""
    return [e.view(None) for e in state.events if e.kind == "bonus_use"]


FRAMED = {"longest_run", "even_values", "odd_values", "most_false_tricks"}


@pytest.mark.parametrize("card", SCORING_CARDS)
def test_variable_faces_follow_the_scoring_card(card: str) -> None:
    """TT-6.4: value/count cards show the framed faces, family cards and "fewest" the plain."""
    state = new(4)
    state.reveal(card)
    faces = state.faces[4:]
    if card in FRAMED:
        assert faces == ("odd", "even", "any", "modifier")
    else:
        assert faces == ("symbol_moon_sun", "symbol_square_circle", "symbol_moon_square",
                         "symbol_sun_circle")
    assert state.observation(0)["supply"][4]["face"] == faces[0]


@pytest.mark.parametrize(("top", "card_stars"), [("3 moon", 3), ("9 moon", 1), ("5 moon", 1)])
def test_flip_a_trick_with_the_top_card_choice(top: str, card_stars: int) -> None:
    """TT-6.1b: a trick of several cards becomes a false trick; its owner chooses the
    top card, which alone gives the false trick's value (here: run with the 2)."""
    state = end_position(new(3), "longest_run", held={0: [FLIP]},
                         tricks={0: [cs("3 moon", "9 moon", "5 moon"), cs("1 sun")]},
                         false={0: cs("2 sun")})
    assert state.phase == st.END_BONUS and state.to_act() == (0,)
    assert state.legal_action_ids(0) == [
        st.DECLINE, st.FLIP_TRICK_BASE, st.FLIP_TRICK_BASE + 1, st.FLIP_FALSE_BASE + c("2 sun")]
    act(state, 0, st.FLIP_TRICK_BASE + 0)
    assert state.legal_action_ids(0) == sorted(
        st.FLIP_TOP_BASE + x for x in cs("3 moon", "9 moon", "5 moon"))
    assert state.observation(1)["decision"]["kind"] == "flip_top"
    act(state, 0, st.FLIP_TOP_BASE + c(top))
    row = state.last_round[0]
    assert (row["tricks"], row["false_tricks"]) == (1, 2)
    assert row["base"] == 1 + 3 and row["card"] == card_stars
    assert uses(state)[0]["cards"][0]["id"] == c(top)


def test_flip_a_single_card_trick_needs_no_top_choice_and_false_to_trick() -> None:
    """TT-6.1b both ways: a one-card trick flips at once; a false trick may become a trick."""
    state = end_position(new(3), "odd_values", held={0: [FLIP]}, tricks={0: [cs("4 sun")]})
    act(state, 0, st.FLIP_TRICK_BASE + 0)
    assert state.last_round[0]["false_tricks"] == 1 and state.last_round[0]["card"] == 0
    state = end_position(new(3), "odd_values", held={1: [FLIP]}, false={1: cs("5 sun", "6 sun")})
    act(state, 1, st.FLIP_FALSE_BASE + c("5 sun"))
    row = state.last_round[1]
    assert (row["tricks"], row["false_tricks"], row["base"], row["card"]) == (1, 1, 6, 0)


def test_flip_without_any_trick_is_skipped() -> None:
    """TT-6.2: with nothing to flip the only choice is not to use it: no decision."""
    state = end_position(new(3), "odd_values", held={0: [FLIP]})
    assert state.round_no == 1 and uses(state) == []


@pytest.mark.parametrize(("action", "tricks", "false", "total"), [
    (st.BLANK_TRICK, 3, 1, 3 + 3 + 1),
    (st.BLANK_FALSE, 2, 2, 2 + 10 + 1),
    (st.DECLINE, 2, 1, 2 + 3 + 1),
])
def test_blank_as_trick_or_false_trick(action: int, tricks: int, false: int, total: int) -> None:
    """TT-6.1c: Blank counts as a trick or a false trick; no family (distinct families
    still counts only the moon false trick)."""
    state = end_position(new(3), "distinct_families", held={2: [BLANK]},
                         tricks={2: [cs("1 sun"), cs("2 sun")]}, false={2: cs("5 moon")})
    assert state.legal_action_ids(2) == [st.DECLINE, st.BLANK_TRICK, st.BLANK_FALSE]
    act(state, 2, action)
    row = state.last_round[2]
    assert (row["tricks"], row["false_tricks"], row["round_total"]) == (tricks, false, total)


def test_plus_adds_a_star_per_trick_without_a_decision() -> None:
    """TT-6.1d, TT-7.3: +1 star per trick held, whatever its size."""
    state = end_position(new(3), "odd_values", held={0: [PLUS]},
                         tricks={0: [cs("1 sun", "2 sun", "3 sun"), cs("4 sun"), cs("5 sun")]})
    assert state.round_no == 1
    row = state.last_round[0]
    assert (row["base"], row["plus"], row["round_total"]) == (3, 3, 6)


@pytest.mark.parametrize(("family", "stars"), [(st.SYMBOL_BASE + 1, 3), (st.SYMBOL_BASE, 1)])
def test_symbol_face_is_a_false_trick_of_one_of_its_two_families(family: int,
                                                                 stars: int) -> None:
    """TT-6.3 Symbol X/Y: a false trick of family X or Y, no value."""
    state = end_position(new(3), "chosen_moon_sun", held={0: [V1]}, false={0: cs("4 sun")},
                         tricks={0: [cs("1 circle")]})
    assert state.legal_action_ids(0) == [st.DECLINE, st.SYMBOL_BASE, st.SYMBOL_BASE + 1]
    with pytest.raises(IllegalAction, match="Symbol"):
        state.apply(0, st.SYMBOL_BASE + 2)
    act(state, 0, family)
    assert state.last_round[0]["card"] == stars
    assert state.last_round[0]["false_tricks"] == 2


def test_symbol_false_trick_has_no_value_but_counts_for_fewest() -> None:
    """TT-7.4: a symbol false trick counts for "fewest" (every false trick counts)."""
    state = end_position(new(3), "fewest_false_tricks", held={1: [V2]},
                         false={0: cs("1 moon", "2 moon"), 1: cs("3 moon")})
    act(state, 1, st.SYMBOL_BASE + 3)
    assert [r["card"] for r in state.last_round] == [12, 12, 0]


@pytest.mark.parametrize(("bonus", "values"), [
    (V1, [1, 3, 5, 7, 9, 11]), (V2, [2, 4, 6, 8, 10, 12]), (V3, list(range(1, 13)))])
def test_odd_even_any_faces_offer_their_listed_values(bonus: int, values: list[int]) -> None:
    """TT-6.3 [decided] listed values; the face is a false trick of the chosen value."""
    state = end_position(new(3), "odd_values", held={0: [bonus]}, false={0: cs("1 moon")})
    assert state.legal_action_ids(0) == [st.DECLINE, *(st.VALUE_BASE + v for v in values)]
    act(state, 0, st.VALUE_BASE + values[-1])
    row = state.last_round[0]
    assert row["false_tricks"] == 2 and row["card"] == (2 if values[-1] % 2 else 1)


@pytest.mark.parametrize("bonus", [V1, V3])
def test_choosing_a_seven_through_a_face_gives_no_bonus(bonus: int) -> None:
    """TT-5.4, TT-6.3: a 7 chosen on a variable face never gives a bonus card."""
    state = end_position(new(3), "odd_values", held={0: [bonus]})
    supply = list(state.supply)
    act(state, 0, st.VALUE_BASE + 7)
    assert uses(state)[-1]["value"] == 7
    assert not any(e.kind == "bonus_take" for e in state.events)
    assert state.round_no == 1 and state.phase == st.RESERVE and supply != []


def test_odd_values_come_from_the_options() -> None:
    """TT-6.3 [decided] lists are data: overriding them changes the legal values."""
    state = end_position(new(3, options={"odd_values": [1, 3]}), "odd_values", held={0: [V1]})
    assert state.legal_action_ids(0) == [st.DECLINE, st.VALUE_BASE + 1, st.VALUE_BASE + 3]


@pytest.mark.parametrize(("target", "legal", "delta", "card_stars"), [
    ("1 moon", [st.MOD_PLUS], st.MOD_PLUS, 3),  # 2 joins 3: run 2-3
    ("12 sun", [st.MOD_MINUS], st.MOD_MINUS, 1),  # 11: runs of 1
    ("5 circle", [st.MOD_MINUS, st.MOD_PLUS], st.MOD_MINUS, 3),  # 4: run 3-4
])
def test_modifier_changes_a_value_by_one_within_1_to_12(target: str, legal: list[int],
                                                        delta: int, card_stars: int) -> None:
    """TT-6.3 Modifier: +1 or -1 on a valued false trick, staying within 1..12;
    false tricks without a value cannot take it."""
    false = cs("1 moon", "12 sun", "5 circle", "3 square")
    state = end_position(new(3), "longest_run", held={0: [V4, V2]}, false={0: false})
    # TT-6.5 order: the Even face (V2) is decided before the Modifier; not used here.
    act(state, 0, st.DECLINE)
    assert state.legal_action_ids(0) == [st.DECLINE, *(st.MOD_TARGET_BASE + i for i in range(4))]
    act(state, 0, st.MOD_TARGET_BASE + false.index(c(target)))
    assert state.legal_action_ids(0) == legal
    act(state, 0, delta)
    assert state.last_round[0]["card"] == card_stars


def test_modifier_skips_valueless_false_tricks() -> None:
    """TT-6.3: the Modifier attaches only to a false trick that has a value."""
    state = end_position(new(3), "longest_run", held={0: [V4, BLANK]}, false={0: cs("4 moon")})
    act(state, 0, st.BLANK_FALSE)
    assert state.legal_action_ids(0) == [st.DECLINE, st.MOD_TARGET_BASE]


def test_modifier_can_adjust_a_face_chosen_before_it() -> None:
    """TT-6.5 order within a seat: Flip, Blank, faces, then Modifier, which may change
    a valued face (Odd 11 -> 12 gives an even value)."""
    state = end_position(new(3), "even_values", held={0: [V4, V1]})
    act(state, 0, st.VALUE_BASE + 11)
    act(state, 0, st.MOD_TARGET_BASE + 0)
    act(state, 0, st.MOD_PLUS)
    assert state.last_round[0]["card"] == 1  # one even value


def test_end_of_round_choices_go_clockwise_from_the_first_player_and_are_public() -> None:
    """TT-6.5: one player at a time clockwise from the round's first player; everyone
    sees the choices already made."""
    state = end_position(new(4), "largest_family", first_player=2,
                         held={0: [FLIP], 2: [BLANK], 3: [V3]},
                         tricks={0: [cs("1 sun")]})
    order = []
    while state.phase == st.END_BONUS:
        seat = state.to_act()[0]
        order.append(seat)
        act(state, seat, state.legal_action_ids(seat)[-1])
        if state.phase == st.END_BONUS:
            seen = state.observation((seat + 1) % 4)["end_choices"]
            assert [e["seat"] for e in seen] == order
    assert order == [2, 3, 0]


def test_flip_comes_before_blank_for_one_player() -> None:
    """TT-6.5 within one seat: Flip acts on real tricks first, then Blank."""
    state = end_position(new(3), "odd_values", held={1: [BLANK, FLIP]},
                         tricks={1: [cs("3 sun")]})
    assert state.observation(0)["decision"]["bonus"] == "flip"
    act(state, 1, st.DECLINE)
    assert state.observation(0)["decision"]["bonus"] == "blank"


def test_a_bonus_picked_during_play_is_held_with_its_face() -> None:
    """TT-5.4, TT-3.1: a picked variable card shows the face matching the scoring card."""
    state = play_position(new(3), leader=0, scoring_card="odd_values", hands=[
        cs("9 sun", "1 sun"), cs("7 sun", "2 sun"), cs("4 circle", "5 circle")])
    for seat, card in ((0, "9 sun"), (1, "7 sun"), (2, "4 circle")):
        act(state, seat, c(card))
    act(state, 0, st.PICK_BASE + V1)
    assert state.observation(2)["players"][0]["bonuses"] == [{"bonus": "v1", "face": "odd"}]
