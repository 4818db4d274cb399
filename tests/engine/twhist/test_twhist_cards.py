"""Every combination of the four Twhist cards in one trick (TH-4, TH-5).

Each row: the cards played from seat 0 (the leader) clockwise, the picker's
picks, then who picks, who leads next, who sits out and which FLIP value each
seat flips. Expected values are worked out by hand from docs/rules/twhist.md, not by the
engine. Number cards used: red leads; "blue 4" is off-colour and cannot win.
"""

from __future__ import annotations

import pytest

from .helpers import events, flips, pick, play, position

# (id, plays from seat 0, picks, picker, next leader, sitting out, {seat: flipped value})
ROWS_5P = [
    # TH-4.1: no Twhist card; natural winner red 5 picks 5+4=9, clamped to 8 (TH-5.3).
    ("none", ["red 3", "red 5", "red 1", "blue 4", "red 0"], ["red 5", "blue 4"], 1, 1, [],
     {1: 8, 0: 4, 2: 4, 3: 4, 4: 4}),
    # TH-4.3: Round-winner picks and leads over the natural winner (seat 2).
    ("RW", ["red 3", "RW", "red 5", "red 1", "blue 4"], ["red 5"], 1, 1, [],
     {1: 5, 0: 8, 2: 8, 3: 8, 4: 8}),
    # TH-4.4: Thief picks but the natural winner leads.
    ("T", ["red 3", "T", "red 5", "red 1", "blue 4"], ["red 5", "red 3"], 1, 2, [],
     {1: 8, 0: 5, 2: 5, 3: 5, 4: 5}),
    # TH-4.5: Pole-position leads, the natural winner picks.
    ("PP", ["red 3", "PP", "red 5", "red 1", "blue 4"], ["red 5"], 2, 1, [],
     {2: 5, 0: 8, 1: 8, 3: 8, 4: 8}),
    # TH-4.7: Pass sits out and flips nothing.
    ("PASS", ["red 3", "PASS", "red 5", "red 1", "blue 4"], ["red 5"], 2, 2, [1],
     {2: 5, 0: 8, 3: 8, 4: 8}),
    # TH-4.4: Thief over Round-winner; the Round-winner still leads (TH-4.3).
    ("RW+T", ["red 3", "RW", "T", "red 5", "blue 4"], ["red 5"], 2, 1, [],
     {2: 5, 0: 7, 1: 7, 3: 7, 4: 7}),
    # TH-4.3 + TH-4.5: Round-winner picks, Pole-position leads.
    ("RW+PP", ["red 3", "RW", "PP", "red 5", "blue 4"], ["blue 4"], 1, 2, [],
     {1: 4, 0: 8, 2: 8, 3: 8, 4: 8}),
    ("RW+PASS", ["red 3", "RW", "PASS", "red 5", "blue 4"], ["red 3", "blue 4"], 1, 1, [2],
     {1: 7, 0: 5, 3: 5, 4: 5}),
    ("T+PP", ["red 3", "T", "PP", "red 5", "blue 4"], ["red 5"], 1, 2, [],
     {1: 5, 0: 7, 2: 7, 3: 7, 4: 7}),
    # TH-4.4: Thief may not lead: the natural winner (red 5, seat 3) leads.
    ("T+PASS", ["red 3", "T", "PASS", "red 5", "blue 4"], ["red 5"], 1, 3, [2],
     {1: 5, 0: 7, 3: 7, 4: 7}),
    ("PP+PASS", ["red 3", "PP", "PASS", "red 5", "blue 4"], ["red 5"], 3, 1, [2],
     {3: 5, 0: 7, 1: 7, 4: 7}),
    # TH-4.6: all three: Round-winner powerless, Thief picks, Pole-position leads.
    ("RW+T+PP", ["red 3", "RW", "T", "PP", "red 5"], ["red 5"], 2, 3, [],
     {2: 5, 0: 3, 1: 3, 3: 3, 4: 3}),
    # TH-5.2: the Thief takes both number cards; nothing is left, nobody else flips.
    ("RW+T+PASS", ["red 3", "RW", "T", "PASS", "red 5"], ["red 5", "red 3"], 2, 1, [3],
     {2: 8}),
    ("RW+PP+PASS", ["red 3", "RW", "PP", "PASS", "red 5"], ["red 3"], 1, 2, [3],
     {1: 3, 0: 5, 2: 5, 4: 5}),
    ("T+PP+PASS", ["red 3", "T", "PP", "PASS", "red 5"], ["red 5"], 1, 2, [3],
     {1: 5, 0: 3, 2: 3, 4: 3}),
    # TH-4.6 + TH-5.1: one number card only: the Thief must take it, nothing is left.
    ("RW+T+PP+PASS", ["red 3", "RW", "T", "PP", "PASS"], [], 2, 3, [4], {2: 3}),
    # TH-4.2 duplicates: only the first identical card has power; the others flip.
    ("RW,RW", ["red 3", "RW", "RW", "red 5", "blue 4"], ["red 5"], 1, 1, [],
     {1: 5, 0: 7, 2: 7, 3: 7, 4: 7}),
    ("T,T", ["red 3", "T", "red 5", "T", "blue 4"], ["red 5"], 1, 2, [],
     {1: 5, 0: 7, 2: 7, 3: 7, 4: 7}),
    ("PP,PP", ["red 3", "PP", "red 5", "PP", "red 1"], ["red 5"], 2, 1, [],
     {2: 5, 0: 4, 1: 4, 3: 4, 4: 4}),
    ("PASS,PASS", ["red 3", "PASS", "red 5", "PASS", "red 1"], ["red 5"], 2, 2, [1],
     {2: 5, 0: 4, 3: 4, 4: 4}),
    ("T,RW,T", ["red 3", "T", "RW", "T", "red 5"], ["red 5"], 1, 2, [],
     {1: 5, 0: 3, 2: 3, 3: 3, 4: 3}),
    ("PP,RW,T,PP", ["PP", "RW", "T", "PP", "red 5"], [], 2, 0, [], {2: 5}),
    # TH-3.2: the leader's Twhist card leaves the lead to the next number card.
    ("RW lead", ["RW", "yellow 2", "yellow 4", "red 5", "yellow -1"], ["yellow 4"], 0, 0, [],
     {0: 4, 1: 6, 2: 6, 3: 6, 4: 6}),
]


def _hands(plays: list[str]) -> dict[int, list[str]]:
    return {s: [p] for s, p in enumerate(plays) if p not in {"RW", "T", "PP", "PASS"}}


@pytest.mark.parametrize(
    ("plays", "picks", "picker", "leader", "sitting", "flipped"),
    [pytest.param(*row[1:], id=row[0]) for row in ROWS_5P],
)
def test_twhist_card_combinations(plays: list[str], picks: list[str], picker: int, leader: int,
                                  sitting: list[int], flipped: dict[int, int]) -> None:
    """TH-4.2 .. TH-4.8, TH-5.1 .. TH-5.3: picker, next leader and flips of one trick."""
    state = position(5, _hands(plays), leader=0)
    play(state, plays)
    (resolve,) = events(state, "resolve")
    assert (resolve["picker"], resolve["next_leader"], resolve["sitting_out"]) == (
        picker, leader, sitting)
    pick(state, picks)
    assert flips(state) == flipped
    picked = [f"{e['card']['colour']} {e['card']['value']}" for e in events(state, "pick")]
    assert picked == (picks or [p for p in plays if " " in p])  # TH-5.1: forced single pick
    assert state.to_act() == (leader,) and state.leader == leader
    assert all(e["star_side"] for e in events(state, "flip"))


def test_every_pass_sits_out_option() -> None:
    """TH-4.2 with option every_pass_sits_out: a second Pass also sits out (TH-4.7)."""
    plays = ["red 3", "PASS", "red 5", "PASS", "red 1"]
    state = position(5, _hands(plays), options={"every_pass_sits_out": True})
    play(state, plays)
    pick(state, ["red 5"])
    assert flips(state) == {2: 5, 0: 4, 4: 4}


# Tricks without any number card (TH-4.7, TH-4.8 [decided]): nobody ever flips.
NO_NUMBER = [
    # (id, players, leader, plays from the leader, picker, next leader)
    ("all pass 3p", 3, 1, ["PASS", "PASS", "PASS"], -1, 1),
    ("all pass 4p", 4, 2, ["PASS", "PASS", "PASS", "PASS"], -1, 2),
    ("all four kinds", 4, 0, ["RW", "T", "PP", "PASS"], 1, 2),
    ("RW only", 3, 0, ["PASS", "RW", "PASS"], 1, 1),
    ("T only: leader again", 3, 1, ["PASS", "T", "PASS"], 2, 1),
    ("T leads: leader again", 3, 2, ["T", "PASS", "PASS"], 2, 2),
    ("PP and T", 3, 0, ["T", "PASS", "PP"], 0, 2),
    ("RW, T", 3, 0, ["RW", "T", "RW"], 1, 0),
]


@pytest.mark.parametrize(
    ("n", "leader", "plays", "picker", "next_leader"),
    [pytest.param(*row[1:], id=row[0]) for row in NO_NUMBER],
)
def test_trick_without_number_cards(n: int, leader: int, plays: list[str], picker: int,
                                    next_leader: int) -> None:
    """TH-4.7 / TH-4.8 [decided]: no number card: nobody flips; with no Round-winner or
    Pole-position the leader leads again; TH-5.2: the picker has nothing to take."""
    state = position(n, {s: [f"red {s}"] for s in range(n)}, leader=leader)
    play(state, plays)
    (resolve,) = events(state, "resolve")
    assert (resolve["picker"], resolve["next_leader"]) == (picker, next_leader)
    assert flips(state) == {}
    assert state.phase == 0 and state.to_act() == (next_leader,)
    assert state.scores() == [0] * n


def test_rulebook_example_round_winner_chooses() -> None:
    """The rulebook's scoring example (4 players, "Ronde-winnaar kiest"; its figures are lost
    in the OCR apart from "FLIP 6"): the Round-winner player chooses 1 or 2 number cards and
    flips their sum, 6 (TH-4.3, TH-5.1); all opponents flip the FLIP card of the sum of the
    cards left (TH-5.2), here 3 -- whether they played a number card or not."""
    plays = ["yellow 5", "RW", "yellow 1", "yellow 3"]
    state = position(4, _hands(plays))
    play(state, plays)
    pick(state, ["yellow 5", "yellow 1"])
    assert flips(state) == {1: 6, 0: 3, 2: 3, 3: 3}
    assert state.scores() == [1, 2, 1, 1]  # TH-1.4: 6 shows 2 stars, 3 shows 1
    assert state.to_act() == (1,)  # TH-4.3: and leads the next trick
