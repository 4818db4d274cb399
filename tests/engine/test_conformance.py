"""Every game passes the generic engine contract, for every player count."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twistarena import engine

from .conformance import playout

CASES = [
    (info.id, n)
    for info in engine.games()
    for n in range(info.min_players, info.max_players + 1)
]


@pytest.mark.parametrize(("game_id", "num_players"), CASES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_random_playouts_keep_the_contract(game_id: str, num_players: int, seed: int) -> None:
    playout(game_id, num_players, seed)


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_games_lists_ranges_and_defaults(game_id: str) -> None:
    info = engine.game(game_id)
    assert 2 <= info.min_players <= info.max_players <= 5
    assert info.to_json()["defaults"] == dict(info.defaults)


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_bad_setup_is_refused(game_id: str) -> None:
    info = engine.game(game_id)
    for n in (info.min_players - 1, info.max_players + 1, "4", True):
        with pytest.raises(engine.InvalidOptions):
            engine.make(game_id, n, 1)  # type: ignore[arg-type]
    with pytest.raises(engine.InvalidOptions, match="unknown option"):
        engine.make(game_id, info.min_players, 1, {"no_such_option": 1})


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(engine.InvalidOptions, match="tricky_twist"):
        engine.make("chess", 2, 1)
