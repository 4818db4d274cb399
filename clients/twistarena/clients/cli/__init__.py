"""The ``twistarena`` command. Each subcommand lives in its own module here and
exposes ``register(subparsers)``; this file only wires them together. The flags
several commands share are declared in ``options``, and every command runs
through ``command.run``, which maps its errors to the one set of exit statuses."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .command import EXIT_STATUS, run
from .options import CommandParser

#: Subcommand modules, in the order ``--help`` lists them.
COMMANDS = ("demo", "serve", "cluster", "match", "bot", "watch", "replay", "practice", "queue",
            "agent", "submit", "tournament", "arena", "runner", "evaluate", "web", "loadtest",
            "soak", "bench", "chaos")


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="twistarena",
        description="Bots in any language play Tricky Twist, Twisted and Twhist over gRPC.",
        epilog=EXIT_STATUS,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=CommandParser)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
