"""The shared engine contract (engine/core.py) on a toy game that keeps every default.

The three real games override most hooks; this toy does not, so the defaults (the
illegal-move text, one observation part, ranking by score alone, no vocabulary
version) and the bookkeeping every game relies on (refusals before any change,
history, event views, places with shared ranks, clone, determinize) are checked
on values worked out by hand.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest
from twistarena import engine
from twistarena.engine.core import Action, Event, IllegalAction, State


class Toy(State):
    """Seats take turns naming 1, 2 or 3 (ids 0..2; seat 1 only 1 or 2) until ``turns``
    moves are made; a seat scores what it named. Seat 0 also 'holds' a secret number."""

    game_id = "toy"

    def __init__(self, num_players: int, seed: int, options: dict[str, Any]) -> None:
        super().__init__(num_players, seed, options)
        self.turns = options["turns"]
        self.points = [0] * num_players
        self.secret = self.rng.randrange(100)
        self.log("start", private={0: {"secret": self.secret}}, players=num_players)

    def _to_act(self) -> tuple[int, ...]:
        if len(self.history) >= self.turns:
            return ()
        return (len(self.history) % self.num_players,)

    def _legal_ids(self, seat: int) -> Sequence[int]:
        return (0, 1) if seat == 1 else (0, 1, 2)

    def _apply(self, seat: int, action_id: int) -> None:
        self.points[seat] += action_id + 1
        self.log("named", seat=seat, number=action_id + 1)

    def _describe(self, seat: int, action_id: int) -> Action:
        return Action(action_id, f"seat {seat} names {action_id + 1}", {"number": action_id + 1})

    def _observation(self, seat: int) -> dict[str, Any]:
        return {"seat": seat, "points": list(self.points)}

    def _public_view(self) -> dict[str, Any]:
        return {"points": list(self.points)}

    def _scores(self) -> list[int]:
        return list(self.points)

    def _copy_mutable_into(self, new: State) -> None:
        assert isinstance(new, Toy)
        new.points = list(self.points)

    def _redeal_hidden(self, seat: int, rng: random.Random) -> None:
        self.secret = rng.randrange(100)

    def _card_zones(self) -> dict[str, list[int]]:
        return {"secret": [self.secret]}


def toy(players: int = 3, turns: int = 3, seed: int = 5) -> Toy:
    return Toy(players, seed, {"turns": turns})


def test_refusals_name_the_reason_and_change_nothing() -> None:
    state = toy()
    assert state.to_act() == (0,) and not state.is_terminal()
    assert list(state.legal_action_ids(1)) == [] and list(state.legal_action_ids(0)) == [0, 1, 2]
    error = state.check(1, 0)
    assert isinstance(error, IllegalAction)
    assert (error.reason, error.message, str(error)) == (
        "not_to_act", "seat 1 is not to act; waiting for seat(s) 0",
        "seat 1 is not to act; waiting for seat(s) 0")
    error = state.check(0, 7)
    assert error is not None and (error.reason, error.message) == (
        "illegal_action", "action 7 is not legal now; legal ids: [0, 1, 2]")
    with pytest.raises(IllegalAction):
        state.apply(0, 7)
    assert state.history == [] and state.points == [0, 0, 0] and len(state.events) == 1
    assert state.check(0, 2) is None
    state.apply(0, 2)
    error = state.check(1, 2)
    assert error is not None and error.message == (
        "action 2 is not legal now; legal ids: [0, 1]")
    for seat, action in ((1, 0), (2, 1)):
        state.apply(seat, action)
    assert state.history == [(0, 2), (1, 0), (2, 1)]
    assert state.is_terminal() and state.to_act() == ()
    error = state.check(0, 0)
    assert error is not None and (error.reason, error.message) == ("game_over",
                                                                   "the match is over")


def test_labels_views_and_parts() -> None:
    state = toy()
    assert [a.to_json() for a in state.legal_actions(0)] == [
        {"id": i, "label": f"seat 0 names {i + 1}", "payload": {"number": i + 1}}
        for i in range(3)]
    assert state.legal_actions(1) == []
    assert state.describe(2, 1) == Action(1, "seat 2 names 2", {"number": 2})
    assert state.vocabulary_version() is None
    state.apply(0, 2)
    assert state.observation(1) == {"seat": 1, "points": [3, 0, 0]}
    assert state.public_view() == {"points": [3, 0, 0]}
    ((slot, version, build),) = state.observation_parts(1)
    assert (slot, version, build()) == ("observation", None, {"seat": 1, "points": [3, 0, 0]})
    assert state.observation_slots(1) == [("observation", None)]
    assert state.observation_part(1, "observation") == {"seat": 1, "points": [3, 0, 0]}
    assert state.card_zones() == {"secret": [state.secret]}
    payload = state.describe(0, 0).to_json()["payload"]
    payload["number"] = 99
    assert state.describe(0, 0).payload == {"number": 1}


def test_events_show_each_seat_its_private_part() -> None:
    state = toy()
    state.apply(0, 1)
    secret = state.secret
    assert state.event_log(None) == [{"kind": "start", "players": 3},
                                     {"kind": "named", "seat": 0, "number": 2}]
    assert state.event_log(0)[0] == {"kind": "start", "players": 3, "secret": secret}
    assert state.event_log(2)[0] == {"kind": "start", "players": 3}
    event = Event("x", {"a": 1})
    assert (event.view(None), event.view(0)) == ({"kind": "x", "a": 1}, {"kind": "x", "a": 1})


@pytest.mark.parametrize(("points", "places", "winners"), [
    ([5, 3, 5], [1, 3, 1], [0, 2]),  # equal scores share a place; the next is third
    ([1, 2, 3], [3, 2, 1], [2]),
    ([4, 4, 4], [1, 1, 1], [0, 1, 2]),
])
def test_places_are_competition_ranking(points: list[int], places: list[int],
                                        winners: list[int]) -> None:
    """TT-2.4 / TW-4.4: tied players share the place (the default rank key: the score)."""
    state = toy()
    state.points = points
    assert state.places() == places and state.winners() == winners


def test_clone_is_independent_and_replays_the_same_randomness() -> None:
    state = toy(turns=4)
    state.apply(0, 0)
    twin = state.clone()
    assert twin.history == [(0, 0)] and twin.event_log(0) == state.event_log(0)
    assert (twin.seed, twin.options, twin.num_players) == (5, state.options, 3)
    twin.apply(1, 1)
    assert state.history == [(0, 0)] and len(state.events) == 2 and state.points == [1, 0, 0]
    assert twin.points == [1, 2, 0]
    assert [state.rng.random() for _ in range(3)] == [twin.rng.random() for _ in range(3)]


def test_determinize_redeals_and_forgets_the_deal() -> None:
    state = toy(turns=4)
    state.apply(0, 0)
    copy = state.determinize(1, random.Random(3))
    expected = random.Random(3)
    assert copy.secret == expected.randrange(100)  # _redeal_hidden draws from rng first
    follow = random.Random(expected.getrandbits(64))  # then forget_the_deal
    assert (copy.seed, copy.history, copy.events) == (-1, [], [])
    assert copy.rng.random() == follow.random()
    assert state.seed == 5 and state.history == [(0, 0)] and len(state.events) == 2


def test_game_info_lists_a_copy_of_the_defaults() -> None:
    info = engine.game("twhist")
    listed = info.to_json()
    assert {k: listed[k] for k in ("id", "min_players", "max_players")} == {
        "id": "twhist", "min_players": 3, "max_players": 5}  # TH-2.1
    assert listed["name"] == info.name and listed["defaults"] == dict(info.defaults)
    listed["defaults"]["colours"].append("purple")
    assert info.defaults["colours"] == ["red", "yellow", "green", "blue"]  # TH-1.3
