"""What every command shares when it runs: its exit status, how an error is
shown, the client it talks to the server with, and its JSON output.

Exit status, the same for every command (``twistarena --help`` prints it):

  0  done
  1  the command ran and its outcome is a failure: a replay that does not
     reproduce its record, a bot that answered none of its decisions, a
     cancelled tournament, a load or soak run with no match completed, a chaos
     campaign with a violation
  2  nothing was done as asked: flags that do not go together, a missing
     token, a program or sandbox that cannot start, or the server refused (one
     line ``error: ...`` on stderr with the gRPC status and the reason)
  3  ``loadtest``: a ``--threshold`` failed

A command raises ``AgentError`` (from the SDK, or its own for what it refuses
itself) or ``CommandError``; ``run`` turns either into that line and status 2,
so no command catches them itself.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, TypeVar

from ..sdk import AgentError
from ..sdk.localbots import configure_logging
from ..terminal import make_console, safe
from . import admintoken

#: The exit statuses above.
DONE, FAILED, REFUSED, THRESHOLD_FAILED = 0, 1, 2, 3

#: ``twistarena --help``'s epilog: the statuses above, and the one meaning of --json.
EXIT_STATUS = """exit status (every command):
  0  done
  1  the command ran and its outcome is a failure: a replay that does not match,
     a bot that answered none of its decisions, a cancelled tournament, a load or
     soak run with no match completed, a chaos violation
  2  nothing was done as asked: bad flags, a missing token, a program or sandbox
     that cannot start, or the server refused (one line "error: ..." on stderr)
  3  loadtest: a --threshold failed

--json, in every command that has it: machine-readable JSON on stdout instead of
the table or text; tables, progress and errors go to stderr."""

Client = TypeVar("Client")


class CommandError(Exception):
    """What a command was asked cannot be done as given (flags that do not go
    together, a file that is not there): status 2, like a refusal."""


def fail(error: BaseException) -> int:
    """Say what went wrong in one line on stderr; the status of a refusal."""
    make_console(stderr=True).print(f"[red]error:[/red] {safe(str(error), lines=True)}",
                                    highlight=False)
    return REFUSED


def run(args: argparse.Namespace) -> int:
    """Run the command ``args`` names, mapping its errors to the statuses above."""
    try:
        code: int = args.run(args)
    except (AgentError, CommandError) as error:
        return fail(error)
    return code


def connect(client_class: Callable[..., Client], args: argparse.Namespace,
            **token: str | None) -> Client:
    """The client of a command's connection flags (logging set by its ``-v``). It
    sends ``token`` if given (e.g. ``api_token=...``), else the admin token
    (``admintoken.from_args``: the command's ``--admin-token``, the environment's, or
    a local serve's)."""
    configure_logging(args.verbose)
    if not token:
        token = {"admin_token": admintoken.from_args(args)}
    return client_class(args.server, root_cert=args.root_cert, tls=args.tls, **token)


def tls_of(args: argparse.Namespace) -> dict[str, Any]:
    """The TLS keywords of the SDK's calls, from a command's connection flags."""
    return {"root_cert": args.root_cert, "tls": args.tls}


def print_json(value: Any, *, indent: int | None = None) -> None:
    """One JSON document on stdout (flushed: a command may print one per match)."""
    print(json.dumps(value, indent=indent), flush=True)
