"""Two house strategies as network agents, on duplicate deals, against a running server.

    python -m twistarena.tools.duel --server 127.0.0.1:50051 \\
        --game twisted --players 2 --a ismcts --b heuristic --deals 10

Every deal (a match seed) is played once per rotation of the seats, each seat
by an SDK agent of strategy A or B, every seat but one B; the per-deal score
difference A - B (A's mean minus B's mean, summed over the rotations) is then
tested with a paired t-test and a sign test, as ``twistarena evaluate`` does
in-process. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from twistarena.clients.sdk import MatchClient
from twistarena.clients.sdk.localbots import run_agents, seat_agents
from twistarena.league.stats import paired_test


async def deal_difference(server: str, game: str, players: int, a: str, b: str,
                          seed: int) -> float:
    """A's score minus B's mean score on one deal, summed over every seat A takes."""
    client = MatchClient(server)
    total = 0.0
    for seat_a in range(players):
        strategies = [a if s == seat_a else b for s in range(players)]
        created = await client.create_match(game, players, seed=seed, decision_ms=60_000)
        result = await run_agents(seat_agents(server, created, strategies, seed=seed))
        others = [x for s, x in enumerate(result.scores) if s != seat_a]
        total += result.scores[seat_a] - sum(others) / len(others)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--game", default="twisted")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--a", default="ismcts")
    parser.add_argument("--b", default="heuristic")
    parser.add_argument("--deals", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    started = time.perf_counter()
    diffs = [asyncio.run(deal_difference(args.server, args.game, args.players, args.a, args.b,
                                         args.seed + d)) for d in range(args.deals)]
    test = paired_test(diffs, [0.0] * len(diffs))
    print(json.dumps({"game": args.game, "players": args.players, "a": args.a, "b": args.b,
                      "deals": test.n, "mean_diff": round(test.mean_diff, 3),
                      "ci": [round(test.ci_low, 3), round(test.ci_high, 3)],
                      "t_p": test.t_p, "sign_p": test.sign_p,
                      "deals_won_lost_tied": [test.wins, test.losses, test.ties],
                      "wall_seconds": round(time.perf_counter() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
