"""Sample bots. A bot is a function ``(observation, legal_actions) -> action id``:
the observation is the engine's observation dict of the seat, the legal actions
are ``twistarena.engine.Action`` values. The same bot plays in-process against
the engine or over the network through the agent SDK."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from twistarena.engine import Action


class Bot(Protocol):
    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int: ...


def random_bot(seed: int | None = None) -> Bot:
    """Uniformly random among the legal actions (seeded for reproducible matches)."""
    rng = random.Random(seed)

    def act(observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        return rng.choice(legal_actions).id

    return act


#: Strategies that search the engine state: full strength only where the state is
#: at hand (house bots on the server, local tournaments, ``evaluate``); a network
#: agent sees observations only and plays its game's heuristic instead.
SEARCH_STRATEGIES = frozenset({"ismcts"})

#: strategy name -> factory(game_id, seed) -> Bot. Games add their heuristics here.
STRATEGIES: dict[str, Callable[[str, int | None], Bot]] = {
    "random": lambda game_id, seed: random_bot(seed),
    "heuristic": lambda game_id, seed: _heuristic(game_id, seed),
    "ismcts": lambda game_id, seed: _ismcts(game_id, seed),
}


def _heuristic(game_id: str, seed: int | None) -> Bot:
    from .heuristic import heuristic_bot

    return heuristic_bot(game_id, seed)


def _ismcts(game_id: str, seed: int | None) -> Bot:
    from .ismcts import ismcts_bot

    return ismcts_bot(game_id, seed)


def make_bot(strategy: str, game_id: str, seed: int | None = None) -> Bot:
    try:
        factory = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}") from None
    return factory(game_id, seed)
