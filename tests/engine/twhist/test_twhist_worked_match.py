"""One small Twhist match checked field by field: every observation and public-view
field at each phase, every event's payload, every label and every illegal-move text.

The position is built by hand (``helpers.position``) and every expected value below
is worked out from docs/rules/twhist.md, not read back from the engine. Card ids
follow the rules' table: ``id = colour * 8 + index`` with the colours red, yellow,
green, blue and the values -1, 0, 1, 2, 2, 3, 4, 5 (TH-1.3).
"""

from __future__ import annotations

from typing import Any

import pytest
from twistarena import engine
from twistarena.engine import IllegalAction
from twistarena.engine.twhist.data import DEFAULTS

from .helpers import events, pick, play, position

ALL = ["round_winner", "thief", "pole_position", "pass"]
NO_CARD = {"id": -1, "colour": "", "value": 0}
#: The eight cards dealt in the position, by text -> id (TH-1.3's numbering).
ID = {"red 2": 3, "red 3": 5, "red 5": 7, "green 4": 22,
      "blue 0": 25, "blue 1": 26, "blue 2": 27, "blue 3": 29}
HANDS = {0: ["red 3", "blue 0"], 1: ["red 5", "blue 1"], 2: ["green 4", "blue 2"],
         3: ["red 2", "blue 3"]}
#: Every other number card is already out (the helper lays them on the discard pile).
DISCARD_BEFORE = [c for c in range(32) if c not in ID.values()]


def card(text: str) -> dict[str, Any]:
    colour, value = text.split()
    return {"id": ID[text], "colour": colour, "value": int(value)}


def player(seat: int, hand: int, names: list[str], star_side: list[int], stars: int,
           void: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"seat": seat, "hand_count": hand, "twhist_count": len(names),
            "twhist_names": names, "star_side": star_side, "stars": stars,
            "star_cards": len(star_side), "void": list(void)}


def start(options: dict[str, Any] | None = None) -> Any:
    state = position(4, HANDS, leader=0, options=options)
    state.dealer = 3  # TH-2.3: the player left of the dealer (seat 3) leads
    return state


def table(**changes: Any) -> dict[str, Any]:
    """The shared part of every view before the first card; ``changes`` overrides."""
    out = {"game": "twhist", "phase": "play", "to_act": [0], "scores": [0, 0, 0, 0],
           "dealer": 3, "leader": 0, "tricks_done": 0, "tricks_total": 6,  # TH-3.4: 2 + 4
           "lead_colour": "", "trick": [], "picker": -1, "next_leader": -1, "picked": [],
           "pool": [], "open_cards": [],
           "players": [player(s, 2, ALL, [], 0) for s in range(4)],
           "discard": [{"id": c, "colour": ["red", "yellow", "green", "blue"][c // 8],
                        "value": DEFAULTS["values"][c % 8]} for c in DISCARD_BEFORE],
           "rules": dict(DEFAULTS)}
    out.update(changes)
    return out


def discard(*texts: str) -> list[dict[str, Any]]:
    return table()["discard"] + [card(t) for t in texts]  # type: ignore[no-any-return]


def test_first_trick_views_events_and_labels() -> None:
    """TH-3.2/TH-3.3: red leads; TH-4.4/TH-4.8: the Thief picks, the natural winner
    (red 3 over red 2, TH-4.1) leads next; TH-5.1/TH-5.2: the picker flips 4 + 3 = 7
    (3 stars), everyone else the 2 left (1 star); TH-5.5 the cards go face-up."""
    state = start()
    assert state.observation(0) == {**table(), "seat": 0, "hand": [card("red 3"), card("blue 0")],
                                    "twhist_hand": ALL}
    play(state, ["red 3"])
    players = [player(0, 1, ALL, [], 0), *(player(s, 2, ALL, [], 0) for s in (1, 2, 3))]
    trick = [{"seat": 0, "card": card("red 3"), "twhist": ""}]
    expected = table(to_act=[1], lead_colour="red", trick=trick, players=players)
    assert state.public_view() == expected
    assert state.observation(1) == {**expected, "seat": 1,
                                    "hand": [card("red 5"), card("blue 1")], "twhist_hand": ALL}
    assert [a.to_json() for a in state.legal_actions(1)] == [
        {"id": 7, "label": "play red 5", "payload": {"kind": "play", "card": card("red 5")}},
        {"id": 32, "label": "play Round-winner",
         "payload": {"kind": "twhist", "twhist": "round_winner"}},
        {"id": 33, "label": "play Thief", "payload": {"kind": "twhist", "twhist": "thief"}},
        {"id": 34, "label": "play Pole-position",
         "payload": {"kind": "twhist", "twhist": "pole_position"}},
        {"id": 35, "label": "play Pass", "payload": {"kind": "twhist", "twhist": "pass"}},
    ]
    play(state, ["T", "green 4", "red 2"])
    # Three number cards: the Thief's player (seat 1) picks one or two of them.
    trick += [{"seat": 1, "card": NO_CARD, "twhist": "thief"},
              {"seat": 2, "card": card("green 4"), "twhist": ""},
              {"seat": 3, "card": card("red 2"), "twhist": ""}]
    players = [player(0, 1, ALL, [], 0),
               player(1, 2, ["round_winner", "pole_position", "pass"], [], 0),
               player(2, 1, ALL, [], 0, ("red",)), player(3, 1, ALL, [], 0)]
    pool = [card("red 2"), card("red 3"), card("green 4")]
    picking = table(phase="pick", to_act=[1], lead_colour="red", trick=trick, picker=1,
                    next_leader=0, pool=pool, players=players)
    assert state.public_view() == picking
    assert state.observation(1)["twhist_hand"] == ["round_winner", "pole_position", "pass"]
    assert [(a.id, a.label) for a in state.legal_actions(1)] == [
        (39, "pick red 2"), (41, "pick red 3"), (58, "pick green 4")]  # 36 + card id
    assert state.describe(1, 58).payload == {"kind": "pick", "card": card("green 4")}
    pick(state, ["green 4", "red 3"])
    players = [player(0, 1, ALL, [2], 1),
               player(1, 2, ["round_winner", "pole_position", "pass"], [7], 3),
               player(2, 1, ALL, [2], 1, ("red",)), player(3, 1, ALL, [2], 1)]
    assert state.public_view() == table(scores=[1, 3, 1, 1], tricks_done=1, players=players,
                                        discard=discard("green 4", "red 3", "red 2"))
    assert state.event_log(None) == [
        {"kind": "play", "seat": 0, "card": card("red 3"), "twhist": "", "lead_colour": "red"},
        {"kind": "play", "seat": 1, "card": NO_CARD, "twhist": "thief", "lead_colour": "red"},
        {"kind": "play", "seat": 2, "card": card("green 4"), "twhist": "", "lead_colour": "red"},
        {"kind": "play", "seat": 3, "card": card("red 2"), "twhist": "", "lead_colour": "red"},
        {"kind": "resolve", "trick": 1, "natural_winner": 0, "picker": 1, "next_leader": 0,
         "sitting_out": [], "number_cards": 3},
        {"kind": "pick", "seat": 1, "card": card("green 4")},
        {"kind": "pick", "seat": 1, "card": card("red 3")},
        {"kind": "flip", "seat": 1, "sum": 7, "value": 7, "star_side": True, "stars": 3},
        {"kind": "flip", "seat": 0, "sum": 2, "value": 2, "star_side": True, "stars": 1},
        {"kind": "flip", "seat": 2, "sum": 2, "value": 2, "star_side": True, "stars": 1},
        {"kind": "flip", "seat": 3, "sum": 2, "value": 2, "star_side": True, "stars": 1},
    ]


def test_a_whole_match_to_the_end() -> None:
    """Six tricks (TH-3.4) with Pass (TH-4.7), Pole-position (TH-4.5), powerless second
    cards (TH-4.2) and tricks without number cards (TH-4.8), then TH-6.1's places."""
    state = start()
    play(state, ["red 3", "T", "green 4", "red 2"])
    pick(state, ["green 4", "red 3"])  # stars 1, 3, 1, 1 (see the test above)
    # Trick 2: blue leads; seat 2's Pass sits it out; the blue 3 wins, picks itself and
    # stops: 3 (1 star); seats 0 and 1 flip the 0 + 1 left: 1 (2 stars).
    play(state, ["blue 0", "blue 1", "PASS", "blue 3"])
    assert state.observation(3)["pool"] == [card("blue 0"), card("blue 1"), card("blue 3")]
    pick(state, ["blue 3"])
    assert events(state, "resolve")[-1] == {
        "kind": "resolve", "trick": 2, "natural_winner": 3, "picker": 3, "next_leader": 3,
        "sitting_out": [2], "number_cards": 3}
    assert state.scores() == [3, 5, 1, 2]
    # Trick 3, led by seat 3: its Pass sits out, seat 0's Pole-position leads next, the
    # red 5 (the first number card sets red, TH-3.2) wins: seat 1 takes the blue 2
    # (TH-5.1: one card, 1 star); seats 0 and 2 flip the 5 left (2 stars).
    play(state, ["PASS", "PP", "red 5", "blue 2"])
    # A Twhist card led: no lead colour until the red 5 (TH-3.2).
    assert [e["lead_colour"] for e in events(state, "play")[-4:]] == ["", "", "red", "red"]
    assert events(state, "play")[-4] == {"kind": "play", "seat": 3, "card": NO_CARD,
                                         "twhist": "pass", "lead_colour": ""}
    pick(state, ["blue 2"])
    assert state.scores() == [5, 6, 3, 2]
    # Tricks 4 to 6 hold no number card: nobody flips; the Thief "picks" nothing.
    play(state, ["T", "RW", "T", "PP"])  # led by seat 0; seat 3's Pole-position leads
    assert events(state, "resolve")[-1] == {
        "kind": "resolve", "trick": 4, "natural_winner": -1, "picker": 0, "next_leader": 3,
        "sitting_out": [], "number_cards": 0}
    play(state, ["RW"])
    assert state.card_zones()["trick"] == []  # a Twhist card is no card of the 32
    play(state, ["RW", "PASS", "RW"])  # the first Round-winner (seat 3) leads
    assert state.observation(3)["leader"] == 3 and state.observation(3)["tricks_done"] == 5
    assert reason(state, 3, 32) == (
        "you no longer hold your Round-winner card; each Twhist card is played once (TH-1.2)")
    play(state, ["T", "PASS", "PP", "PP"])  # seat 1's Pole-position is the first
    over = state.public_view()
    assert state.is_terminal() and state.to_act() == ()
    players = [player(0, 0, [], [1, 2, 5], 5), player(1, 0, [], [1, 2, 7], 6),
               player(2, 0, [], [2, 5], 3, ("red",)), player(3, 0, [], [2, 3], 2)]
    assert over == table(phase="over", to_act=[], scores=[5, 6, 3, 2], leader=1,
                         tricks_done=6, players=players,
                         discard=discard("green 4", "red 3", "red 2", "blue 3", "blue 0",
                                         "blue 1", "blue 2", "red 5"))
    assert state.observation(2) == {**over, "seat": 2, "hand": [], "twhist_hand": []}
    assert state.places() == [2, 1, 3, 4]
    assert events(state, "game_over") == [
        {"kind": "game_over", "scores": [5, 6, 3, 2], "places": [2, 1, 3, 4]}]
    error = state.check(0, 32)
    assert error is not None and (error.reason, str(error)) == ("game_over", "the match is over")


def test_hidden_twhist_cards_show_only_to_their_owner() -> None:
    """TH-2.2 with ``twhist_visible`` false: counts for everyone, names only to the owner."""
    state = start({"twhist_visible": False})
    play(state, ["red 3", "T"])
    rules = {**DEFAULTS, "twhist_visible": False}
    seen = state.observation(1)
    assert seen["rules"] == rules
    assert [(p["twhist_count"], p["twhist_names"]) for p in seen["players"]] == [
        (4, []), (3, ["round_winner", "pole_position", "pass"]), (4, []), (4, [])]
    assert [p["twhist_names"] for p in state.public_view()["players"]] == [[]] * 4
    assert state.observation(2)["players"][2]["twhist_names"] == ALL


def reason(state: Any, seat: int, action: int) -> str:
    error = state.check(seat, action)
    assert isinstance(error, IllegalAction) and error.reason == IllegalAction.ILLEGAL
    with pytest.raises(IllegalAction):
        state.apply(seat, action)
    return str(error)


def test_illegal_moves_say_which_rule() -> None:
    """Every refusal names the rule it applies (TH-1.2, TH-3.1, TH-3.3, TH-5.1)."""
    state = start()
    play(state, ["red 3", "T"])
    assert reason(state, 2, ID["red 5"]) == "you do not hold red 5 (TH-3.1)"
    assert reason(state, 2, 0) == "you do not hold red -1 (TH-3.1)"  # the lowest id
    assert reason(state, 2, 36) == "cards are picked only after a trick is complete (TH-5.1)"
    assert state.describe(2, 36).label == "pick red -1"
    play(state, ["green 4"])
    assert reason(state, 3, ID["blue 3"]) == (
        "you hold a red card and must follow the lead colour or play a Twhist card (TH-3.3)")
    assert reason(state, 3, 40) == "cards are picked only after a trick is complete (TH-5.1)"
    assert reason(state, 3, 68) == "cards are picked only after a trick is complete (TH-5.1)"
    assert reason(state, 3, 69) == "unknown action id 69; play a card of your hand (TH-3.1)"
    assert state.describe(3, 69).to_json() == {"id": 69, "label": "unknown action 69",
                                               "payload": {"kind": "unknown"}}
    play(state, ["red 2"])
    assert reason(state, 1, 68) == "you must pick at least one number card of the trick (TH-5.1)"
    assert reason(state, 1, 36 + ID["blue 0"]) == (
        "blue 0 is not among the trick's number cards left to pick (TH-5.1)")
    assert reason(state, 1, ID["red 5"]) == (
        "pick a number card of the trick or stop picking (TH-5.1)")
    assert reason(state, 1, 36) == (
        "red -1 is not among the trick's number cards left to pick (TH-5.1)")
    pick(state, ["green 4", "red 3"])
    play(state, ["blue 0"])
    assert reason(state, 1, 33) == (
        "you no longer hold your Thief card; each Twhist card is played once (TH-1.2)")
    assert state.describe(1, 68).to_json() == {"id": 68, "label": "stop picking",
                                               "payload": {"kind": "stop"}}
    error = state.check(2, ID["blue 2"])
    assert error is not None and (error.reason, str(error)) == (
        "not_to_act", "seat 2 is not to act; waiting for seat(s) 1")


def test_parts_zones_and_voids_in_two_colours() -> None:
    """The observation in slices (a player's entry and the discard pile change
    rarely, the open cards and the rules never), every card in its zone at each
    phase, and TH-3.3: a seat shows a void in each colour it fails to follow."""
    state = position(3, {0: ["red 0", "blue 0"], 1: ["green 1", "green 2"],
                         2: ["red 1", "blue 1"]})
    assert state.vocabulary_version() == 0
    play(state, ["red 0", "green 1"])
    ids = {"red 0": 1, "red 1": 2, "green 1": 18, "green 2": 19, "blue 0": 25, "blue 1": 26}
    zones = state.card_zones()
    assert (zones["trick"], zones["hand_1"], zones["open"]) == (
        [ids["red 0"], ids["green 1"]], [ids["green 2"]], [])
    play(state, ["red 1"])  # the red 1 wins; its player picks from three cards
    assert state.phase == 1 and state.card_zones()["trick"] == sorted(
        ids[t] for t in ("red 0", "red 1", "green 1"))
    pick(state, ["red 1"])
    assert state.card_zones()["trick"] == [] and state.card_zones()["discard"][-3:] == [
        ids["red 1"], ids["red 0"], ids["green 1"]]
    play(state, ["blue 1", "blue 0", "green 2"])  # seat 2 leads; seat 1 has no blue
    assert state.observation(0)["players"][1]["void"] == ["red", "blue"]
    parts = state.observation_parts(1)
    assert [(slot, version) for slot, version, _ in parts] == [
        ("table", None), *((("player", s, True), state._player_rev[s]) for s in range(3)),
        ("discard", len(state.discard)), ("fixed", 0)]
    merged: dict[str, Any] = {}
    for _, _, build in parts:  # the players' parts each hold one entry of "players"
        for key, value in build().items():
            merged[key] = [*merged[key], *value] if key in merged else value
    assert merged == state.observation(1)


@pytest.mark.parametrize(("n", "hand", "open_cards"), [(3, 10, 2), (4, 8, 0)])
def test_the_deal_is_seeded_and_its_event_says_what_everyone_sees(n: int, hand: int,
                                                                  open_cards: int) -> None:
    """TH-2.1: 10 or 8 cards each, the 31st and 32nd open with 3 players; TH-2.3: the
    seat left of the dealer leads. The same seed deals the same cards (the conventions
    in docs/rules/twisted.md); an observation's rules are a copy of the options."""
    state = engine.make("twhist", n, 41)
    again = engine.make("twhist", n, 41)
    assert state.seed == 41 and state.observation(0) == again.observation(0)
    (deal,) = state.event_log(None)
    dealer = deal["dealer"]
    seen = state.observation(1)
    assert deal == {"kind": "deal", "dealer": dealer, "leader": (dealer + 1) % n,
                    "open_cards": seen["open_cards"], "hand_size": hand}
    assert len(seen["open_cards"]) == open_cards and len(seen["hand"]) == hand
    assert state.event_log(1)[0]["hand"] == seen["hand"]
    seen["rules"]["colours"].append("purple")
    assert state.options["colours"] == ["red", "yellow", "green", "blue"]
