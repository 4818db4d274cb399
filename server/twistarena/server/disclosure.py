"""What a caller may learn of a match: the one place that decides it.

Whoever knows a match's seed can rebuild every hand and every future draw
(``engine.make``), and its raw action log holds secret choices. So while a
match is waiting or running, its seed and action log go to the admin only
(a server without an admin token has no admin: nobody gets them). Once it is
over its replay is public, except a game of a duplicate tournament block:
the other games of the block deal the same cards, so its seed and replay stay
closed until every game of the block has ended (``tournaments.Snapshot.sealed``).

Everything else a match record holds (options, seats, status, action count,
result) is public.
"""

from __future__ import annotations

from typing import Any

from grpc import aio
from twistarena import wire
from twistarena.v1 import match_pb2 as mpb

from .config import ServerConfig
from .rpc import is_admin
from .runner import Hub


def redact(match: mpb.Match) -> mpb.Match:
    """``match`` without its seed (``seed`` 0, ``options.seed`` absent), in place."""
    match.seed = 0
    match.options.ClearField("seed")
    return match


class Disclosure:
    """Answers "may this caller see the seed and action log of this match?"."""

    def __init__(self, hub: Hub, config: ServerConfig) -> None:
        self.hub = hub
        self.config = config

    async def replay_public(self, match: mpb.Match) -> bool:
        """The match is over and not a sealed game of a duplicate block."""
        if match.status not in wire.MATCH_OVER:
            return False
        from . import tournaments  # imported here: tournaments -> matchmaking -> this module

        return not await tournaments.replay_sealed(self.hub.store.redis, match.match_id)

    async def may_see_replay(self, match: mpb.Match,
                             context: aio.ServicerContext[Any, Any]) -> bool:
        """Whether the caller may read the match's replay now."""
        return is_admin(context, self.config) or await self.replay_public(match)

    async def may_watch(self, match_id: str, context: aio.ServicerContext[Any, Any]) -> bool:
        """Spectators see public events, except those of a game of a duplicate
        block with games left to play (the same cards are dealt again there)."""
        if is_admin(context, self.config):
            return True
        from . import tournaments

        return not await tournaments.in_open_duplicate_block(self.hub.store.redis, match_id)

    async def shown(self, match: mpb.Match, context: aio.ServicerContext[Any, Any]) -> mpb.Match:
        """``match`` as the caller may see it (redacted in place when needed)."""
        if not await self.may_see_replay(match, context):
            redact(match)
        return match
