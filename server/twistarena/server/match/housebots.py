"""House bot decisions: a pure function of the match seed, the seat and the log.

A house bot is built afresh for every decision from a seed derived from the
match seed, the seat and how many actions that seat has taken so far (not the
decision id: when several seats choose at once, e.g. Tricky Twist's reserve,
how their answers interleave in the log is a matter of timing), so its choice
depends only on what the log holds for that seat: a match resumed from its log
after a restart (or on another node) plays on exactly as it would have without
the interruption, which keeps tournaments reproducible from their seeds.

Search bots (``act_with_state``) get a clone of the state and look only at the
seat's information set; they think in a worker thread so that the event loop
keeps serving the other matches.
"""

from __future__ import annotations

import asyncio

from twistarena.bots import decide, make_bot, searches
from twistarena.engine import State

MASK = 0xFFFFFFFFFFFF


def decision_seed(match_seed: int, seat: int, own_actions: int) -> int:
    """The bot seed of a seat's next decision (stable across processes and restarts)."""
    return (match_seed * 1_000_003 + own_actions * 8191 + seat * 31 + 17) & MASK


async def house_action(strategy: str, game_id: str, state: State, seat: int,
                       match_seed: int) -> int:
    """The action id the house bot ``strategy`` picks for ``seat`` now."""
    own_actions = sum(1 for who, _ in state.history if who == seat)
    bot = make_bot(strategy, game_id, decision_seed(match_seed, seat, own_actions), state.options)
    if searches(bot):
        return int(await asyncio.to_thread(decide, bot, state.clone(), seat))
    return int(decide(bot, state, seat))
