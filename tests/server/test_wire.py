"""The hot messages assembled as bytes parse to exactly the messages the contract
describes (and serialize to the same bytes as the protobuf runtime would)."""

from __future__ import annotations

import functools
import random

import pytest
from google.protobuf import timestamp_pb2
from twistarena import engine, wire
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import play_pb2 as ppb

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
    for part in parts:
        for key, value in part.build().items():
            if key in out:
                assert isinstance(value, list), f"{key} is set by two parts"
                out[key] = [*out[key], *value]  # type: ignore[misc]
            else:
                out[key] = value
    return out


@pytest.mark.parametrize(("game_id", "players"), [
    (g.id, n) for g in engine.games() for n in sorted({g.min_players, g.max_players})])
def test_cached_parts_decode_as_today(game_id: str, players: int) -> None:
    """One encoder and vocabulary kept across a whole match (as a runner keeps
    them) give requests that decode to exactly what the whole-message encoder gives."""
    rng = random.Random(players)
    match_id = wire.match_id_field("m-1")
    checked = 0
    for seed in range(3):
        state = engine.make(game_id, players, seed)
        observations = wire.ObservationEncoder(game_id)
        vocabulary = wire.ActionVocabulary(game_id)
        cache = wire.ActionCache()
        while not state.is_terminal():
            for seat in state.to_act():
                parts = state.observation_parts(seat)
                assert _merged(parts) == state.observation(seat)
                new = wire.decision_body(
                    match_id, 9, seat, observations.encode(parts),
                    vocabulary.encoded(state.vocabulary_version(),
                                       state.legal_action_ids(seat),
                                       functools.partial(state.describe, seat)), 5)
                today = wire.decision_body(
                    match_id, 9, seat, wire.observation_bytes(game_id, state.observation(seat)),
                    [cache.encoded(a) for a in state.legal_actions(seat)], 5)
                assert ppb.DecisionRequest.FromString(new) == \
                    ppb.DecisionRequest.FromString(today)
                checked += 1
            seat = rng.choice(state.to_act())
            state.apply(seat, rng.choice(state.legal_action_ids(seat)))
    assert checked > 100


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
