"""``twistarena replay ID``: re-simulate a recorded match and check its result.

Matches are deterministic (options + seed + actions), so re-running the
action log on the engine must give the recorded scores and places; a
difference means the record or the engine is wrong, and the command fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from twistarena import engine, wire
from twistarena.v1 import match_pb2

from ..sdk import AgentError, MatchResult
from ..sdk.convert import struct_to_dict
from ..terminal import make_console, safe
from .match import add_server_args, client_from, fail, result_table, seat_names


def register(sub: Any) -> None:
    parser = sub.add_parser("replay", help="re-simulate a match and verify its result")
    add_server_args(parser)
    parser.add_argument("match_id")
    parser.add_argument("--quiet", action="store_true", help="no narration, only the check")
    parser.add_argument("--json", action="store_true", help="print the check as one JSON line")
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
    console = make_console()
    try:
        replay = asyncio.run(client_from(args).get_replay(args.match_id))
    except AgentError as error:
        return fail(console, error)
    check = verify(replay)
    if args.json:
        print(json.dumps(check.to_json()))
        return 0 if check.ok else 1
    match = replay.match
    if not args.quiet:
        console.rule(f"Replay of {match.match_id}: {match.options.game_id}, "
                     f"{match.options.num_players} players, seed {match.seed}, "
                     f"{len(replay.actions)} actions")
        for line in check.lines:
            console.print(safe(line, lines=True), highlight=False)
        if check.scores:
            console.print(result_table(
                MatchResult(tuple(check.scores), tuple(check.places),
                            tuple(s for s, p in enumerate(check.places) if p == 1),
                            "COMPLETED"), seat_names(match), "Replayed result",
                missed=[sum(a.timeout for a in replay.actions if a.seat == seat)
                        for seat in range(match.options.num_players)]))
    if check.ok:
        console.print(f"[green]OK[/green]: the replay reproduces the recorded result "
                      f"(scores {list(check.recorded.scores)}, places "
                      f"{list(check.recorded.places)})", highlight=False)
        return 0
    for problem in check.problems:
        console.print(f"[red]MISMATCH[/red]: {problem}", highlight=False)
    return 1
