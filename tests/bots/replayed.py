"""Checks that a search bot played a recorded match exactly as it decides in-process."""

from __future__ import annotations

from typing import Any

from twistarena import engine
from twistarena.bots import Bot, decide


def decisions_match_the_log(replay: Any, game_id: str, players: int, seed: int, seat: int,
                            bot: Bot, options: dict[str, Any] | None = None) -> int:
    """Replays the log (of a match with game ``options``); at every action of ``seat``
    asserts that ``bot`` picks it from the state reached. Returns how many actions of
    ``seat`` were checked."""
    state = engine.make(game_id, players, seed, options or {})
    checked = 0
    for entry in replay.actions:
        if entry.seat == seat:
            assert decide(bot, state, seat) == entry.action_id
            checked += 1
        state.apply(entry.seat, entry.action_id)
    assert state.is_terminal()
    return checked
