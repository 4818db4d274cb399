"""Rule-based bots, one module per game id, each exposing ``make(seed) -> Bot``."""

from __future__ import annotations

import importlib

from .. import Bot


def heuristic_bot(game_id: str, seed: int | None = None) -> Bot:
    module = importlib.import_module(f"{__name__}.{game_id}")
    bot: Bot = module.make(seed)
    return bot
