"""A stored match as the contract shows it: its ``Match`` message, its timeouts
and its engine state, from the record and the log (for matches run here or not)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format, timestamp_pb2
from twistarena import engine, wire
from twistarena.engine import State
from twistarena.storage import LogEntry, MatchRecord
from twistarena.v1 import match_pb2 as mpb


def match_proto(record: MatchRecord, status: int, result: mpb.MatchResult | None,
                actions: int, timeouts: Sequence[int],
                connected: Sequence[bool] | None = None) -> mpb.Match:
    """The ``Match`` message of a stored match (``connected`` only for one run here)."""
    opts = record.options
    seats = []
    for s in range(opts.num_players):
        spec = opts.seats[s] if len(opts.seats) == opts.num_players else mpb.SeatSpec()
        seats.append(mpb.SeatInfo(seat=s, name=spec.name, house_bot=spec.house_bot,
                                  connected=bool(connected and connected[s]),
                                  timeouts=timeouts[s] if s < len(timeouts) else 0))
    created = timestamp_pb2.Timestamp()
    created.FromMilliseconds(record.created_ms)
    msg = mpb.Match(match_id=record.match_id, options=opts, seed=record.seed,
                    status=status, seats=seats, actions=actions,  # type: ignore[arg-type]
                    created_at=created)
    if result is not None:
        msg.result.CopyFrom(result)
    return msg


def timeouts_from_log(entries: Sequence[LogEntry], num_players: int,
                      result: mpb.MatchResult | None = None) -> list[int]:
    """Per seat, how many of its decisions timed out: the fallback's moves in the log,
    plus, after a forfeit, the missed decision that forfeited the seat (it ended the
    match instead of being played, so the log does not hold it). The forfeiting seat
    is the one placed last, alone, at ``num_players``."""
    counts = [0] * num_players
    for seat, _action, timeout in entries:
        if timeout and 0 <= seat < num_players:
            counts[seat] += 1
    if result is not None and result.reason == mpb.END_REASON_FORFEIT:
        for seat, place in enumerate(result.places[:num_players]):
            if place == num_players:
                counts[seat] += 1
    return counts


def replay_state(record: MatchRecord, entries: Sequence[LogEntry]) -> State:
    """The engine state a stored match has reached: its log replayed."""
    opts = record.options
    return engine.replay(opts.game_id, opts.num_players, record.seed, game_options(opts),
                         [(s, a) for s, a, _t in entries])


def game_options(options: mpb.MatchOptions) -> dict[str, Any]:
    """The engine options of a match (none given: the game's defaults), as the
    plain JSON the engine validates: nested tables as dicts, lists as lists,
    integral numbers as ints (a Struct holds every number as a double)."""
    if not options.HasField("game_options"):
        return {}
    decoded = json_format.MessageToDict(options.game_options)
    parsed: dict[str, Any] = wire.options_dict(decoded)
    return parsed

