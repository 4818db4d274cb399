"""The admin token of a ``serve`` on this machine: made up once, kept in a file
only its user reads, and found again by the commands that need it.

A ``serve`` started without ``--admin-token`` (or ``$TWISTARENA_ADMIN_TOKEN``) is
never open: it makes up a token on its first start and keeps it, mode 0600, as
``admin-token`` in its ``--data-dir`` (the same token after a restart), and for
the commands on the same machine as ``admin-token-PORT`` in a directory of its
user's own (``$TWISTARENA_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/twistarena``,
else ``/tmp/twistarena-UID``; mode 0700). A command given ``--server`` on this
machine and no token reads that file: what a user can read there, the user may
do. A server on another machine never gets it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ENV = "TWISTARENA_ADMIN_TOKEN"
RUNTIME_ENV = "TWISTARENA_RUNTIME_DIR"
#: The file of a data directory that keeps its server's admin token.
DATA_DIR_FILE = "admin-token"
#: Hosts a command reaches on this machine (only these get the local token).
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "",
                         "ip6-localhost"})


def runtime_dir() -> Path:
    """The per-user directory of the local servers' token files."""
    given = os.environ.get(RUNTIME_ENV)
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "twistarena"
    return Path(tempfile.gettempdir()) / f"twistarena-{os.getuid()}"


def _private_dir(path: Path) -> Path:
    """``path`` made (0700) or checked: a directory of this user's that nobody
    else may write (a shared /tmp could hold someone else's, or a link)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() \
            or info.st_mode & 0o022:
        raise PermissionError(f"{path} is not a private directory of this user")
    return path


def read_secret(path: Path) -> str | None:
    """The secret in ``path``, or None when there is none."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return text or None


def server_token(data_dir: Path | None) -> str:
    """The admin token of a ``serve`` given none: its data directory's, or new."""
    from .servers import kept_secret

    return kept_secret(data_dir, DATA_DIR_FILE, "adm_")


def local_path(port: int | str) -> Path:
    """Where the commands of this machine find the token of the server on ``port``."""
    return runtime_dir() / f"admin-token-{port}"


def publish(port: int | str, token: str) -> Path:
    """Leave the token where the commands of this machine look for it."""
    from .servers import write_secret

    path = local_path(port)
    _private_dir(path.parent)
    write_secret(path, token)
    return path


def unpublish(port: int | str, token: str) -> None:
    """Remove the published token (only if it is still this server's)."""
    path = local_path(port)
    if read_secret(path) == token:
        with contextlib.suppress(OSError):
            path.unlink()


def admin_token(given: str | None, server: str) -> str | None:
    """The admin token a command sends: ``given``, ``$TWISTARENA_ADMIN_TOKEN``, or the
    token a ``serve`` on this machine published for the port of ``server``."""
    if given:
        return given
    if os.environ.get(ENV):
        return os.environ[ENV]
    host, _, port = server.split(",")[0].strip().rpartition(":")
    if host.strip("[]").lower() not in LOCAL_HOSTS or not port.isdigit():
        return None
    return read_secret(local_path(port))


def from_args(args: argparse.Namespace) -> str | None:
    """The admin token of a command: its ``--admin-token`` (or the local lookup
    above) when it has that flag; else only ``$TWISTARENA_ADMIN_TOKEN``."""
    if not hasattr(args, "admin_token"):
        return os.environ.get(ENV) or None
    return admin_token(args.admin_token, str(getattr(args, "server", "")))


def for_serve(given: str | None, data_dir: Path | None, open_local: bool
              ) -> tuple[str | None, bool]:
    """The admin token a ``serve`` runs with, and whether it made it up (and so
    publishes it): the given one, none with ``--open-local-admin``, else its own."""
    given = given or os.environ.get(ENV)
    if given:
        return given, False
    if open_local:
        return None, False
    return server_token(data_dir), True


@contextlib.contextmanager
def published(port: int | str, token: str, data_dir: Path | None) -> Iterator[Path | None]:
    """The made-up token published for this machine's commands while the server
    runs; says where it is (never the token itself)."""
    from .servers import write_line

    kept = f" (kept in {data_dir / DATA_DIR_FILE})" if data_dir is not None else ""
    try:
        path = publish(port, token)
    except OSError as error:
        # Someone else's directory in a shared /tmp: serve on, without the lookup.
        write_line(f"admin token not published ({error}){kept}: give commands "
                   f"--admin-token or ${ENV}", sys.stderr)
        yield None
        return
    write_line(f"admin token in {path}{kept}: commands on this machine read it")
    try:
        yield path
    finally:
        unpublish(port, token)
