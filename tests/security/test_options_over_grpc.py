"""Every option the engine accepts is settable from the contract, with the engine's
validation (defect 11: list and nested options were refused over gRPC)."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from grpc import aio
from twistarena import engine
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc

from tests.support.agents import Agent, create, options, run, tokens

#: (game, players, overrides) the engine accepts: lists, nested tables, strings.
ACCEPTED = [
    ("twhist", 3, {"values": [-1, 0, 1, 2, 2, 3, 4, 5]}),
    ("twhist", 3, {"colours": ["a", "b", "c", "d"], "stars": [1] * 10}),
    ("twisted", 2, {"hand_size": {"2": 9}, "rounds": 1}),
    ("tricky_twist", 3, {"star_tables": {"longest_run": [0, 2, 4]},
                         "variable_cards": {"v1": {"framed": "even"}},
                         "scoring_cards": ["longest_run", "odd_values", "even_values"]}),
]

#: Overrides the engine refuses, and a word of its message.
REFUSED = [
    ("twhist", 3, {"values": []}, "non-empty list"),
    ("twisted", 2, {"hand_size": {"2": 9.5}}, "integer"),
    ("twisted", 2, {"hand_size": 9}, "table"),
    ("tricky_twist", 3, {"star_tables": {"nope": [1]}}, "unknown option"),
]


@pytest.mark.parametrize(("game", "players", "overrides"), ACCEPTED)
def test_list_and_nested_options_are_settable(server: Any, game: str, players: int,
                                              overrides: dict[str, Any]) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            created = await create(ch, options(game, players, game_options=overrides))
            mid = created.match.match_id
            joined = await Agent(ch, mid, tokens(created)[0]).join()
            expected = engine.make(game, players, 1, overrides).options
            got = json_format.MessageToDict(joined.game_options)
            assert got == json.loads(json.dumps(expected))
            await mgrpc.MatchesStub(ch).CancelMatch(mpb.CancelMatchRequest(match_id=mid))

    run(main())


@pytest.mark.parametrize(("game", "players", "overrides", "word"), REFUSED)
def test_bad_options_get_the_engines_message(server: Any, game: str, players: int,
                                             overrides: dict[str, Any], word: str) -> None:
    with pytest.raises(engine.InvalidOptions, match=word):
        engine.make(game, players, 1, overrides)

    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await create(ch, options(game, players, game_options=overrides))
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert word in (err.value.details() or "")

    run(main())
