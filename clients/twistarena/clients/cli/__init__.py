"""The ``twistarena`` command. Each subcommand lives in its own module here and
exposes ``register(subparsers)``; this file only wires them together."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Subcommand modules, in the order ``--help`` lists them.
COMMANDS = ("demo", "serve", "cluster", "match", "bot", "watch", "replay", "practice", "queue",
            "agent", "submit", "tournament", "arena", "runner", "evaluate", "web", "loadtest",
            "soak", "bench", "chaos")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="twistarena",
        description="Bots in any language play Tricky Twist, Twisted and Twhist over gRPC.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
