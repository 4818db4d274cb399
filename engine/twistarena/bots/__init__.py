"""Sample bots. A bot is a function ``(observation, legal_actions) -> action id``:
the observation is the engine's observation dict of the seat, the legal actions
are ``twistarena.engine.Action`` values. The same bot plays in-process against
the engine, as a house bot on the server, or over the network through the agent
SDK. This layer imports only the engine, so the server and the clients share it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeGuard, runtime_checkable

from twistarena.engine import Action, State


class Bot(Protocol):
    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int: ...


@runtime_checkable
class SearchBot(Protocol):
    """A bot that searches: whoever holds the engine state gives it the state and its seat.

    Implementations must derive everything from ``information_set_state(state, seat)``
    (or ``state.determinize``), never from the hidden parts of ``state``. Called
    with an observation only (over the network), they play without searching.
    """

    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int: ...

    def act_with_state(self, state: State, seat: int) -> int: ...


def searches(bot: Bot) -> TypeGuard[SearchBot]:
    """Does this bot search the engine state? (Full strength only where the state
    is at hand: house bots on the server, local tournaments, ``evaluate``.)"""
    return isinstance(bot, SearchBot)


def decide(bot: Bot, state: State, seat: int) -> int:
    """The action id ``bot`` picks for ``seat`` of ``state``: a search bot gets the
    state (it looks only at the seat's information set), any other bot the seat's
    observation and legal actions."""
    if searches(bot):
        return bot.act_with_state(state, seat)
    return bot(state.observation(seat), state.legal_actions(seat))


def random_bot(seed: int | None = None) -> Bot:
    """Uniformly random among the legal actions (seeded for reproducible matches)."""
    rng = random.Random(seed)

    def act(observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        return rng.choice(legal_actions).id

    return act


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
    """A new bot of ``strategy`` (a key of ``STRATEGIES``) for ``game_id``."""
    try:
        factory = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}") from None
    return factory(game_id, seed)
