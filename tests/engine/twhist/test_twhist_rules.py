"""Table and position tests of Twhist's rules (docs/rules/twhist.md, TH-1 .. TH-6)."""

from __future__ import annotations

import random

import pytest
from twistarena import engine
from twistarena.engine import IllegalAction
from twistarena.engine.twhist import DEFAULTS
from twistarena.engine.twhist.cards import PICK_BASE, STOP, TWHIST_BASE
from twistarena.engine.twhist.state import TwhistState

from .helpers import card_ids, events, flips, pick, play, position, token_id

# TH-1.4 [decided], written out again so that a changed table fails here.
STARS = {-1: 4, 0: 3, 1: 2, 2: 1, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 4}


def test_data_table_holds_the_decided_figures() -> None:
    """TH-1.3, TH-1.4, TH-4.1, TH-2.2 [decided]: the defaults are docs/rules/twhist.md's figures."""
    assert DEFAULTS["colours"] == ["red", "yellow", "green", "blue"]
    assert DEFAULTS["values"] == [-1, 0, 1, 2, 2, 3, 4, 5]
    assert (DEFAULTS["flip_min"], DEFAULTS["flip_max"]) == (-1, 8)
    assert dict(zip(range(-1, 9), DEFAULTS["stars"], strict=True)) == STARS
    assert DEFAULTS["equal_values"] == "earlier" and DEFAULTS["twhist_visible"] is True


@pytest.mark.parametrize(("value", "stars"), sorted(STARS.items()))
def test_star_table(value: int, stars: int) -> None:
    """TH-1.4: flipping the FLIP card of a value shows its stars; TH-6.1 counts them."""
    state = position(3, {0: ["red 1"]}, stars_up={0: [value]})
    assert state.scores() == [stars, 0, 0]
    assert state.observation(1)["players"][0]["star_side"] == [value]


@pytest.mark.parametrize(("cards", "flipped"), [
    (["red -1", "yellow -1"], -1),  # sum -2 below -1: the -1 card (TH-5.3)
    (["red 5", "yellow 5"], 8),  # sum 10 above 8: the 8 card (TH-5.3)
    (["red 5", "yellow 4"], 8),  # 9 -> 8
    (["red -1", "yellow 0"], -1),  # exactly -1, no clamping needed
    (["red 4", "yellow 4"], 8),  # exactly 8
])
def test_sums_are_clamped(cards: list[str], flipped: int) -> None:
    """TH-5.3: sums below -1 flip the -1 card, sums above 8 flip the 8 card."""
    state = position(3, {0: [cards[0]], 1: [cards[1]], 2: ["red 3"]})
    play(state, [cards[0], cards[1], "PASS"])
    pick(state, cards)
    assert flips(state) == {0: flipped}  # yellow cannot win: seat 0 picks both, none left


def test_remainder_is_clamped_too() -> None:
    """TH-5.2 + TH-5.3: the others' remainder sum is clamped as well (-1 + -1 -> -1)."""
    state = position(4, {0: ["red 5"], 1: ["red -1"], 2: ["green -1"], 3: ["red 0"]})
    play(state, ["red 5", "red -1", "green -1", "red 0"])
    pick(state, ["red 5", "red 0"])
    assert flips(state) == {0: 5, 1: -1, 2: -1, 3: -1}


def test_flipping_a_star_side_back() -> None:
    """TH-5.4: flipping a FLIP card that shows its star side turns it back and loses its
    stars; it can be flipped to the star side again later."""
    state = position(3, {0: ["red 5", "red 3"], 1: ["red 0", "red 4"], 2: ["blue 1", "blue 2"]},
                     stars_up={0: [5, -1], 1: [3]})
    assert state.scores() == [2 + 4, 1, 0]
    play(state, ["red 5", "red 0", "blue 1"])
    pick(state, ["red 5"])  # seat 0 flips 5 back; seats 1, 2 flip 0+1 = 1
    assert state.scores() == [4, 1 + 2, 2]
    assert state.observation(0)["players"][0]["star_side"] == [-1]
    flip = next(e for e in events(state, "flip") if e["seat"] == 0)
    assert (flip["value"], flip["star_side"], flip["stars"]) == (5, False, 4)
    play(state, ["red 3", "red 4", "blue 2"])  # red 4 wins: seat 1 picks 3+4 = 7 ...
    pick(state, ["red 4", "red 3"])
    assert state.scores() == [4 + 1, 1 + 2 + 3, 2 + 1]  # ... seats 0 and 2 flip 2


def test_lead_colour_set_by_a_later_number_card() -> None:
    """TH-3.2: when the leader plays a Twhist card, the next number card sets the lead
    colour; TH-3.3 then binds the following players to it."""
    state = position(4, {0: ["red 5"], 1: ["yellow 1", "red 4"], 2: ["yellow 3", "red 2"],
                         3: ["red 3", "blue 0"]})
    play(state, ["PP"])
    assert state.observation(1)["lead_colour"] == ""
    assert state.legal_action_ids(1) == sorted(card_ids(state, ["yellow 1", "red 4"])) + [
        TWHIST_BASE + k for k in range(4)]
    play(state, ["yellow 1"])
    assert state.observation(2)["lead_colour"] == "yellow"
    yellow_3 = token_id(state, 2, "yellow 3")
    assert state.legal_action_ids(2) == [yellow_3] + [TWHIST_BASE + k for k in range(4)]
    with pytest.raises(IllegalAction, match=r"must follow the lead colour.*TH-3\.3"):
        state.apply(2, token_id(state, 2, "red 2"))
    play(state, ["yellow 3", "red 3"])  # seat 3 has no yellow: any card, cannot win
    (resolve,) = events(state, "resolve")
    assert resolve["natural_winner"] == 2 and resolve["next_leader"] == 0
    assert state.voids[3] == 1 << 1 and state.observation(0)["players"][3]["void"] == ["yellow"]


def test_off_colour_card_cannot_win() -> None:
    """TH-3.3: a higher number card of another colour does not win; TH-4.1."""
    state = position(3, {0: ["green 0"], 1: ["blue 5"], 2: ["green -1"]})
    play(state, ["green 0", "blue 5", "green -1"])
    (resolve,) = events(state, "resolve")
    assert resolve["natural_winner"] == 0 and resolve["picker"] == 0


@pytest.mark.parametrize(("rule", "winner"), [("earlier", 1), ("later", 2)])
def test_equal_values(rule: str, winner: int) -> None:
    """TH-4.1 [decided]: of two equal lead-colour cards the earlier one wins (option: later)."""
    state = position(3, {0: ["red 1"], 1: ["red 2"], 2: ["red 2"]},
                     options={"equal_values": rule})
    play(state, ["red 1", "red 2", "red 2"])
    assert events(state, "resolve")[0]["natural_winner"] == winner


def test_picking_is_a_sequence_of_single_card_decisions() -> None:
    """TH-5.1: the picker must pick one card (no stop yet), then a second or stop."""
    state = position(3, {0: ["red 5"], 1: ["red 1"], 2: ["red 3"]})
    play(state, ["red 5", "red 1", "red 3"])
    assert state.to_act() == (0,) and state.observation(0)["phase"] == "pick"
    ids = card_ids(state, ["red 5", "red 1", "red 3"])
    assert list(state.legal_action_ids(0)) == sorted(PICK_BASE + c for c in ids)
    with pytest.raises(IllegalAction, match=r"at least one.*TH-5\.1"):
        state.apply(0, STOP)
    state.apply(0, PICK_BASE + ids[0])
    assert list(state.legal_action_ids(0)) == [*sorted(PICK_BASE + c for c in ids[1:]), STOP]
    state.apply(0, STOP)
    assert flips(state) == {0: 5, 1: 4, 2: 4}


def test_single_number_card_is_taken_without_a_choice() -> None:
    """TH-5.1: with one number card in the trick the picker takes it; no decision is asked."""
    state = position(3, {0: ["red 2"], 1: ["red 1"], 2: ["red 3"]})
    play(state, ["red 2", "PASS", "T"])
    assert state.phase == 0 and flips(state) == {2: 2}  # seat 0 flips nothing: none left


def test_illegal_actions_explain_the_rule() -> None:
    """TH-1.2 / TH-3.1: a Twhist card is played once; a card not held cannot be played."""
    state = position(3, {0: ["red 2", "red 3"], 1: ["red 1", "red 0"], 2: ["red 4", "red 5"]})
    play(state, ["T", "red 1", "red 4"])
    pick(state, ["red 4"])
    assert state.to_act() == (2,)
    with pytest.raises(IllegalAction, match=r"do not hold red 2 \(TH-3\.1\)"):
        state.apply(2, token_id(state, 0, "red 2"))
    play(state, ["red 5"])
    with pytest.raises(IllegalAction, match=r"Thief.*TH-1\.2"):
        state.apply(0, TWHIST_BASE + 1)


@pytest.mark.parametrize(("n", "hand", "open_cards"), [(3, 10, 2), (4, 8, 0), (5, 6, 2)])
def test_dealing(n: int, hand: int, open_cards: int) -> None:
    """TH-2.1: 10/8/6 cards each; with 3 or 5 players the 31st and 32nd card lie open,
    unused. TH-1.2: 4 Twhist cards each. TH-2.3: left of the random dealer leads."""
    dealers = set()
    for seed in range(40):
        state = engine.make("twhist", n, seed)
        assert isinstance(state, TwhistState)
        view = state.public_view()
        assert [p["hand_count"] for p in view["players"]] == [hand] * n
        assert [p["twhist_count"] for p in view["players"]] == [4] * n
        assert len(view["open_cards"]) == open_cards
        zones = state.card_zones()
        assert sorted(c for z in zones.values() for c in z) == list(range(32))
        assert [c["id"] for c in view["open_cards"]] == zones["open"]
        assert view["leader"] == (view["dealer"] + 1) % n and state.to_act() == (view["leader"],)
        assert view["tricks_total"] == hand + 4  # TH-3.4
        dealers.add(view["dealer"])
    assert dealers == set(range(n))


@pytest.mark.parametrize("n", [3, 4, 5])
def test_a_game_plays_every_card_and_ends(n: int) -> None:
    """TH-3.4 / TH-6.1: one trick per card in hand (number cards + 4 Twhist cards), each
    trick one card from each player; the game ends after the last trick."""
    rng = random.Random(n)
    state = engine.make("twhist", n, 99)
    assert isinstance(state, TwhistState)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    plays = events(state, "play")
    assert len(events(state, "resolve")) == 32 // n + 4
    assert len(plays) == n * (32 // n + 4)
    assert sum(1 for p in plays if p["twhist"]) == 4 * n
    assert state.public_view()["phase"] == "over"
    (over,) = events(state, "game_over")
    assert over["scores"] == state.scores()


def test_tie_breaker_and_shared_place() -> None:
    """TH-6.1: most stars wins; ties go to more FLIP cards showing stars; a remaining tie
    is shared."""
    # seat 0: -1 = 4 stars on 1 card; seat 1: 2, 3 and 1 = 1+1+2 = 4 on 3 cards;
    # seat 2: 0 and 4 = 3+1 = 4 on 2 cards; seat 3: 1, 2, 4 = 2+1+1 = 4 on 3 cards.
    state = position(4, {0: ["red 1"]}, stars_up={0: [-1], 1: [2, 3, 1], 2: [0, 4],
                                                  3: [1, 2, 4]})
    assert state.scores() == [4, 4, 4, 4]
    assert state.places() == [4, 1, 3, 1]
    assert state.winners() == [1, 3]


def test_bad_options_are_refused() -> None:
    """TH-1.3 / TH-1.4: an overridden deck must keep 32 cards; the star table one entry
    per FLIP value."""
    with pytest.raises(engine.InvalidOptions, match="32"):
        engine.make("twhist", 4, 1, {"values": [1, 2, 3]})
    with pytest.raises(engine.InvalidOptions, match="stars"):
        engine.make("twhist", 4, 1, {"stars": [1, 2]})
    with pytest.raises(engine.InvalidOptions, match="equal_values"):
        engine.make("twhist", 4, 1, {"equal_values": "random"})


def test_overridden_star_table_and_bounds_are_used() -> None:
    """Match options override the [decided] figures: here FLIP cards 0..6, 10 stars at 6."""
    options = {"flip_min": 0, "flip_max": 6, "stars": [1, 1, 1, 1, 1, 1, 10]}
    state = position(3, {0: ["red 5"], 1: ["red 4"], 2: ["red -1"]}, options=options)
    play(state, ["red 5", "red 4", "red -1"])
    pick(state, ["red 5", "red 4"])  # 9 -> clamped to 6; the others' -1 -> 0
    assert flips(state) == {0: 6, 1: 0, 2: 0} and state.scores() == [10, 1, 1]
