"""Playing and resolving tricks: TT-3.3 reserve choice, TT-4 tricks, TT-5 resolution."""

from __future__ import annotations

import pytest
from twistarena.engine import IllegalAction
from twistarena.engine.tricky_twist import state as st

from .helpers import act, c, cs, finish_reserves, new, play_position


def test_rulebook_trick_example_tanguy_elsa_sam_lucas() -> None:
    """TT-4.3, TT-5.1..5.4, rulebook example: Tanguy leads 7, Elsa follows with 9,
    Sam (no card of the family) plays a 2 of another family, Lucas must follow
    with his 2. Elsa wins all three cards of the family as one trick, Sam keeps
    her 2 as a false trick, Tanguy and Lucas collect nothing, and the 7 in Elsa's
    trick lets her take a bonus card."""
    tanguy, elsa, sam, lucas = 0, 1, 2, 3
    state = play_position(new(4), leader=tanguy, hands=[
        cs("7 sun", "1 moon"), cs("9 sun", "3 sun"), cs("2 moon", "5 circle"),
        cs("2 sun", "4 circle")])
    act(state, tanguy, c("7 sun"))
    act(state, elsa, c("9 sun"))
    assert sorted(state.legal_action_ids(sam)) == cs("2 moon", "5 circle")  # no sun: anything
    act(state, sam, c("2 moon"))
    assert list(state.legal_action_ids(lucas)) == [c("2 sun")]  # must follow, even after Sam
    act(state, lucas, c("2 sun"))
    assert state.tricks[elsa] == [tuple(cs("7 sun", "9 sun", "2 sun"))]
    assert [f[2] for f in state.false[sam]] == [(c("2 moon"),)]
    for seat in (tanguy, lucas):
        assert state.tricks[seat] == [] and state.false[seat] == []
    assert state.phase == st.BONUS_PICK and state.to_act() == (elsa,)
    assert state.legal_action_ids(elsa) == [st.DECLINE, *range(st.PICK_BASE, st.PICK_BASE + 8)]
    act(state, elsa, st.DECLINE)
    assert state.phase == st.PLAY and state.to_act() == (elsa,)  # TT-5.6: winner leads


def test_not_following_is_refused_with_the_rule_and_changes_nothing() -> None:
    """TT-4.3: a player holding the led family must play one of its cards."""
    state = play_position(new(3), leader=0, hands=[
        cs("5 moon", "6 moon"), cs("1 moon", "12 sun"), cs("3 square", "4 square")])
    act(state, 0, c("5 moon"))
    before = (list(state.hands[1]), list(state.trick), len(state.history), len(state.events))
    with pytest.raises(IllegalAction) as err:
        state.apply(1, c("12 sun"))
    assert "TT-4.3" in str(err.value) and "moon" in str(err.value)
    with pytest.raises(IllegalAction, match="do not hold"):
        state.apply(1, c("2 moon"))
    assert (list(state.hands[1]), list(state.trick), len(state.history),
            len(state.events)) == before


def test_leader_alone_in_its_family_wins_only_its_own_card() -> None:
    """TT-5.1: the leader may win a trick of its own card only; TT-5.2 others keep false tricks."""
    state = play_position(new(3), leader=1, hands=[
        cs("5 sun", "6 sun"), cs("2 moon", "1 circle"), cs("3 square", "4 square")])
    for seat, card in ((1, "2 moon"), (2, "3 square"), (0, "5 sun")):
        act(state, seat, c(card))
    assert state.tricks[1] == [(c("2 moon"),)]
    assert [f[2] for f in state.false[2]] == [(c("3 square"),)]
    assert [f[2] for f in state.false[0]] == [(c("5 sun"),)]
    assert state.to_act() == (1,)


def test_several_sevens_pick_clockwise_from_the_winner() -> None:
    """TT-5.4: one pick per 7 collected, clockwise from the trick's winner."""
    state = play_position(new(4), leader=0, hands=[
        cs("7 moon", "1 moon"), cs("7 sun", "1 sun"), cs("9 moon", "2 moon"),
        cs("7 square", "1 square")])
    for seat, card in ((0, "7 moon"), (1, "7 sun"), (2, "9 moon"), (3, "7 square")):
        act(state, seat, c(card))
    assert state.tricks[2] == [tuple(cs("7 moon", "9 moon"))]
    order = []
    while state.phase == st.BONUS_PICK:
        seat = state.to_act()[0]
        order.append(seat)
        act(state, seat, state.legal_action_ids(seat)[-1])  # the last bonus in the supply
    assert order == [2, 3, 1]
    assert state.held == [[], [5], [7], [6]]  # each pick took what was left
    assert state.supply == [0, 1, 2, 3, 4]


def test_a_seven_played_in_the_led_family_by_a_loser_gives_nothing() -> None:
    """TT-5.3, TT-5.4: a follower who loses collects nothing, so its 7 gives no bonus."""
    state = play_position(new(3), leader=0, hands=[
        cs("9 moon", "1 moon"), cs("7 moon", "1 sun"), cs("2 square", "3 square")])
    for seat, card in ((0, "9 moon"), (1, "7 moon"), (2, "2 square")):
        act(state, seat, c(card))
    # The 7 is in seat 0's trick: seat 0 picks, seat 1 does not.
    assert state.phase == st.BONUS_PICK and state.to_act() == (0,)
    act(state, 0, st.DECLINE)
    assert state.phase == st.PLAY


def test_no_pick_when_the_supply_is_empty() -> None:
    """TT-5.4: a bonus is taken only from what is still in the supply."""
    state = play_position(new(3), leader=0, hands=[
        cs("9 moon", "1 moon"), cs("7 moon", "1 sun"), cs("7 square", "3 square")])
    state.supply = []
    for seat, card in ((0, "9 moon"), (1, "7 moon"), (2, "7 square")):
        act(state, seat, c(card))
    assert state.phase == st.PLAY and state.to_act() == (0,)


def test_round_ends_when_a_hand_is_empty_even_with_reserve_cards_left() -> None:
    """TT-5.6: after the resolution, an empty hand ends the round; reserves do not count."""
    state = play_position(new(3), leader=0, hands=[
        cs("5 moon"), cs("6 moon", "1 sun"), cs("2 square", "3 square")],
        reserves=[cs("1 circle"), cs("2 circle"), cs("3 circle")])
    for seat in (0, 1, 2):  # the window: everyone declines
        assert state.phase == st.WINDOW and state.to_act() == (seat,)
        act(state, seat, st.DECLINE)
    for seat, card in ((0, "5 moon"), (1, "6 moon"), (2, "2 square")):
        act(state, seat, c(card))
    assert state.round_no == 1
    kinds = [e.kind for e in state.events]
    assert kinds[-2:] == ["round_scored", "round_start"]


def test_round_goes_on_when_every_hand_still_has_a_card() -> None:
    """TT-5.6: otherwise the winner leads the next trick (after its reserve window)."""
    state = play_position(new(3), leader=0, hands=[
        cs("5 moon", "1 sun"), cs("6 moon", "2 sun"), cs("2 square", "3 square")],
        reserves=[cs("1 circle"), [], cs("3 circle")])
    for seat in (0, 2):
        act(state, seat, st.DECLINE)
    for seat, card in ((0, "5 moon"), (1, "6 moon"), (2, "2 square")):
        act(state, seat, c(card))
    assert state.round_no == 0 and state.leader == 1
    assert state.phase == st.WINDOW and state.window == [2, 0]  # seat 1 has no reserve


def test_reserve_window_is_sequential_from_the_leader_and_hides_the_card() -> None:
    """TT-4.1: from the leader clockwise, take the top reserve card or decline; the
    others see that a card was taken, not which."""
    state = play_position(new(4), leader=2, hands=[
        cs("1 moon", "2 moon"), cs("3 moon", "4 moon"), cs("5 moon", "6 moon"),
        cs("7 moon", "8 moon")],
        reserves=[cs("1 sun", "2 sun"), [], cs("3 sun", "4 sun"), cs("5 sun")])
    assert state.to_act() == (2,)
    assert state.legal_action_ids(2) == [st.TAKE_RESERVE, st.DECLINE]
    act(state, 2, st.TAKE_RESERVE)
    assert c("4 sun") in state.hands[2] and state.reserves[2] == [c("3 sun")]  # the top card
    last = state.event_log(0)[-1]
    assert last["kind"] == "reserve_take" and "card" not in last
    assert state.event_log(2)[-1]["card"]["id"] == c("4 sun")
    assert state.to_act() == (3,)
    act(state, 3, st.DECLINE)
    assert state.to_act() == (0,)  # seat 1 has an empty reserve: no choice
    act(state, 0, st.TAKE_RESERVE)
    assert state.phase == st.PLAY and state.to_act() == (2,)
    with pytest.raises(IllegalAction, match=r"TT-4\.1"):
        act(state, 2, st.TAKE_RESERVE)


def test_reserve_choice_is_simultaneous_single_card_and_hidden() -> None:
    """TT-3.3: everyone chooses at once, one card per decision, 5 cards; then each
    reserve is shuffled; TT-3.4 hands of 7 (4 players) or 11 (3 players)."""
    for n, hand in ((3, 11), (4, 7)):
        state = new(n, seed=5)
        assert state.phase == st.RESERVE and state.to_act() == tuple(range(n))
        assert all(len(h) == 48 // n for h in state.hands)
        first = state.hands[1][0]
        act(state, 1, st.RESERVE_BASE + first)
        assert state.event_log(1)[-1]["card"]["id"] == first
        assert "card" not in state.event_log(0)[-1]
        assert state.observation(0)["players"][1]["reserve_count"] == 1
        assert state.observation(1)["reserve"][0]["id"] == first
        for _ in range(4):
            act(state, 1, state.legal_action_ids(1)[-1])
        assert 1 not in state.to_act() and state.to_act() == tuple(s for s in range(n) if s != 1)
        finish_reserves(state)
        assert all(len(h) == hand for h in state.hands)
        assert all(len(r) == 5 for r in state.reserves)
        assert state.phase == st.WINDOW and state.to_act() == (state.first_player,)


def test_take_back_returns_a_chosen_false_trick_and_leaves_the_game() -> None:
    """TT-6.1a, TT-5.5: used at once; the card goes back to hand (seen by all),
    and the bonus card leaves the round whether used or declined."""
    for choice in ("3 moon", None):
        state = play_position(new(3), leader=0, hands=[
            cs("9 sun", "1 sun"), cs("7 sun", "2 sun"), cs("4 circle", "5 circle")],
            false={2: cs("3 moon", "8 moon")})
        for seat, card in ((0, "9 sun"), (1, "7 sun"), (2, "4 circle")):
            act(state, seat, c(card))
        act(state, 0, st.PICK_BASE + 0)  # seat 0 won the 7: takes Take back, has no false trick
        assert state.phase == st.PLAY and 0 in state.out and 0 not in state.supply
        # Give seat 2 the next 7: set up another trick with Take back in the supply again.
        state = play_position(new(3), leader=0, hands=[
            cs("9 sun", "1 sun"), cs("6 sun", "2 sun"), cs("7 circle", "5 circle")],
            false={2: cs("3 moon", "8 moon")})
        for seat, card in ((0, "9 sun"), (1, "6 sun"), (2, "7 circle")):
            act(state, seat, c(card))
        act(state, 2, st.PICK_BASE + 0)
        assert state.phase == st.TAKE_BACK_PHASE and state.to_act() == (2,)
        assert state.legal_action_ids(2) == [st.DECLINE, *(st.TAKE_BACK_BASE + x for x in sorted(
            cs("3 moon", "8 moon", "7 circle")))]
        if choice is None:
            act(state, 2, st.DECLINE)
            assert len(state.false[2]) == 3 and state.known[2] == []
        else:
            act(state, 2, st.TAKE_BACK_BASE + c(choice))
            assert c(choice) in state.hands[2]
            assert [f[2][0] for f in state.false[2]] == cs("8 moon", "7 circle")
            seen = state.observation(0)["players"][2]["known_in_hand"]
            assert [x["id"] for x in seen] == [c(choice)]
        assert state.out == [0] and 0 not in state.supply
        assert state.observation(1)["bonus_out"] == ["take_back"]


def test_take_back_refills_an_empty_hand_before_the_end_check() -> None:
    """TT-5.5, TT-5.6: the end check comes after the bonus choices, so a card taken
    back into an empty hand keeps the round going."""
    state = play_position(new(3), leader=0, hands=[
        cs("9 sun", "1 sun"), cs("6 sun", "2 sun"), cs("7 circle")])
    for seat, card in ((0, "9 sun"), (1, "6 sun"), (2, "7 circle")):
        act(state, seat, c(card))
    assert state.hands[2] == []
    act(state, 2, st.PICK_BASE + 0)
    act(state, 2, st.TAKE_BACK_BASE + c("7 circle"))
    assert state.round_no == 0 and state.phase == st.PLAY and state.hands[2] == [c("7 circle")]
