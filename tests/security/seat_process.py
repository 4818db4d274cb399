"""Play one seat of a match with a program in the sandbox, from a process of its own,
and print what happened as one JSON line: how the hostile suite runs the bridge as
another user (the packaged image's uid) when the tests run as root.

``python seat_process.py JSON`` with server, match_id, token, argv, code_dir, limits
and name; prints {"reason": ..., "stats": {field: value}} (stderr_tail as latin-1, without the
per-decision logs).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys

from twistarena.bridge import ProgramBot, play_bridged
from twistarena.sandbox import SandboxLimits


def main() -> None:
    args = json.loads(sys.argv[1])
    bot = ProgramBot(args["argv"], sandbox="bwrap", code_dir=args["code_dir"],
                     limits=SandboxLimits(**args["limits"]), name=args["name"])
    result = asyncio.run(play_bridged(bot, server=args["server"], match_id=args["match_id"],
                                      token=args["token"], no_events=True))
    # The counts the tests read; the per-decision logs stay in this process.
    stats = {f.name: getattr(bot.stats, f.name) for f in dataclasses.fields(bot.stats)
             if f.name != "decision_logs"}
    stats["stderr_tail"] = bytes(bot.stats.stderr_tail).decode("latin-1")
    print(json.dumps({"reason": result.reason, "stats": stats}), flush=True)


if __name__ == "__main__":
    main()
