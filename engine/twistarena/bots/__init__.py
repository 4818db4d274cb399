"""Sample bots. A bot is a function ``(observation, legal_actions) -> action id``:
the observation is the engine's observation dict of the seat, the legal actions
are ``twistarena.engine.Action`` values. The same bot plays in-process against
the engine, as a house bot on the server, or over the network through the agent
SDK. This layer imports only the engine, so the server and the clients share it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Protocol, TypeGuard, runtime_checkable

from twistarena.engine import Action, State


class Bot(Protocol):
    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int: ...


@runtime_checkable
class SearchBot(Protocol):
    """A bot that searches: slow enough that hosts run it off the event loop.

    ``act_with_state`` must depend only on the seat's observation (and the match
    options), never on the hidden parts of ``state``: it decides exactly as the
    bot called with that observation does, which is how it plays over the network.
    """

    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int: ...

    def act_with_state(self, state: State, seat: int) -> int: ...


def searches(bot: Bot) -> TypeGuard[SearchBot]:
    """Does this bot search? (Hosts think for it off the event loop; it plays the
    same from an observation as from the state.)"""
    return isinstance(bot, SearchBot)


def decide(bot: Bot, state: State, seat: int) -> int:
    """The action id ``bot`` picks for ``seat`` of ``state``: a search bot gets the
    state (and takes only the seat's observation out of it), any other bot the
    seat's observation and legal actions."""
    if searches(bot):
        return bot.act_with_state(state, seat)
    return bot(state.observation(seat), state.legal_actions(seat))


#: A bot's choice given its own random stream: ``(observation, legal actions, rng) -> id``.
Choose = Callable[[Mapping[str, Any], Sequence[Action], random.Random], int]


class SeededBot:
    """A bot whose only state is its random stream, held as a field rather than in
    a closure: a copy (``copy.deepcopy``, as Gymnasium's vector and wrapper code
    makes) draws from its own stream, and the bot pickles (``choose`` is a
    module-level function)."""

    def __init__(self, choose: Choose, seed: int | None) -> None:
        self.choose = choose
        self.rng = random.Random(seed)

    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        return self.choose(observation, legal_actions, self.rng)


def _uniform(observation: Mapping[str, Any], legal_actions: Sequence[Action],
             rng: random.Random) -> int:
    return rng.choice(legal_actions).id


def random_bot(seed: int | None = None) -> Bot:
    """Uniformly random among the legal actions (seeded for reproducible matches)."""
    return SeededBot(_uniform, seed)


#: A strategy builds a bot from (game id, seed, the match's options or None).
Factory = Callable[[str, int | None, Mapping[str, Any] | None], Bot]

#: The house ladder, weakest rung first: every name is a strategy that plays
#: wherever a house bot does (practice, tournaments, ``match create --bots``).
#: Measured ratings of the rungs against each other are in docs/bots.md.
LADDER: tuple[str, ...] = ("random", "heuristic", "ismcts-fast", "ismcts", "ismcts-strong")
#: The house rungs an arena opened by ``serve --arena`` gets: the ladder's three
#: cheap rungs, so a lone author finds a table at once.
ARENA_HOUSE: tuple[str, ...] = LADDER[:3]

#: Simulations per decision of each search rung (a fixed count, not a time: a house
#: bot's choice must be reproducible from the match seed and log). Each simulation
#: plays a few heuristic moves, so a decision's cost is bounded: ``twistarena bench
#: ladder`` measures the CPU seconds per decision (the target: under one second).
ISMCTS_ITERATIONS: dict[str, int] = {"ismcts-fast": 30, "ismcts": 100, "ismcts-strong": 250}


def _heuristic(game_id: str, seed: int | None) -> Bot:
    from .heuristic import heuristic_bot

    return heuristic_bot(game_id, seed)


def _ismcts(game_id: str, seed: int | None, options: Mapping[str, Any] | None, *,
            iterations: int) -> Bot:
    from .ismcts import ismcts_bot

    return ismcts_bot(game_id, seed, iterations=iterations, options=options)


#: strategy name -> factory. Games add their heuristics here.
STRATEGIES: dict[str, Factory] = {
    "random": lambda game_id, seed, options: random_bot(seed),
    "heuristic": lambda game_id, seed, options: _heuristic(game_id, seed),
    **{name: partial(_ismcts, iterations=n) for name, n in ISMCTS_ITERATIONS.items()},
}


def make_bot(strategy: str, game_id: str, seed: int | None = None,
             options: Mapping[str, Any] | None = None) -> Bot:
    """A new bot of ``strategy`` (a key of ``STRATEGIES``) for ``game_id``; search
    bots simulate with the match ``options`` (default: the game's defaults)."""
    try:
        factory = STRATEGIES[strategy]
    except KeyError:
        raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}") from None
    return factory(game_id, seed, options)
