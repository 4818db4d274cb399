"""Start a program under resource limits: ``python -m twistarena.clients.bridge.limited
--cpu S --memory-bytes B --open-files N -- PROGRAM ARGS``.

The limits are set in this small process, which then replaces itself with the
program (``execvp``), so they bind the program and everything it starts. This
is done here rather than in a ``preexec_fn``: running Python code between fork
and exec in the bridge's process, which has gRPC's threads, can crash the
child before the program ever starts.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys


def main(argv: list[str] | None = None) -> None:
    """Set the limits (0 leaves that kind unlimited) and exec the program."""
    parser = argparse.ArgumentParser(prog="twistarena.clients.bridge.limited")
    parser.add_argument("--cpu", type=int, default=0, help="CPU seconds")
    parser.add_argument("--memory-bytes", type=int, default=0, help="address space")
    parser.add_argument("--open-files", type=int, default=0, help="open file descriptors")
    parser.add_argument("program", nargs=argparse.REMAINDER, help="-- PROGRAM ARGS")
    args = parser.parse_args(argv)
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        parser.error("no program given")
    for kind, value in ((resource.RLIMIT_CPU, args.cpu),
                        (resource.RLIMIT_AS, args.memory_bytes),
                        (resource.RLIMIT_NOFILE, args.open_files)):
        if value:
            resource.setrlimit(kind, (value, value))
    os.execvp(program[0], program)


if __name__ == "__main__":
    main(sys.argv[1:])
