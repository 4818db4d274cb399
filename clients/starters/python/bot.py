#!/usr/bin/env python3
"""A starter bot for the twistarena bridge: the house's ISMCTS search, ready to improve.

The bridge runs this program for one seat and talks to it over stdin/stdout, one
JSON message per line (docs/bots.md); every decision is answered with the id of
the chosen action on one line. The search samples full states consistent with
what the seat was sent (``twistarena.engine.sample_state``) and simulates from
them, so it needs the twistarena package (``pip install -e .`` of this repo).

    twistarena bot --server HOST:PORT --match ID --token TOKEN \\
        --exec "python3 clients/starters/python/bot.py ismcts"

The argument is a house strategy (default ``ismcts``; ``ismcts-fast`` and
``ismcts-strong`` trade strength for time). Start improving it in
``twistarena/bots/ismcts.py``: the rollout policy and the reward are the usual
first places.
"""

from __future__ import annotations

import json
import sys

from twistarena.bots import STRATEGIES, Bot, make_bot
from twistarena.engine import Action


def main() -> int:
    strategy = sys.argv[1] if len(sys.argv) > 1 else "ismcts"
    if strategy not in STRATEGIES:
        print(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}", file=sys.stderr)
        return 2
    bot: Bot | None = None
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("type") == "over":
            break
        if message.get("type") != "decision":
            continue
        if bot is None:  # the game and its options are known from the first decision
            bot = make_bot(strategy, message["game"], seed=message["seat"],
                           options=message.get("game_options"))
        legal = [Action(a["id"], a["label"], a["payload"]) for a in message["legal_actions"]]
        print(bot(message["observation"], legal), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
