"""The generic engine contract (tests/engine/conformance.py) over many seeds, all player
counts and the expert variant; 79 cards always accounted for (TW-1.1)."""

from __future__ import annotations

import pytest

from ..conformance import playout


@pytest.mark.parametrize("players", [2, 3, 4])
def test_contract_over_many_seeds(players: int) -> None:
    """Random playouts keep every invariant of the engine API."""
    for seed in range(60):
        state = playout("twisted", players, seed * 7919 + players)
        assert sum(len(z) for z in state.card_zones().values()) == 79


@pytest.mark.parametrize("players", [2, 3, 4])
def test_contract_with_options(players: int) -> None:
    """The expert variant (TW-4.5), more rounds and other figures keep the contract."""
    for seed in range(15):
        playout("twisted", players, seed, {"expert": True, "rounds": 3})
        playout("twisted", players, seed, {"extend_distance": 3, "toad_penalty": 2})
