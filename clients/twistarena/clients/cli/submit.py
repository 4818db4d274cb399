"""``twistarena submit``: upload a new version of an agent for the arena to host.

PATH is a directory (packed deterministically: the same files give the same
archive, so the same version) or a .tar.gz/.zip sent as it is. ``--entry``
is the command that starts the program in its directory, e.g. "python3
bot.py". ``--build CMD`` first runs CMD once, here, in the sandbox, on a
writable copy of the directory (120 s, 2 GiB), and submits what it leaves,
with its output as the build log. The agent's first version becomes active
at once; later ones with ``--activate`` or ``twistarena agent activate``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn
from twistarena.hosted.archives import ArchiveRefused, archive_format, extract, pack_directory
from twistarena.sandbox import SandboxUnavailable, sandbox_mode
from twistarena.sandbox.builds import BuildFailed, build

from .agent import call, client_from, human_size, print_document, version_json
from .command import CommandError
from .options import add_api_token, add_connection_args, add_json


def register(sub: Any) -> None:
    parser = sub.add_parser("submit", help="upload a new version of an agent",
                            description=__doc__)
    add_connection_args(parser)
    add_api_token(parser)
    parser.add_argument("path", type=Path, metavar="PATH",
                        help="a directory, or a .tar.gz or .zip archive")
    parser.add_argument("--entry", required=True, metavar="CMD ARGS",
                        help="the command that starts the program in its directory")
    parser.add_argument("--build", default="", metavar="CMD",
                        help="build first, in the sandbox (120 s, 2 GiB): the directory "
                             "CMD leaves is the version")
    parser.add_argument("--sandbox", choices=("bwrap", "none"), default="bwrap",
                        help="where --build runs: bubblewrap (default) or, only if you "
                             "ask, bare on this machine")
    parser.add_argument("--activate", action="store_true",
                        help="make the new version the active one")
    add_json(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    async def work(console: Console) -> int:
        try:
            archive, log = await _archive(args, console)
        except (ArchiveRefused, BuildFailed, SandboxUnavailable, OSError) as error:
            if isinstance(error, BuildFailed) and error.log:
                console.rule("build log (end)")
                console.print(error.log[-4000:], highlight=False, markup=False)
            raise CommandError(str(error)) from error
        with Progress(TextColumn("upload"), BarColumn(), DownloadColumn(),
                      TransferSpeedColumn(), console=console, transient=True) as progress:
            task = progress.add_task("upload", total=len(archive))
            stored = await client_from(args).submit(
                archive, args.entry, build=args.build, build_log=log, activate=args.activate,
                progress=lambda sent: progress.update(task, completed=sent))
        version = stored.version
        if args.json:
            print_document({"created": stored.created, "version": version_json(version)})
            return 0
        what = "stored" if stored.created else "already stored (same content, entry, build)"
        console.print(f"version {version.version_id} {what}\n"
                      f"  {human_size(version.size)} packed, "
                      f"{human_size(version.unpacked_size)} unpacked, {version.files} files; "
                      f"content sha256 {version.content_hash}\n"
                      f"  {'active' if version.active else 'not active'}"
                      + ("" if version.active else
                         f" (twistarena agent activate {version.version_id[:12]})"),
                      highlight=False, soft_wrap=True)
        return 0

    return call(args, work)


async def _archive(args: argparse.Namespace, console: Console) -> tuple[bytes, str]:
    """The archive to upload and the build log ('' without --build)."""
    path: Path = args.path
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or directory")
    if not args.build:
        if path.is_dir():
            return await asyncio.to_thread(pack_directory, path), ""
        data = path.read_bytes()
        archive_format(data)  # refuse anything else before uploading it
        return data, ""
    mode = sandbox_mode(args.sandbox)
    with _source_dir(path) as source, console.status(f"building: {args.build}"):
        built = await build(source, args.build, mode)
    return built.archive, built.log


@contextlib.contextmanager
def _source_dir(path: Path) -> Iterator[Path]:
    """The directory to build from: ``path``, or an archive unpacked (checked) to a
    temporary one."""
    if path.is_dir():
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="twistarena-src-") as scratch:
        extract(path.read_bytes(), Path(scratch) / "src")
        yield Path(scratch) / "src"
