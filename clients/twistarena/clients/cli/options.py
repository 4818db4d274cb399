"""The flags several commands take, each declared once here, so that a flag means
the same thing, with the same default and help, in every command.

``add_connection_args`` is the group of every command that talks to a server
(``--server``, ``--root-cert``, ``--tls``, ``-v``); ``add_admin_token``,
``add_api_token`` and ``add_json`` are the rest; ``add_flag_table`` declares a
group of a command's own flags that share their shape from one table. ``CommandParser`` lets a
command declare flags that need a heavy import (the tools) only when that
command is parsed, so that ``twistarena --help`` and the other commands do not
load them.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

SERVER_ENV = "TWISTARENA_SERVER"
API_TOKEN_ENV = "TWISTARENA_API_TOKEN"
DEFAULT_SERVER = os.environ.get(SERVER_ENV, "127.0.0.1:50051")

#: What ``--json`` means in every command that has it.
JSON_HELP = "print machine-readable JSON on stdout instead of the table or text (tables, " \
            "progress and errors go to stderr)"
#: ``--admin-token``'s help where the command sends it to a server.
ADMIN_TOKEN_HELP = "the server's admin token (default: $TWISTARENA_ADMIN_TOKEN, else the " \
                   "token a serve on this machine published for the --server port)"


class CommandParser(argparse.ArgumentParser):
    """The parser of the ``twistarena`` command and of each subcommand. A command's
    description (its module's docstring) is printed as written. Part of the
    declaration can wait (``defer``) until the parser is used: the tool commands
    import the tools only then."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self._deferred: list[Callable[[argparse.ArgumentParser], None]] = []

    def defer(self, declare: Callable[[argparse.ArgumentParser], None]) -> None:
        """Run ``declare(self)`` the first time this parser is used."""
        self._deferred.append(declare)

    def _declare_deferred(self) -> None:
        while self._deferred:
            self._deferred.pop(0)(self)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._declare_deferred()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._declare_deferred()
        return super().format_help()


def add_actions(sub: Any, name: str, helptext: str, description: str | None = None) -> Any:
    """A command made of actions (``match create``, ``agent show``...): the
    subparsers its actions are added to."""
    parser = sub.add_parser(name, help=helptext, description=description)
    return parser.add_subparsers(dest="action", required=True, metavar="ACTION")


def add_cancel(actions: Any, what: str, helptext: str) -> argparse.ArgumentParser:
    """``cancel ID [--reason TEXT]``: the admin call that ends a match or a tournament."""
    cancel: argparse.ArgumentParser = actions.add_parser("cancel", help=helptext)
    add_connection_args(cancel)
    cancel.add_argument(f"{what}_id")
    cancel.add_argument("--reason", default="")
    add_admin_token(cancel)
    return cancel


def add_connection_args(parser: argparse.ArgumentParser, *, verbose: bool = True) -> None:
    """``--server``, ``--root-cert``, ``--tls`` and ``-v``: how a command reaches the
    server(s), and whether it logs the connection's events (``verbose=False``: a
    command with logs of its own leaves ``-v`` out)."""
    group = parser.add_argument_group("connection")
    group.add_argument("--server", default=DEFAULT_SERVER,
                       help="HOST:PORT[,HOST:PORT...] tried in turn "
                            f"(default: ${SERVER_ENV} or %(default)s)")
    group.add_argument("--root-cert", metavar="PEM", default=None,
                       help="use TLS, trusting this root certificate")
    group.add_argument("--tls", action="store_true", help="use TLS with the system roots")
    if verbose:
        group.add_argument("-v", "--verbose", action="store_true",
                           help="log connection events")


def add_admin_token(parser: argparse.ArgumentParser | Any, helptext: str = ADMIN_TOKEN_HELP
                    ) -> None:
    """``--admin-token`` (a parser or an argument group). Its default is None in every
    command: a command that sends it looks it up with ``admintoken.from_args``."""
    parser.add_argument("--admin-token", default=None, help=helptext)


def add_api_token(parser: argparse.ArgumentParser,
                  helptext: str = f"the agent's api token (default: ${API_TOKEN_ENV})") -> None:
    """``--api-token``: an agent's own token, default ``$TWISTARENA_API_TOKEN``."""
    parser.add_argument("--api-token", default=os.environ.get(API_TOKEN_ENV), help=helptext)


def add_players(parser: argparse.ArgumentParser | Any) -> None:
    """``--players``: seats per match; 0 (the default) is the game's smallest table."""
    parser.add_argument("--players", type=int, default=0,
                        help="seats per match (default: the game's smallest table)")


def add_json(parser: argparse.ArgumentParser, shape: str = "") -> None:
    """``--json``, with its one meaning (``JSON_HELP``) and the shape of what it prints."""
    parser.add_argument("--json", action="store_true",
                        help=f"{JSON_HELP}{': ' + shape if shape else ''}")


#: A row of ``add_flag_table``: the flag, what it sets apart from the group's shared
#: options (its type, default, metavar...), and its help.
FlagRow = tuple[str, Mapping[str, Any], str]


def add_flag_table(parser: argparse.ArgumentParser | Any, rows: Iterable[FlagRow], *,
                   note: str = "", **shared: Any) -> None:
    """Declare a group of flags that differ only in name, help and a few options: each
    row's flag gets ``shared`` overridden by the row's own options, and its help ends
    with ``note`` (what the whole group says of its defaults). One table reads as the
    list of knobs it is, and a new knob cannot miss the group's shared shape."""
    for flag, options, helptext in rows:
        parser.add_argument(flag, help=helptext + note, **{**shared, **options})
