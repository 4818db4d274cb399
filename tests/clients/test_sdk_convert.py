"""Wire values back to engine values in the SDK: Struct decoding and lazy decisions."""

from __future__ import annotations

import random
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Struct
from twistarena import engine, wire
from twistarena.clients.sdk import convert
from twistarena.v1 import play_pb2 as ppb


def _reference(struct: Struct) -> Any:
    def plain(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        return value

    return plain(json_format.MessageToDict(struct))


def test_struct_to_dict_matches_json_format() -> None:
    data = {"a": 1, "b": 2.5, "c": "x", "d": True, "e": None, "f": [1, {"g": [2.0, "h"]}, []],
            "h": {}, "i": -3, "j": {"k": {"l": [False, 0, -0.5]}}}
    struct = wire.struct(data)
    assert convert.struct_to_dict(struct) == _reference(struct) == data
    assert convert.struct_to_dict(Struct()) == {}


def test_legal_actions_lazy_and_eager_agree() -> None:
    rng = random.Random(2)
    for game_id in engine.GAME_IDS:
        state = engine.make(game_id, engine.game(game_id).max_players, 4)
        for _ in range(60):
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            actions = state.legal_actions(seat)
            req = ppb.DecisionRequest(legal_actions=[
                ppb.LegalAction(id=a.id, label=a.label, payload=wire.struct(a.payload))
                for a in actions])
            eager = convert.legal_actions(req)
            lazy = convert.legal_actions(req, lazy=True)
            assert [(a.id, a.label, a.payload) for a in eager] == \
                [(a.id, a.label, dict(a.payload)) for a in actions]
            assert lazy == eager  # Mapping equality decodes the lazy payloads
            assert [dict(a.payload) for a in lazy] == [dict(a.payload) for a in actions]
            state.apply(seat, rng.choice(state.legal_action_ids(seat)))


def test_lazy_event_data_decodes_to_the_same_event() -> None:
    """``lazy_observations`` covers event data too (kept serialized, decoded when read)."""
    state = engine.make("tricky_twist", 4, 3)
    info = engine.game("tricky_twist")
    rng = random.Random(3)
    for _ in range(30):
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(state.legal_action_ids(seat)))
    for seq, event in enumerate(state.events):
        message = wire.event(seq, event.view(1), info)
        eager = convert.MatchEvent.from_proto(message)
        lazy = convert.MatchEvent.from_proto(message, lazy=True)
        assert lazy._data is None and lazy._source  # still serialized
        assert lazy == eager and dict(lazy.data) == eager.data
        assert lazy._source is None  # decoded once, kept read-only
        with pytest.raises(TypeError):
            lazy.data["seat"] = 9  # type: ignore[index]
        with pytest.raises(AttributeError):
            lazy.seq = 9  # type: ignore[misc]
