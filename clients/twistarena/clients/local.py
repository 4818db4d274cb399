"""In-process matches between sample bots, straight on the engine (no network).

Used by ``twistarena demo --offline`` and by bot authors who want to test a
bot against the engine before connecting it to a server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from twistarena import engine
from twistarena.bots import Bot, decide, make_bot


def play_local(game_id: str, num_players: int, seed: int, strategies: Sequence[str] | None = None,
               options: dict[str, Any] | None = None,
               on_event: Callable[[str], None] | None = None,
               bots: Sequence[Bot] | None = None) -> engine.State:
    """Play a whole match; ``on_event`` receives each public event as narrated text."""
    state = engine.make(game_id, num_players, seed, options)
    info = engine.game(game_id)
    if bots is None:
        names = list(strategies or ["heuristic"] * num_players)
        if len(names) != num_players:
            raise ValueError(f"need {num_players} strategies, got {len(names)}")
        bots = [make_bot(name, game_id, seed * 31 + seat) for seat, name in enumerate(names)]
    told = 0

    def tell() -> None:
        nonlocal told
        if on_event is not None:
            for event in state.events[told:]:
                text = info.narrate(event.view(None))
                if text:
                    on_event(text)
        told = len(state.events)

    tell()
    while not state.is_terminal():
        for seat in state.to_act():
            state.apply(seat, decide(bots[seat], state, seat))
            tell()
    return state
