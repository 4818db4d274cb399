"""Twisted rules (docs/rules/twisted.md), position by position, with the rulebook's examples."""

from __future__ import annotations

import pytest
from twistarena import engine
from twistarena.engine import IllegalAction
from twistarena.engine.twisted import DEFAULTS, GAME
from twistarena.engine.twisted.cards import DECK, PARTNER, TOADS
from twistarena.engine.twisted.state import OVER, START_ROW, TAKE, TWIST_BASE

from .helpers import kinds, table


def twist_id(card: int) -> int:
    return TWIST_BASE + card


# -- TW-1 components ----------------------------------------------------------


def test_deck_has_79_cards_7_toads_and_36_twist_pairs() -> None:
    """TW-1.1 / TW-1.2: 12..98 without multiples of 10; toads 22..88; pairs ab/ba."""
    assert len(DECK) == 79 == GAME.deck_size
    assert 11 not in DECK and 99 not in DECK and not any(c % 10 == 0 for c in DECK)
    assert sorted(TOADS) == [22, 33, 44, 55, 66, 77, 88]
    pairs = {frozenset((c, PARTNER[c])) for c in DECK if c not in TOADS}
    assert len(pairs) == 36
    for c in DECK:
        if c in TOADS:
            assert PARTNER[c] == -1
        else:
            assert PARTNER[c] in DECK and PARTNER[PARTNER[c]] == c and PARTNER[c] != c
    assert PARTNER[49] == 94 and PARTNER[12] == 21


@pytest.mark.parametrize(("players", "size"), [(2, 9), (3, 9), (4, 8)])
def test_deal_sizes(players: int, size: int) -> None:
    """TW-2.1: 9 cards each with 2 or 3 players, 8 with 4; the rest is the draw pile."""
    state = engine.make("twisted", players, 3)
    assert [len(h) for h in state.hands] == [size] * players  # type: ignore[attr-defined]
    assert state.observation(0)["draw_pile"] == 79 - players * size
    assert state.observation(0)["row"] == []


# -- the rulebook's sequence ----------------------------------------------------


def test_rulebook_sequence_34_41_49_then_twist_94() -> None:
    """TW-3.1 / TW-3.2, the Italian rulebook's example with four players:
    Alex starts the row with 34; Sara must play 24..44 and plays 41; Lino must
    play 31..51 and plays 49; Marlene shows 94 and twists 49 out of the row."""
    alex = [34, 12, 13, 14, 15, 16, 17, 18]
    sara = [41, 23, 24, 44, 45, 46, 47, 48]
    lino = [49, 28, 29, 31, 51, 52, 53, 56]
    marlene = [94, 95, 96, 97, 98, 37, 38, 39]
    state = table([alex, sara, lino, marlene])
    # Empty row: any card of the hand may start it.
    assert list(state.legal_action_ids(0)) == sorted(alex)
    state.apply(0, 34)
    # Rightmost 34: 24..44 only, plus the take.
    assert list(state.legal_action_ids(1)) == [24, 41, 44, TAKE]
    state.apply(1, 41)
    assert list(state.legal_action_ids(2)) == [31, 49, 51, TAKE]
    state.apply(2, 49)
    assert state.row == [34, 41, 49]
    legal = list(state.legal_action_ids(3))
    assert twist_id(94) in legal and 94 not in legal  # 94 is 45 away from 49
    state.apply(3, twist_id(94))
    assert state.row == [34, 41]
    assert sorted(state.plus[3]) == [49, 94]
    assert [len(h) for h in state.hands] == [8, 8, 8, 8]  # everyone drew back (TW-3.4)
    assert state.turn == 0
    assert state.scores() == [0, 0, 0, 2]


# -- TW-3.1 extend -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rightmost", "card", "legal"),
    [
        (34, 24, True),   # exactly -10
        (34, 44, True),   # exactly +10
        (34, 23, False),  # -11
        (34, 45, False),  # +11
        (34, 35, True),
        (12, 22, True),
        (12, 23, False),
        (98, 88, True),
        (98, 87, False),
        (55, 65, True),   # toads extend like any card
    ],
)
def test_extend_bounds(rightmost: int, card: int, legal: bool) -> None:
    """TW-3.1: the card may differ from the rightmost card by at most 10."""
    state = table([[card, 61], [71, 72]], row=[47, rightmost] if rightmost != 47 else [47])
    before = (list(state.row), [list(h) for h in state.hands], len(state.events))
    assert (card in state.legal_action_ids(0)) is legal
    if legal:
        state.apply(0, card)
        assert state.row[-1] == card
    else:
        with pytest.raises(IllegalAction, match=r"more than 10 away.*TW-3\.1") as err:
            state.apply(0, card)
        assert err.value.reason == IllegalAction.ILLEGAL
        assert (list(state.row), [list(h) for h in state.hands], len(state.events)) == before


def test_illegal_message_names_the_distance() -> None:
    """TW-3.1: the refusal explains the rule in a sentence."""
    state = table([[51, 61], [71, 72]], row=[34])
    with pytest.raises(IllegalAction) as err:
        state.apply(0, 51)
    assert str(err.value) == "51 is more than 10 away from the rightmost card 34 (TW-3.1)"
    with pytest.raises(IllegalAction, match="you do not hold 35"):
        state.apply(0, 35)


def test_extend_distance_is_an_option() -> None:
    """TW-3.1 figure 10 lives in DEFAULTS and can be overridden per match."""
    assert DEFAULTS["extend_distance"] == 10
    state = table([[39, 41], [71, 72]], row=[34], options={"extend_distance": 5})
    assert list(state.legal_action_ids(0)) == [39, TAKE]


# -- TW-3.2 twist --------------------------------------------------------------------


def test_twist_the_only_card_empties_the_row_and_next_player_starts_anew() -> None:
    """TW-3.2: twisting the only card of the row is allowed; the next player starts a new row."""
    state = table([[94, 12], [13, 81, 82]], row=[49])
    state.apply(0, twist_id(94))
    assert state.row == []
    assert sorted(state.plus[0]) == [49, 94]
    assert state.turn == 1 and state.phase == "play"
    # Starting anew: any card of the hand, no take on an empty row (TW-3.3).
    assert list(state.legal_action_ids(1)) == [13, 81, 82]
    state.apply(1, 81)
    assert state.row == [81]


def test_twist_a_card_in_the_middle_closes_the_gap() -> None:
    """TW-3.2: any non-toad card anywhere in the row may be twisted; the row closes up."""
    state = table([[14, 95], [71, 72]], row=[34, 41, 49, 57])
    legal = list(state.legal_action_ids(0))
    assert twist_id(14) in legal  # partner 41 sits in the middle
    assert twist_id(95) not in legal  # partner 59 is not in the row
    state.apply(0, twist_id(14))
    assert state.row == [34, 49, 57]
    assert sorted(state.plus[0]) == [14, 41]


def test_toads_can_never_be_twisted() -> None:
    """TW-1.2 / TW-3.2: toads have no partner; no hand card can twist a toad out."""
    row = sorted(TOADS)
    hand = [c for c in DECK if c not in TOADS][:20]
    state = table([hand, [71, 72]], row=row)
    legal = list(state.legal_action_ids(0))
    assert not [a for a in legal if TWIST_BASE < a < TAKE]
    # Holding a toad gives no twist either, even with that toad's double in play.
    state = table([[44, 46], [71, 72]], row=[54, 33])
    assert [a for a in state.legal_action_ids(0) if a > TWIST_BASE] == [TAKE]
    with pytest.raises(IllegalAction, match=r"toad.*TW-3\.2"):
        state.apply(0, twist_id(44))


def test_twist_refused_when_partner_not_in_row() -> None:
    """TW-3.2: the partner must lie in the row."""
    state = table([[94, 61], [71, 72]], row=[34])
    with pytest.raises(IllegalAction, match=r"partner 49 of 94 is not in the row \(TW-3\.2\)"):
        state.apply(0, twist_id(94))


# -- TW-3.3 take ------------------------------------------------------------------------


def test_take_then_start_a_new_row() -> None:
    """TW-3.3: the taker puts the row in their minus pile, then starts a new row with any card."""
    state = table([[61, 62, 63], [71, 72, 73]], row=[34, 41])
    state.apply(0, TAKE)
    assert state.minus[0] == [34, 41] and state.row == []
    assert state.phase == START_ROW and state.to_act() == (0,)
    assert list(state.legal_action_ids(0)) == [61, 62, 63]  # any card, no take, no twist
    with pytest.raises(IllegalAction, match=r"start a new row.*TW-3\.3"):
        state.apply(0, TAKE)
    top = state.pile[-1]
    state.apply(0, 63)
    assert state.row == [63]
    assert state.hands[0] == sorted([61, 62, top])  # drew once, after the new row (TW-3.4)
    assert state.turn == 1 and state.phase == "play"
    assert state.scores()[0] == -2


def test_take_refused_on_an_empty_row() -> None:
    """TW-3.3: taking is allowed only when the row is not empty."""
    state = table([[61, 62], [71, 72]], row=[])
    assert TAKE not in state.legal_action_ids(0)
    with pytest.raises(IllegalAction, match=r"row is not empty \(TW-3\.3\)"):
        state.apply(0, TAKE)


def test_take_is_always_allowed_on_a_non_empty_row() -> None:
    """TW-3.3: a player may take even when they could extend or twist."""
    state = table([[35, 43, 12], [71, 72]], row=[34])
    assert list(state.legal_action_ids(0)) == [35, 43, twist_id(43), TAKE]


def test_forced_take_when_nothing_fits() -> None:
    """TW-3.3: who cannot extend or twist must take."""
    state = table([[12, 13], [71, 72]], row=[98])
    assert list(state.legal_action_ids(0)) == [TAKE]


# -- TW-4.5 expert variant ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("expert", "row", "pile", "face_down", "pile_left"),
    [
        (True, [57], [81, 82, 83], [83], [81, 82]),   # one card + top of the pile
        (False, [57], [81, 82, 83], [], [81, 82, 83]),  # variant off
        (True, [57, 61], [81, 82, 83], [], [81, 82, 83]),  # two cards: no extra
    ],
)
def test_expert_variant_with_a_draw_pile(
    expert: bool, row: list[int], pile: list[int], face_down: list[int], pile_left: list[int]
) -> None:
    """TW-4.5: taking a row of exactly one card also takes the top card of the draw
    pile, face-down: the event says that one was taken, not which."""
    state = table([[12, 13], [14, 15]], row=row, pile=pile, options={"expert": expert})
    state.apply(0, TAKE)
    assert state.minus[0] == row and state.face_down[0] == face_down
    assert state.pile == pile_left
    assert state.phase == START_ROW
    take = state.event_log(None)[-1]
    assert take["kind"] == "take" and take["face_down"] == len(face_down)
    assert all(take == state.event_log(s)[-1] for s in (0, 1))


def test_expert_variant_without_a_draw_pile_ends_the_round() -> None:
    """TW-4.5 'if any' + TW-4.1: with no draw pile the one-card take just ends the round."""
    state = table([[12, 13], [14, 15]], row=[57], pile=[], options={"expert": True, "rounds": 1})
    state.apply(0, TAKE)
    assert state.minus[0] == [57]
    assert state.phase == OVER and state.scores() == [-1, 0]


def test_expert_card_that_empties_the_pile_still_restarts() -> None:
    """TW-4.1 / TW-4.5 (interpretation): the pile was not empty when the row was taken,
    so the taker starts a new row; play then goes on without drawing."""
    state = table([[12, 13], [14, 15]], row=[57], pile=[83], options={"expert": True})
    state.apply(0, TAKE)
    assert state.minus[0] == [57] and state.face_down[0] == [83] and state.pile == []
    assert state.phase == START_ROW
    state.apply(0, 13)
    assert state.hands[0] == [12] and state.row == [13]


# -- TW-4.1 / TW-4.2 end of a round ----------------------------------------------------------


def test_take_with_empty_pile_ends_the_round_without_restart() -> None:
    """TW-4.1: with the draw pile empty, a take ends the round at once; no new row."""
    state = table([[61, 62], [71, 72]], row=[34, 41], pile=[], options={"rounds": 1})
    mark = len(state.events)
    state.apply(0, TAKE)
    assert kinds(state, mark) == ["take", "round_end", "game_end"]
    assert state.is_terminal() and state.row == []
    assert state.hands[0] == [61, 62]  # no card went to a new row
    assert state.scores() == [-2, 0]


def test_take_with_empty_pile_in_round_one_deals_round_two() -> None:
    """TW-4.1 / TW-4.4: the round ends; round 2 is dealt from a full reshuffle."""
    state = table([[61, 62], [71, 72]], row=[34, 41], pile=[])
    state.apply(0, TAKE)
    assert state.round == 2 and state.phase == "play" and state.row == []
    assert [len(h) for h in state.hands] == [9, 9]
    assert len(state.pile) == 79 - 18
    assert state.totals == [-2, 0] and state.minus == [[], []]


def test_twisting_the_last_card_with_empty_pile_ends_the_round() -> None:
    """TW-4.1: the row emptied by twisting its last card, no draw pile: the round ends."""
    state = table([[94, 12], [13, 81]], row=[49], pile=[], options={"rounds": 1})
    state.apply(0, twist_id(94))
    assert state.is_terminal() and state.scores() == [2, 0]


def test_without_draw_pile_play_goes_on_without_drawing() -> None:
    """TW-4.1: an extend with no draw pile does not end the round; hands shrink."""
    state = table([[35, 12], [36, 13]], row=[34], pile=[])
    state.apply(0, 35)
    assert state.hands[0] == [12] and not state.is_terminal() and state.turn == 1


def test_empty_hand_must_take() -> None:
    """TW-4.2: a player whose hand is empty on their turn must take (and the round ends)."""
    state = table([[12], []], row=[34, 41], pile=[], turn=1, options={"rounds": 1})
    assert list(state.legal_action_ids(1)) == [TAKE]
    state.apply(1, TAKE)
    assert state.is_terminal() and state.scores() == [0, -2]


def test_empty_hand_reached_in_play_must_take() -> None:
    """TW-4.2 by a scripted sequence: seat 0 plays its last card, then must take next turn."""
    state = table([[35], [36, 37]], row=[34], pile=[], options={"rounds": 1})
    state.apply(0, 35)
    state.apply(1, 36)
    assert state.hands[0] == [] and list(state.legal_action_ids(0)) == [TAKE]
    state.apply(0, TAKE)
    assert state.is_terminal() and state.scores() == [-3, 0]


# -- TW-4.3 scoring --------------------------------------------------------------------------


def test_rulebook_scoring_example_12_plus_17_minus_is_minus_5() -> None:
    """TW-4.3, the Italian rulebook's count: "Sara ha avuto 12 punti in più e 17 punti in
    meno. Il suo risultato è quindi -5." Here 12 plus cards, and a minus pile of two toads
    (2 x 5) and seven plain cards (7 x 1): 17 points, taken in the last take of the round."""
    state = table([[83, 84], [85, 86]], row=[19], pile=[], options={"rounds": 1})
    state.plus[0] = [12, 21, 13, 31, 14, 41, 15, 51, 16, 61, 17, 71]
    state.minus[0] = [22, 33, 23, 24, 25, 26, 27, 28]
    state.apply(0, TAKE)
    end = next(e for e in state.event_log(None) if e["kind"] == "round_end")
    assert end["round_scores"] == [-5, 0]
    assert state.scores() == [-5, 0]


@pytest.mark.parametrize(
    ("minus", "penalty", "score"),
    [([22], 5, -5), ([22, 23], 5, -6), ([88, 77, 12], 5, -11), ([22], 3, -3), ([23], 3, -1)],
)
def test_toads_cost_five(minus: list[int], penalty: int, score: int) -> None:
    """TW-4.3: minus-pile cards cost 1, toads 5 (the figure is the option toad_penalty)."""
    state = table([[61], [71]], row=[], options={"toad_penalty": penalty})
    state.minus[0] = minus
    assert state.scores()[0] == score
    assert state.observation(1)["seats"][0]["round_score"] == score


def test_plus_pile_counts_and_hand_does_not() -> None:
    """TW-4.3: +1 per plus card; cards left in hand do not count."""
    state = table([[61, 62, 63, 22], [71]], row=[])
    state.plus[0] = [49, 94]
    assert state.scores() == [2, 0]


# -- TW-2.2 / TW-4.4 rounds ---------------------------------------------------------------------


def _play_random(state: engine.State, seed: int) -> None:
    import random

    rng = random.Random(seed)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_start_passes_left_each_round_and_first_starter_is_random(players: int) -> None:
    """TW-2.2: a random player starts; in later rounds the start passes one seat left."""
    firsts = set()
    for seed in range(40):
        state = engine.make("twisted", players, seed, {"rounds": 3})
        _play_random(state, seed)
        starts = [e["starter"] for e in state.event_log(None) if e["kind"] == "round_start"]
        assert len(starts) == 3
        assert starts[1] == (starts[0] + 1) % players
        assert starts[2] == (starts[0] + 2) % players
        firsts.add(starts[0])
        # The first decision of each round is the starter's.
        ends = [e for e in state.event_log(None) if e["kind"] == "round_end"]
        assert len(ends) == 3
        assert state.scores() == ends[-1]["scores"]
        assert [sum(x) for x in zip(*[e["round_scores"] for e in ends], strict=True)] \
            == state.scores()
    assert firsts == set(range(players))


def test_round_two_starter_acts_first() -> None:
    """TW-2.2: after round 1 ends, the seat left of round 1's starter is to act."""
    state = table([[61, 62], [71, 72], [81, 82]], row=[34], pile=[], turn=2)
    state.first_starter = state.starter = 1
    state.apply(2, TAKE)
    assert state.round == 2 and state.to_act() == (2,) and state.starter == 2


def test_default_game_is_two_rounds() -> None:
    """TW-4.4: 2 rounds by default; the number is an option."""
    assert DEFAULTS["rounds"] == 2
    for rounds in (1, 2, 4):
        state = engine.make("twisted", 3, 11, {"rounds": rounds})
        _play_random(state, 11)
        assert sum(e["kind"] == "round_end" for e in state.event_log(None)) == rounds


def test_bad_options_are_refused() -> None:
    """Options that break the rules are refused with a clear message."""
    with pytest.raises(engine.InvalidOptions, match="hand_size"):
        engine.make("twisted", 4, 1, {"hand_size": {"4": 20}})
    with pytest.raises(engine.InvalidOptions, match="rounds"):
        engine.make("twisted", 2, 1, {"rounds": 0})
    state = engine.make("twisted", 4, 1, {"hand_size": {"4": 5}})
    assert [len(h) for h in state.hands] == [5] * 4  # type: ignore[attr-defined]


def test_ties_are_shared() -> None:
    """TW-4.4: the best total wins, ties shared."""
    state = table([[61], [71], [81]], row=[34, 41], pile=[], options={"rounds": 1}, turn=2)
    state.plus[0] = [49, 94]
    state.plus[1] = [12, 21]
    state.apply(2, TAKE)
    assert state.winners() == [0, 1] and state.places() == [1, 1, 3]
