"""The hot messages assembled as bytes parse to exactly the messages the contract
describes (and serialize to the same bytes as the protobuf runtime would)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import timestamp_pb2
from twistarena import engine, wire
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import observations_pb2 as opb
from twistarena.v1 import play_pb2 as ppb
from twistarena.wire import actions

GAMES = list(engine.GAME_IDS)


def _reference_request(game_id: str, state: engine.State, seat: int, match_id: str,
                       decision_id: int, deadline_ns: int, left_ms: int) -> ppb.ServerMessage:
    deadline = timestamp_pb2.Timestamp()
    deadline.FromNanoseconds(deadline_ns)
    cache = wire.ActionCache()
    return ppb.ServerMessage(decision=ppb.DecisionRequest(
        match_id=match_id, decision_id=decision_id, seat=seat,
        observation=wire.observation(game_id, state.observation(seat)),
        legal_actions=[cache.get(a) for a in state.legal_actions(seat)],
        deadline=deadline, time_left_ms=left_ms))


@pytest.mark.parametrize("game_id", GAMES)
def test_decision_request_bytes(game_id: str) -> None:
    n = engine.game(game_id).max_players
    rng = random.Random(5)
    cache = wire.ActionCache()
    checked = 0
    for seed in range(2):
        state = engine.make(game_id, n, seed)
        step = 0
        while not state.is_terminal() and step < 400:
            for seat in state.to_act():
                match_id = "m" * rng.randrange(0, 3) + "0123456789abcdef"[: rng.randrange(17)]
                did = rng.choice([1, 8 * step + seat + 1, 2**40 + seat])
                deadline_ns = rng.choice([0, 1_700_000_000_123_456_789, 1_000_000_000])
                left = rng.choice([0, 1, 127, 128, 5000, 600_000])
                body = wire.decision_body(
                    wire.match_id_field(match_id), did, seat,
                    wire.observation_bytes(game_id, state.observation(seat)),
                    [cache.encoded(a) for a in state.legal_actions(seat)], deadline_ns)
                encoded = wire.decision_message(body, left)
                expected = _reference_request(game_id, state, seat, match_id, did,
                                              deadline_ns, left)
                assert ppb.ServerMessage.FromString(encoded) == expected
                assert encoded == expected.SerializeToString()
                assert wire.message_kind(encoded) == wire.DECISION_KIND
                narrow = wire.narrow_decision(encoded)
                assert narrow.decision_id == did
                assert [a.id for a in narrow.legal_actions] == \
                    list(state.legal_action_ids(seat))
                checked += 1
            seat = rng.choice(state.to_act())
            state.apply(seat, rng.choice(state.legal_action_ids(seat)))
            step += 1
    assert checked > 50


@pytest.mark.parametrize(("did", "action"), [(1, 0), (9, 7), (2**33 + 3, 127), (17, 128),
                                             (5, -1)])
def test_accepted_bytes(did: int, action: int) -> None:
    expected = ppb.ServerMessage(accepted=ppb.AnswerAccepted(decision_id=did, action_id=action))
    encoded = wire.accepted_message(did, action)
    assert ppb.ServerMessage.FromString(encoded) == expected
    assert encoded == expected.SerializeToString()
    assert wire.message_kind(encoded) != wire.DECISION_KIND
    answer = ppb.AgentMessage(answer=ppb.Answer(decision_id=did, action_id=action))
    assert wire.answer_message(did, action) == answer.SerializeToString()


def test_event_bytes() -> None:
    state = engine.make("tricky_twist", 4, 3)
    info = engine.game("tricky_twist")
    for seq, ev in enumerate(state.events):
        event = wire.event(seq, ev.view(None), info)
        raw = event.SerializeToString()
        assert ppb.ServerMessage.FromString(wire.event_server_message(raw)) == \
            ppb.ServerMessage(event=event)
        assert ppb.WatchMessage.FromString(wire.event_watch_message(raw)) == \
            ppb.WatchMessage(event=event)
    assert state.events


def test_passthrough_serializer() -> None:
    msg = ppb.ServerMessage(accepted=ppb.AnswerAccepted(decision_id=3, action_id=4))
    assert wire.passthrough_serializer(msg) == msg.SerializeToString()
    assert wire.passthrough_serializer(b"\x1a\x00") == b"\x1a\x00"


def _merged(parts: list[engine.ObservationPart]) -> dict[str, object]:
    """The parts' dicts merged as their encodings are: lists joined, the rest set once."""
    out: dict[str, object] = {}
    for _, _, build in parts:
        for key, value in build().items():
            if key in out:
                assert isinstance(value, list), f"{key} is set by two parts"
                out[key] = [*out[key], *value]  # type: ignore[misc]
            else:
                out[key] = value
    return out


#: every game and player count, and the options that change what a seat is shown:
#: TH-2.2 Twhist cards hidden in hand, TW-4.5 expert (face-down minus cards)
PART_CASES: list[tuple[str, int, dict[str, Any]]] = [
    *[(g.id, n, {}) for g in engine.games() for n in range(g.min_players, g.max_players + 1)],
    *[("twhist", n, {"twhist_visible": False}) for n in (3, 4, 5)],
    ("twisted", 3, {"expert": True, "rounds": 2}),
]


@pytest.mark.parametrize(("game_id", "players", "options"), PART_CASES)
def test_cached_parts_decode_as_today(game_id: str, players: int,
                                      options: dict[str, Any]) -> None:
    """One observation encoder and one vocabulary per match, shared by every seat (as
    a runner keeps them), give at every decision, for every seat (asked in a random
    order), requests that decode to exactly what the whole-message encoder gives.
    Now and then the match goes on in a clone: a clone carries the parts' versions."""
    rng = random.Random(players)
    match_id = wire.match_id_field("m-1")
    checked = 0
    for seed in range(3):
        state = engine.make(game_id, players, seed, options)
        observations = wire.ObservationEncoder(game_id)
        vocabulary = wire.ActionVocabulary(game_id)
        cache = wire.ActionCache()
        while True:
            for seat in rng.sample(range(players), players):
                parts = state.observation_parts(seat)
                assert _merged(parts) == state.observation(seat)
                new = wire.decision_body(
                    match_id, 9, seat, observations.encode_seat(state, seat),
                    vocabulary.encoded(state.vocabulary_version(),
                                       state.legal_action_ids(seat),
                                       state.describe, seat), 5)
                today = wire.decision_body(
                    match_id, 9, seat, wire.observation_bytes(game_id, state.observation(seat)),
                    [cache.encoded(a) for a in state.legal_actions(seat)], 5)
                assert ppb.DecisionRequest.FromString(new) == \
                    ppb.DecisionRequest.FromString(today), (seed, len(state.history), seat)
                checked += 1
            if state.is_terminal():
                break
            if rng.random() < 0.05:
                state = state.clone()
            seat = rng.choice(state.to_act())
            state.apply(seat, rng.choice(state.legal_action_ids(seat)))
    assert checked > 100 * players


@pytest.mark.parametrize("players", [3, 5])
def test_hidden_twhist_cards_stay_out_of_the_other_seats_observations(players: int) -> None:
    """TH-2.2 hidden in hand: a player's remaining Twhist cards (TH-1.2) are in its own
    observation and in nobody else's, though one encoder serves every seat and a
    seat's own entry was just encoded for it."""
    hidden = 0
    for seed in range(2):
        state = engine.make("twhist", players, seed, {"twhist_visible": False})
        observations = wire.ObservationEncoder("twhist")
        rng = random.Random(seed)
        while not state.is_terminal():
            actor = state.to_act()[0]
            for seat in [actor, *(s for s in range(players) if s != actor)]:
                message = opb.Observation.FromString(
                    observations.encode_seat(state, seat)).twhist
                for entry in message.players:
                    if entry.seat == seat:
                        assert list(entry.twhist_names) == list(message.twhist_hand)
                    else:
                        assert list(entry.twhist_names) == []
                        hidden += entry.twhist_count
            state.apply(actor, rng.choice(state.legal_action_ids(actor)))
    assert hidden > 0


@pytest.mark.parametrize(("game_id", "players"), [("tricky_twist", 3), ("twisted", 4),
                                                 ("twhist", 4)])
def test_joined_written_by_the_compiled_struct_writer_decodes_as_the_librarys(
        game_id: str, players: int) -> None:
    assert wire.compiled()
    options = engine.make(game_id, players, 5).options
    clock = mpb.TimeControl(decision_ms=1500, forfeit_after=3)
    library = ppb.Joined(match_id="m-2", game_id=game_id, num_players=players,
                         game_options=wire.struct(options), time_control=clock)
    written = wire.joined_without_seat("m-2", game_id, players, options, clock)
    assert ppb.Joined.FromString(written) == library
    # The compiled writer keeps the dict's order, the library a map's own: the
    # same Struct in other bytes, so it was not the library's.
    assert written != library.SerializeToString()


@pytest.mark.parametrize("seat", [0, 1, 4])
def test_joined_bytes(seat: int) -> None:
    options = engine.make("tricky_twist", 4, 1).options
    fields = {"match_id": "m-1", "game_id": "tricky_twist", "num_players": 4,
              "game_options": wire.struct(options)}
    without_seat = ppb.Joined(**fields).SerializeToString()  # type: ignore[arg-type]
    expected = ppb.ServerMessage(joined=ppb.Joined(seat=seat, **fields))  # type: ignore[arg-type]
    assert ppb.ServerMessage.FromString(wire.joined_message(without_seat, seat)) == expected


def test_matches_with_the_same_game_players_and_options_share_a_vocabulary() -> None:
    twhist = engine.make("twhist", 4, 1).options
    shared = wire.match_vocabulary("twhist", 4, twhist)
    assert wire.match_vocabulary("twhist", 4, dict(reversed(list(twhist.items())))) is shared
    assert wire.match_vocabulary("twhist", 3, twhist) is not shared
    hidden = {**twhist, "twhist_visible": not twhist["twhist_visible"]}
    assert wire.match_vocabulary("twhist", 4, hidden) is not shared
    # Bounded: the least recently used goes first.
    for n in range(wire.VOCABULARIES_KEPT):
        wire.match_vocabulary("twisted", 4, {"n": n})
    assert len(actions._VOCABULARIES) == wire.VOCABULARIES_KEPT
    assert wire.match_vocabulary("twhist", 4, twhist) is not shared
