"""``twistarena replay ID``: re-simulate a recorded match and check its result.

Matches are deterministic (options + seed + actions), so re-running the
action log on the engine must give the recorded scores and places; a
difference means the record or the engine is wrong, and the command fails.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, field
from typing import Any

from twistarena import engine, wire
from twistarena.v1 import match_pb2

from ..sdk import MatchResult
from ..sdk.convert import struct_to_dict
from ..terminal import make_console, safe
from .command import FAILED, print_json
from .match import client_from, result_table, seat_names
from .options import add_connection_args, add_json


def register(sub: Any) -> None:
    parser = sub.add_parser("replay", help="re-simulate a match and verify its result")
    add_connection_args(parser)
    parser.add_argument("match_id")
    parser.add_argument("--quiet", action="store_true", help="no narration, only the check")
    add_json(parser, "the check, one line")
    parser.set_defaults(run=run)


@dataclass(slots=True)
class Check:
    """The outcome of re-simulating one recorded match."""

    match_id: str
    recorded: MatchResult
    scores: list[int]
    places: list[int]
    terminal: bool
    problems: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"match_id": self.match_id, "ok": self.ok, "problems": self.problems,
                "recorded": self.recorded.to_json(), "replayed_scores": self.scores,
                "replayed_places": self.places, "terminal": self.terminal}


def verify(replay: match_pb2.Replay) -> Check:
    """Re-simulate ``replay`` with the engine and compare with its recorded result."""
    match = replay.match
    options = match.options
    recorded = MatchResult.from_proto(match.result)
    info = engine.game(options.game_id)
    actions = [(a.seat, a.action_id) for a in replay.actions]
    problems: list[str] = []
    try:
        state = engine.replay(options.game_id, options.num_players, match.seed,
                              struct_to_dict(options.game_options), actions)
    except engine.EngineError as error:
        return Check(match.match_id, recorded, [], [], False,
                     [f"the action log does not replay: {error}"])
    lines = [line for e in state.events if (line := info.narrate(e.view(None)))]
    check = Check(match.match_id, recorded, state.scores(), state.places(), state.is_terminal(),
                  problems, lines)
    if match.status == match_pb2.MATCH_STATUS_FINISHED and \
            recorded.reason == "COMPLETED":
        if not state.is_terminal():
            problems.append(f"the match is recorded as finished but the {len(actions)} "
                            "recorded actions do not end it")
        if list(recorded.scores) != check.scores:
            problems.append(f"scores differ: recorded {list(recorded.scores)}, "
                            f"replayed {check.scores}")
        if list(recorded.places) != check.places:
            problems.append(f"places differ: recorded {list(recorded.places)}, "
                            f"replayed {check.places}")
    elif match.status in wire.MATCH_OVER:
        # Forfeits and cancellations end early: the scores so far must still agree.
        if recorded.scores and list(recorded.scores) != check.scores:
            problems.append(f"scores differ: recorded {list(recorded.scores)}, "
                            f"replayed {check.scores}")
    else:
        problems.append("the match has not ended yet; nothing to verify")
    return check


def run(args: argparse.Namespace) -> int:
    replay = asyncio.run(client_from(args).get_replay(args.match_id))
    check = verify(replay)
    if args.json:
        print_json(check.to_json())
        return 0 if check.ok else FAILED
    console = make_console()
    match = replay.match
    if not args.quiet:
        console.rule(f"Replay of {match.match_id}: {match.options.game_id}, "
                     f"{match.options.num_players} players, seed {match.seed}, "
                     f"{len(replay.actions)} actions")
        for line in check.lines:
            console.print(safe(line, lines=True), highlight=False)
        if check.scores:
            console.print(result_table(
                MatchResult.of_engine(check.scores, check.places), seat_names(match),
                "Replayed result",
                missed=[sum(a.timeout for a in replay.actions if a.seat == seat)
                        for seat in range(match.options.num_players)]))
    if check.ok:
        console.print(f"[green]OK[/green]: the replay reproduces the recorded result "
                      f"(scores {list(check.recorded.scores)}, places "
                      f"{list(check.recorded.places)})", highlight=False)
        return 0
    for problem in check.problems:
        console.print(f"[red]MISMATCH[/red]: {problem}", highlight=False)
    return FAILED
