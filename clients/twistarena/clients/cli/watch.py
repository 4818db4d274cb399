"""``twistarena watch ID``: follow a match live as a spectator (public view only)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from rich.console import Console

from ..sdk import MatchClient, MatchResult
from ..sdk.convert import seed_text, struct_to_dict
from ..terminal import make_console
from .match import client_from, event_text, final_record, missed_by_seat, result_table, seat_names
from .options import add_connection_args


def register(sub: Any) -> None:
    parser = sub.add_parser("watch", help="follow a match live, event by event")
    add_connection_args(parser)
    parser.add_argument("match_id")
    parser.add_argument("--from-seq", type=int, default=0, help="start at this event")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(watch(client_from(args), args.match_id, args.from_seq, make_console()))


async def watch(client: MatchClient, match_id: str, from_seq: int, console: Console) -> int:
    """Print each public event's line as it comes, then the final table."""
    match = await client.get_match(match_id)
    game_id = match.options.game_id
    console.rule(f"{game_id}: match {match_id}, {match.options.num_players} players, "
                 f"{seed_text(match)}")
    result: MatchResult | None = None
    async for msg in client.watch(match_id, from_seq):
        kind = msg.WhichOneof("msg")
        if kind == "event":
            ev = msg.event
            line = event_text(game_id, ev.kind, struct_to_dict(ev.data), ev.text)
            if line:
                console.print(f"[dim]{ev.seq:>4}[/dim] {line}", highlight=False)
        elif kind == "match_over":
            result = MatchResult.from_proto(msg.match_over.result)
    record = await final_record(client, match_id)
    if result is None:  # the stream ended without MatchOver: read the record instead
        match = await client.get_match(match_id)
        result = MatchResult.from_proto(match.result)
    console.print(result_table(result, seat_names(match), f"Final result of {match_id}",
                               missed=missed_by_seat(record) if record is not None else None))
    return 0
