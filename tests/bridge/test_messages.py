"""The bridge's two message forms and how it reads answers (docs/bots.md)."""

from __future__ import annotations

import json
from typing import Any

from twistarena import engine
from twistarena.bridge import JSON_FORM, TEXT_FORM, decision_message, parse_answer
from twistarena.bridge.messages import flatten, parse_id


def _decision(form: str, game: str, players: int) -> tuple[str, engine.State, int]:
    state = engine.make(game, players, seed=5)
    seat = state.to_act()[0]
    text = decision_message(form, decision_id=9, game=game, seat=seat, time_left_ms=1234,
                            observation=state.observation(seat),
                            legal_actions=state.legal_actions(seat),
                            game_options=state.options)
    return text, state, seat


def test_json_form_is_one_line_with_everything_a_bot_needs() -> None:
    text, state, seat = _decision(JSON_FORM, "twhist", 4)
    assert "\n" not in text
    message = json.loads(text)
    assert message["type"] == "decision" and message["game"] == "twhist"
    assert message["seat"] == seat and message["decision_id"] == 9
    assert message["time_left_ms"] == 1234
    assert message["observation"] == state.observation(seat)
    assert message["game_options"] == state.options
    assert message["legal_actions"] == [a.to_json() for a in state.legal_actions(seat)]


def test_text_form_lists_every_observation_leaf_and_every_action() -> None:
    text, state, seat = _decision(TEXT_FORM, "tricky_twist", 3)
    lines = text.splitlines()
    assert lines[0] == f"decision id=9 game=tricky_twist seat={seat} time_left_ms=1234"
    assert lines[-1] == "end"
    actions = [line.split(" ") for line in lines if line.startswith("action ")]
    legal = state.legal_actions(seat)
    assert [int(words[1]) for words in actions] == [a.id for a in legal]
    # The payload as key=value words before "|", the label after it.
    first = actions[0]
    bar = first.index("|")
    fields = dict(word.split("=", 1) for word in first[2:bar])
    assert fields["kind"] == legal[0].payload["kind"] == "reserve"
    assert int(fields["card.value"]) == legal[0].payload["card"]["value"]
    assert " ".join(first[bar + 1:]) == legal[0].label
    # Every observation line is "obs PATH VALUES", one per leaf; lists stay on one line.
    obs = {line.split(" ")[1]: line.split(" ")[2:] for line in lines if line.startswith("obs ")}
    observation = state.observation(seat)
    assert [int(v) for v in obs["scores"]] == observation["scores"]
    assert int(obs["hand.0.value"][0]) == observation["hand"][0]["value"]
    assert obs["phase"] == [observation["phase"]]
    # The match's game options, one "option PATH VALUES" line per leaf.
    option = {line.split(" ")[1]: line.split(" ")[2:] for line in lines
              if line.startswith("option ")}
    assert [int(v) for v in option["place_stars"]] == state.options["place_stars"]
    assert option["star_tables.longest_run"] == [str(v) for v in
                                                 state.options["star_tables"]["longest_run"]]


def test_flatten_writes_nested_lists_by_index_and_spaces_as_underscores() -> None:
    data = {"a": [[1, 2], [3]], "b": {"c": "two words"}, "d": [], "e": True}
    assert list(flatten(data)) == [("a.0", "1 2"), ("a.1", "3"), ("b.c", "two_words"),
                                   ("d", ""), ("e", "true")]


def test_answers_are_legal_ids_as_numbers_or_json() -> None:
    legal = [3, 7, 200]
    assert parse_answer("7\n", legal) == 7
    assert parse_answer('{"id": 200}', legal) == 200
    assert parse_answer(" 3 ", legal) == 3
    for garbage in ("8", "", "seven", "{}", "[7]", '{"id": "x"}', "7 7"):
        assert parse_answer(garbage, legal) is None, garbage


def test_kind_comes_first_in_both_forms_whatever_order_the_wire_gives() -> None:
    # A payload from the wire's Struct (a map) has its keys in no promised order.
    state = engine.make("twisted", 2, seed=1)
    for payload in ({"card": 14, "kind": "extend"}, {"kind": "extend", "card": 14}):
        action = engine.Action(14, "extend the row with 14", payload)
        common: dict[str, Any] = {"decision_id": 3, "game": "twisted", "seat": 0,
                                  "time_left_ms": 100, "observation": state.observation(0),
                                  "legal_actions": [action]}
        text = decision_message(TEXT_FORM, **common)
        assert "action 14 kind=extend card=14 | extend the row with 14" in text.splitlines()
        sent = json.loads(decision_message(JSON_FORM, **common))["legal_actions"][0]
        assert list(sent["payload"]) == ["kind", "card"]


def test_an_id_is_any_number_the_contract_carries_legal_or_not() -> None:
    assert parse_id("8") == 8 and parse_id('{"id": -3}') == -3
    for garbage in ("seven", "{}", '{"id": true}', '{"id": 7.5}', str(1 << 31), "7 7"):
        assert parse_id(garbage) is None, garbage
