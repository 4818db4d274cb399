"""The compiled message encoder (twistarena.wire._encode) against the protobuf library.

The server serializes every observation part and public view through
``wire.message_encoder``. Here its bytes are held to
``cls(**data).SerializeToString()`` for every observation, observation part
and public view of random matches of every game and player count; data it
does not write (an unknown key, None, a number beyond int32, a value of
another type) is handed to the library, which gives what it always gave.
Events' Struct data, written by the same extension, parse as the library's.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from twistarena import engine, wire
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import observations_pb2 as opb
from twistarena.wire import (
    OBSERVATION_CLASSES,
    PUBLIC_VIEW_CLASSES,
    _encode,
    frames,
    game_message,
    schemas,
)


def test_this_build_has_the_compiled_encoder_for_every_game_message() -> None:
    """`make` builds it (a C compiler is part of the set-up); every per-game message
    is made only of field kinds it writes."""
    assert wire.compiled()
    for cls in (*OBSERVATION_CLASSES.values(), *PUBLIC_VIEW_CLASSES.values()):
        assert schemas.schema(cls.DESCRIPTOR) is not None, cls.__name__


def _library(cls: Any, data: Any) -> bytes:
    return game_message(cls, data).SerializeToString()


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_every_message_of_random_matches_is_byte_for_byte_the_librarys(game_id: str) -> None:
    info = engine.game(game_id)
    observation = wire.message_encoder(OBSERVATION_CLASSES[game_id])
    view = wire.message_encoder(PUBLIC_VIEW_CLASSES[game_id])
    compared = 0
    for players in range(info.min_players, info.max_players + 1):
        for seed in range(2):
            state = engine.make(game_id, players, seed)
            rng = random.Random(seed)
            while True:
                for seat in range(players):
                    data = state.observation(seat)
                    assert observation(data) == _library(OBSERVATION_CLASSES[game_id], data)
                    for _, _, build in state.observation_parts(seat):
                        part = build()
                        assert observation(part) == _library(OBSERVATION_CLASSES[game_id], part)
                        compared += 1
                data = state.public_view()
                assert view(data) == _library(PUBLIC_VIEW_CLASSES[game_id], data)
                assert wire.public_view_bytes(game_id, data) == wire.public_view(
                    game_id, data).SerializeToString()
                compared += players + 1
                if state.is_terminal():
                    break
                seat = rng.choice(state.to_act())
                state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    assert compared > 1000


def _outcome(encode: Any, data: Any) -> tuple[str, Any]:
    """What ``encode(data)`` gives: its bytes, or the type of its error."""
    try:
        return "bytes", encode(data)
    except Exception as error:
        return "error", type(error)


def test_data_it_does_not_write_goes_to_the_library() -> None:
    """A bool where an int32 goes, a number beyond int32, None, an unknown key, a
    string for a number: the schema refuses it, and the encoder gives what the
    library gives (bytes, or the library's own error)."""
    encode = wire.message_encoder(opb.TwistedSeat)
    schema = schemas.schema(opb.TwistedSeat.DESCRIPTOR)
    good = {"seat": 1, "hand_count": -3, "plus_pile": [12, -7, 300], "minus_pile": [],
            "minus_face_down": 0, "round_score": 2**31 - 1, "total": -2**31}
    assert schema.encode(good) == encode(good) == _library(opb.TwistedSeat, good)
    for bad in ({**good, "seat": True}, {**good, "total": 2**31}, {**good, "nonsense": 1},
                {**good, "seat": "1"}, {**good, "plus_pile": [1, None]},
                {**good, "seat": None}):
        with pytest.raises((TypeError, ValueError)):
            schema.encode(bad)
        assert _outcome(encode, bad) == _outcome(
            lambda data: _library(opb.TwistedSeat, data), bad)


def test_a_nested_message_longer_than_127_bytes_gets_a_longer_length() -> None:
    """The length of a nested message is written before it once known; past 127
    bytes it takes more than the one byte kept for it."""
    cls = opb.TwistedObservation
    seats = [{"seat": s, "plus_pile": list(range(12, 12 + size)), "total": -s}
             for s, size in enumerate((0, 1, 60, 127, 2000))]
    data = {"game": "twisted", "seat": 2, "hand": [13, 14], "seats": seats}
    assert wire.message_encoder(cls)(data) == _library(cls, data)
    assert schemas.schema(cls.DESCRIPTOR).encode(data) == _library(cls, data)


def test_a_schema_refuses_fields_it_cannot_write() -> None:
    child = _encode.Schema((("x", 1, _encode.INT32, None),))
    for fields, error in (
            ((("a", 1, 99, None),), ValueError),  # an unknown kind
            ((("a", 0, _encode.INT32, None),), ValueError),  # field number 0
            ((("a", 2, _encode.INT32, None), ("b", 1, _encode.INT32, None)), ValueError),
            ((("a", 1, _encode.MESSAGE, None),), TypeError),  # a message with no schema
            ((("a", 1, _encode.INT32, child),), TypeError)):  # a scalar with one
        with pytest.raises(error):
            _encode.Schema(fields)
    with pytest.raises(TypeError, match="dict"):
        child.encode([1])  # type: ignore[arg-type]


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_every_event_in_every_view_parses_as_the_librarys(game_id: str) -> None:
    """Events carry the engine's view as a Struct, written by the compiled encoder:
    parsed, each is the library's message (a map's entries may come in another
    order; the wire format leaves that open)."""
    info = engine.game(game_id)
    compared = 0
    for players in range(info.min_players, info.max_players + 1):
        state = engine.make(game_id, players, 5)
        rng = random.Random(players)
        while not state.is_terminal():
            seat = rng.choice(state.to_act())
            state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
        for seq, ev in enumerate(state.events):
            for viewer in (None, *range(players)):
                view = ev.view(viewer)
                got = mpb.Event.FromString(wire.event_bytes(seq, view, info))
                assert got == wire.event(seq, view, info)
                compared += 1
    assert compared > 300


class _Quiet:
    """A narrator with nothing to say (the text is left out)."""

    def narrate(self, view: Any) -> str | None:
        return None


def test_struct_values_of_every_kind_and_what_goes_to_the_library() -> None:
    view = {"kind": "", "none": None, "yes": True, "no": False, "zero": 0, "minus": -3,
            "half": 0.5, "big": 2**53, "text": "Ω moon", "empty": "",
            "nested": {"list": [1, "a", None, [True, {"deep": []}]], "map": {}}, "tuple": (1, 2)}
    got = mpb.Event.FromString(wire.event_bytes(0, view, _Quiet()))
    assert got == wire.event(0, view, _Quiet())
    assert got.seq == 0 and got.kind == "" and got.text == ""
    assert _encode.struct_bytes({})  == b""
    for odd in ({"huge": 2**80}, {"exact": 2**53 + 1}, {1: "int key"}, {"set": {1}}):
        with pytest.raises((TypeError, ValueError, OverflowError)):
            _encode.struct_bytes(odd)
        assert _outcome(lambda v: wire.event_bytes(3, v, _Quiet()), odd) == _outcome(
            lambda v: wire.event(3, v, _Quiet()).SerializeToString(), odd)
    deep: Any = []
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="deep"):
        _encode.struct_bytes({"deep": deep})


def test_a_decision_requests_frame_is_byte_for_byte_the_joined_fields() -> None:
    """The compiled frame (``DecisionFrames``) writes what ``_decision_body`` and
    ``decision_message(..., batched_fields(...))`` join, for zero and large ids,
    long observations (a length over one byte), no or many ride-along events; and
    the result parses as the library's DecisionRequest."""
    from twistarena.v1 import play_pb2 as ppb

    rng = random.Random(29)
    for case in range(300):
        match_id = wire.match_id_field(f"m{case:x}" * rng.randint(0, 3))
        did, seat = rng.choice([0, 1, 127, 128, 2**40]), rng.randint(0, 4)
        observation = bytes(rng.randrange(256) for _ in range(rng.choice([0, 5, 127, 300])))
        legal = [wire.length_delimited(b"\x2a", bytes([rng.randrange(256)]) * rng.randint(0, 9))
                 for _ in range(rng.randint(0, 6))]
        deadline = rng.choice([0, 999_999_999, 1_000_000_000, 1_795_777_330_550_123_456])
        body = wire.decision_body(match_id, did, seat, observation, legal, deadline)
        assert body == frames._decision_body(match_id, did, seat, observation, legal, deadline)
        accepted = rng.choice([b"", wire.accepted(did, rng.randint(0, 300))])
        events = [bytes([rng.randrange(256)]) * rng.choice([0, 3, 200])
                  for _ in range(rng.randint(0, 4))]
        left = rng.choice([0, 1, 4999, 2**31])
        joined = wire.decision_message(body, left, wire.batched_fields(accepted, events))
        assert wire.request_message(body, left, accepted, events) == joined
    request = ppb.ServerMessage.FromString(wire.request_message(
        wire.decision_body(wire.match_id_field("abc"), 73, 2, b"", [], 1_500_000_000),
        250, wire.accepted(73, 5), [])).decision
    assert (request.match_id, request.decision_id, request.seat, request.time_left_ms) == \
        ("abc", 73, 2, 250)
    assert (request.deadline.seconds, request.deadline.nanos) == (1, 500_000_000)
    assert (request.accepted.decision_id, request.accepted.action_id) == (73, 5)


def test_a_decision_frame_refuses_what_is_not_bytes() -> None:
    with pytest.raises(TypeError):
        wire.decision_body(wire.match_id_field("m"), 1, 0, "text", [], 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        wire.request_message(b"", 1, b"", ["event"])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        _encode.DecisionFrames((1, 2, 3))


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_observation_parts_encode_alike_in_the_compiled_loop_and_in_python(
        game_id: str) -> None:
    """``ObservationEncoder.encode`` and ``encode_seat`` run their loops over the
    parts in the extension: at every decision of random matches, for every seat,
    their bytes and the bytes they keep per slot are those of the Python loop fed
    the same parts."""
    info = engine.game(game_id)
    compared = 0
    for players in (info.min_players, info.max_players):
        state = engine.make(game_id, players, players)
        compiled, python = wire.ObservationEncoder(game_id), wire.ObservationEncoder(game_id)
        by_seat = wire.ObservationEncoder(game_id)
        rng = random.Random(players)
        while not state.is_terminal():
            for seat in rng.sample(range(players), players):
                parts = state.observation_parts(seat)
                expected = python._encode_each(parts)
                assert compiled.encode(parts) == expected
                assert by_seat.encode_seat(state, seat) == expected
                compared += 1
            assert compiled._slots == python._slots == by_seat._slots
            seat = rng.choice(state.to_act())
            state.apply(seat, rng.choice(list(state.legal_action_ids(seat))))
    assert compared > 100


def test_a_part_the_compiled_loop_refuses_goes_to_the_library() -> None:
    """A part whose data the schema does not write (a float for an int32) is encoded
    by the library, in its place among the parts; the parts before it stay kept."""
    cls = opb.TwistedObservation
    first = {"game": "twisted", "hand": [13, 14]}
    odd = {"seat": 3.0, "seats": [{"seat": 2, "total": -4}]}
    encoder = wire.ObservationEncoder("twisted")
    parts = [("first", 1, lambda: first), ("odd", 1, lambda: odd), ("every time", None,
                                                                     lambda: {"seat": 3})]
    expected = wire.length_delimited(frames._OBSERVATION_MEMBER_KEYS["twisted"], b"".join(
        _library(cls, data) for data in (first, odd, {"seat": 3})))
    assert encoder.encode(parts) == expected
    assert encoder._slots == {"first": (1, _library(cls, first)), "odd": (1, _library(cls, odd))}
    # Kept: a second pass builds neither versioned part again.
    assert encoder.encode([("first", 1, _unbuilt), ("odd", 1, _unbuilt),
                           ("every time", None, lambda: {"seat": 3})]) == expected
    with pytest.raises((TypeError, ValueError)):  # not a (slot, version, build)
        encoder.encode([("first", 1)])  # type: ignore[list-item]


class _Source:
    """An ``ObservationSource`` of fixed parts, which counts its builds."""

    def __init__(self, parts: dict[str, tuple[Any, dict[str, Any]]]) -> None:
        self.parts = parts
        self.built: list[tuple[int, str]] = []

    def observation_slots(self, seat: int) -> list[tuple[str, Any]]:
        return [(slot, version) for slot, (version, _) in self.parts.items()]

    def observation_part(self, seat: int, slot: str) -> dict[str, Any]:
        self.built.append((seat, slot))
        return self.parts[slot][1]


def test_encode_seat_builds_only_the_parts_not_kept_and_sends_refused_ones_to_the_library(
) -> None:
    """``encode_seat`` asks the source for a part only when its slot's version moved
    (or it has none), with the seat and the slot; a part the schema does not write
    (a float for an int32) is encoded by the library, in its place."""
    cls = opb.TwistedObservation
    first, every = {"game": "twisted", "hand": [13, 14]}, {"seat": 3}
    source = _Source({"first": (1, first), "every time": (None, every)})
    encoder = wire.ObservationEncoder("twisted")
    expected = wire.length_delimited(frames._OBSERVATION_MEMBER_KEYS["twisted"],
                                     _library(cls, first) + _library(cls, every))
    assert encoder.encode_seat(source, 2) == expected
    assert encoder.encode_seat(source, 2) == expected
    assert source.built == [(2, "first"), (2, "every time"), (2, "every time")]
    odd = {"seat": 3.0, "seats": [{"seat": 2, "total": -4}]}
    source.parts["odd"] = (1, odd)
    assert encoder.encode_seat(source, 2) == wire.length_delimited(
        frames._OBSERVATION_MEMBER_KEYS["twisted"],
        _library(cls, first) + _library(cls, every) + _library(cls, odd))
    assert encoder._slots["odd"] == (1, _library(cls, odd))
    with pytest.raises((TypeError, ValueError)):  # not a (slot, version)
        schemas.schema(cls.DESCRIPTOR).encode_slots({}, [("first", 1, 2)],
                                                    source.observation_part, 0, 1)


def _unbuilt() -> dict[str, Any]:
    raise AssertionError("a kept part was built again")


def test_the_compiled_loop_survives_parts_and_versions_that_change_what_it_reads() -> None:
    """Builds and versions are Python code: a build that empties the parts list
    ends the loop where the Python loop ends too, and a version whose comparison
    empties the kept slots still gives the bytes it matched."""
    cls = opb.TwistedObservation
    first = {"game": "twisted", "hand": [13, 14]}
    parts: list[Any] = []

    def build_and_clear() -> dict[str, Any]:
        parts.clear()
        return first

    parts += [("first", None, build_and_clear), ("later", None, _unbuilt)] * 50
    expected = wire.length_delimited(frames._OBSERVATION_MEMBER_KEYS["twisted"],
                                     _library(cls, first))
    assert wire.ObservationEncoder("twisted").encode(parts) == expected

    encoder = wire.ObservationEncoder("twisted")

    class Meddling:
        def __eq__(self, other: object) -> bool:
            encoder._slots.clear()
            return True

        __hash__ = object.__hash__

    assert encoder.encode([("first", 1, lambda: first)]) == expected
    assert encoder.encode([("first", Meddling(), _unbuilt)]) == expected
