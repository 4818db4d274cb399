"""The one way a match is created: CreateMatch, matchmaking, practice, tournaments.

Validate, resolve the clock, draw the seed, issue one token per remote seat
(only hashes are stored), record the match and place it on a node.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from types import MappingProxyType

from twistarena import engine
from twistarena.bots import STRATEGIES
from twistarena.storage import MatchRecord
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import runners_pb2 as rpb

from .. import auth, metrics
from ..cluster import Cluster
from ..hostedagents.runnerhub import seat_assignment
from ..rpc import shown
from . import records, timecontrol


class CreationError(ValueError):
    """The options cannot make a match (the message names the problem)."""


def _validate(opts: mpb.MatchOptions) -> str:
    """A sentence naming the problem with the requested options, or ''."""
    if opts.game_id not in engine.GAME_IDS:
        return f"unknown game {shown(opts.game_id)}; games: {', '.join(engine.GAME_IDS)}"
    info = engine.game(opts.game_id)
    if not info.min_players <= opts.num_players <= info.max_players:
        return (f"{opts.game_id} is for {info.min_players}-{info.max_players} players, "
                f"got {opts.num_players}")
    if opts.seats and len(opts.seats) != opts.num_players:
        return f"seats must be empty or list {opts.num_players} entries, got {len(opts.seats)}"
    for i, spec in enumerate(opts.seats):
        if spec.house_bot and spec.house_bot not in STRATEGIES:
            return (f"seat {i}: unknown house bot {shown(spec.house_bot)}; "
                    f"known: {', '.join(STRATEGIES)}")
        if len(spec.name) > 100:
            return f"seat {i}: name longer than 100 characters"
    return ""


def check_options(opts: mpb.MatchOptions) -> None:
    """Refuse match options the server does not run (raises CreationError)."""
    problem = _validate(opts)
    if problem:
        raise CreationError(problem)


async def new_match(cluster: Cluster, options: mpb.MatchOptions, match_id: str = "",
                    hosted: Mapping[int, rpb.SeatAssignment] = MappingProxyType({}),
                    ) -> tuple[mpb.Match, dict[int, str]]:
    """Create and place a match; returns its record and the token of each remote seat.

    ``match_id``: a caller-chosen id (tournaments use stable ids so that creating
    a scheduled game twice is detectable); empty: a random one. ``hosted``: seat
    -> what the runners play there (``RunnerHub.hosted_template``), stored with
    the match in the write that creates it: a store that comes back with the
    match but without the seat's entry in the runners' line (written next) has
    what the node opening the match needs to put the seat back."""
    opts = mpb.MatchOptions()
    opts.CopyFrom(options)
    check_options(opts)
    seed = opts.seed if opts.HasField("seed") else secrets.randbits(63)
    opts.seed = seed
    try:
        opts.time_control.CopyFrom(timecontrol.resolve(opts.time_control))
        # The state that checks the options is the one the match is played on.
        state = engine.make(opts.game_id, opts.num_players, seed, records.game_options(opts))
    except (engine.InvalidOptions, ValueError, TypeError) as exc:
        raise CreationError(str(exc)) from None
    mid = match_id or secrets.token_hex(8)
    tokens: dict[int, str] = {}
    hashes: dict[int, str] = {}
    for seat in range(opts.num_players):
        spec = opts.seats[seat] if opts.seats else mpb.SeatSpec()
        if spec.house_bot:
            continue
        token = auth.new_token()
        tokens[seat] = token
        hashes[seat] = auth.token_hash(token)
    record = MatchRecord(match_id=mid, options=opts, seed=seed,
                         status=mpb.MATCH_STATUS_WAITING,
                         created_ms=int(time.time() * 1000), token_hashes=hashes)
    for seat, template in hosted.items():
        record.hosted[seat] = seat_assignment(template, opts, mid, seat, tokens[seat],
                                              "").SerializeToString()
    match = await cluster.place_new(record, state)
    metrics.MATCHES_CREATED.inc()
    return match, tokens
