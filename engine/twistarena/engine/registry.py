"""The list of games and the one way to start a match of any of them."""

from __future__ import annotations

import importlib
import random
from collections.abc import Iterable, Mapping
from typing import Any

from .core import GameInfo, InvalidObservation, InvalidOptions, State
from .options import check_ranges, merge_options

#: game id -> module that defines ``GAME: GameInfo``. Imported on first use.
GAME_MODULES: dict[str, str] = {
    "tricky_twist": "twistarena.engine.tricky_twist",
    "twisted": "twistarena.engine.twisted",
    "twhist": "twistarena.engine.twhist",
}
GAME_IDS: tuple[str, ...] = tuple(GAME_MODULES)

_loaded: dict[str, GameInfo] = {}


def game(game_id: str) -> GameInfo:
    """The ``GameInfo`` of ``game_id`` or ``InvalidOptions`` naming the known games."""
    info = _loaded.get(game_id)
    if info is None:
        module = GAME_MODULES.get(game_id)
        if module is None:
            raise InvalidOptions(f"unknown game {game_id!r}; games: {', '.join(GAME_IDS)}")
        info = importlib.import_module(module).GAME
        _loaded[game_id] = info
    return info


def games() -> list[GameInfo]:
    """Every game with its player range and option defaults."""
    return [game(g) for g in GAME_IDS]


def make(game_id: str, num_players: int, seed: int,
         options: Mapping[str, Any] | None = None) -> State:
    """A new match of ``game_id`` for ``num_players`` seats, reproducible from ``seed``."""
    info = game(game_id)
    if isinstance(num_players, bool) or not isinstance(num_players, int) or not (
        info.min_players <= num_players <= info.max_players
    ):
        raise InvalidOptions(
            f"{game_id} is for {info.min_players}-{info.max_players} players, got {num_players!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InvalidOptions(f"seed must be an integer, got {seed!r}")
    merged = merge_options(info.defaults, options)
    if options:  # the defaults lie within their ranges (tests/engine/test_option_ranges.py)
        check_ranges(merged, info.option_ranges)
    return info.new_state(num_players, seed, merged)


def replay(game_id: str, num_players: int, seed: int, options: Mapping[str, Any] | None,
           actions: Iterable[tuple[int, int]]) -> State:
    """Rebuild a match from its options, seed and (seat, action id) log."""
    state = make(game_id, num_players, seed, options)
    for seat, action_id in actions:
        state.apply(seat, action_id)
    return state


def sample_state(game_id: str, observation: Mapping[str, Any], rng: random.Random,
                 options: Mapping[str, Any] | None = None) -> State:
    """A full state that one seat cannot tell from the real one: its observation is
    ``observation``, and everything hidden from the seat (other hands, reserves,
    the deck order, face-down cards, future shuffles) is dealt uniformly at random
    among the deals consistent with what it has seen, shown voids included.

    Search bots simulate from it when they have only what their seat was sent.
    ``options`` are the match's options (an agent gets them when it joins; default:
    the game's defaults). Raises ``InvalidObservation`` for an observation that is
    not of ``game_id`` or that no deal can show."""
    info = game(game_id)
    if observation.get("game") != game_id:
        raise InvalidObservation(f"not an observation of {game_id}: {observation.get('game')!r}")
    try:
        return info.sample_state(observation, merge_options(info.defaults, options), rng)
    except (KeyError, TypeError, IndexError) as error:
        raise InvalidObservation(f"malformed {game_id} observation: {error!r}") from None
