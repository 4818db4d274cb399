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

from ..config import ServerConfig
from ..rpc import is_admin
from .hub import Hub

#: How many public tournament games a Disclosure remembers before starting over.
PUBLIC_MEMORY = 100_000


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
        #: Tournament games known to be public: once public, always public.
        self._public: set[str] = set()

    async def replay_public(self, match: mpb.Match, loaded: dict[str, Any] | None = None) -> bool:
        """The match is over and not a sealed game of a duplicate block.
        ``loaded``: see ``tournaments.replay_sealed``."""
        if match.status not in wire.MATCH_OVER:
            return False
        if match.match_id in self._public:
            return True
        from ..league import tournaments  # imported here: tournaments -> matchmaking -> this module

        if await tournaments.replay_sealed(self.hub.store.tournaments, match.match_id, loaded):
            return False
        if tournaments.parse_game_match_id(match.match_id) is not None:
            if len(self._public) >= PUBLIC_MEMORY:
                self._public.clear()
            self._public.add(match.match_id)
        return True

    async def may_see_replay(self, match: mpb.Match, context: aio.ServicerContext[Any, Any],
                             loaded: dict[str, Any] | None = None) -> bool:
        """Whether the caller may read the match's replay now."""
        return is_admin(context, self.config) or await self.replay_public(match, loaded)

    async def may_watch(self, match_id: str, context: aio.ServicerContext[Any, Any]) -> bool:
        """Spectators see public events, except those of a game of a duplicate
        block with games left to play (the same cards are dealt again there)."""
        if is_admin(context, self.config):
            return True
        from ..league import tournaments

        return not await tournaments.in_open_duplicate_block(self.hub.store.tournaments, match_id)

    async def visible(self, match: mpb.Match, context: aio.ServicerContext[Any, Any],
                      loaded: dict[str, Any] | None = None) -> mpb.Match:
        """``match`` as the caller may see it (redacted in place when needed)."""
        if not await self.may_see_replay(match, context, loaded):
            redact(match)
        return match
