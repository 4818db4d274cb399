"""The runner's cache of versions: each archive fetched once, checked against its
content hash, unpacked into a directory named by that hash.

A version never changes (its hash is its content), so a directory that is
complete is good for every seat that plays it, on any match, for good. The
directory is made complete atomically (unpacked beside it, then renamed), so
a runner killed while unpacking leaves no half version behind. Unpacking
checks the archive as the server did (``twistarena.wire.archives``: nothing
may leave the directory); the caps are the server's business, so the runner's
are wide.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

from twistarena.wire.archives import MIB, ArchiveRefused, Caps, extract

#: Archives are read fully into memory: the server caps them (10 MiB packed).
Fetch = Callable[[], Awaitable[bytes]]
#: What a runner unpacks at most (a server may set caps above the defaults).
RUNNER_CAPS = Caps(packed=256 * MIB, unpacked=2048 * MIB, files=100_000)


class CacheError(Exception):
    """An archive that does not match its hash or cannot be unpacked safely."""


def content_hash(data: bytes) -> str:
    """What a version's archive is named by: its SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def _is_hash(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


class VersionCache:
    """Versions unpacked under ``root/<content hash>/``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        # Only the runner's user may look inside (a program never sees it: the
        # sandbox shows it its own version's directory only).
        os.chmod(self.root, 0o700)
        self._locks: dict[str, asyncio.Lock] = {}

    def path(self, digest: str) -> Path:
        """Where the version with this archive hash is (or will be) unpacked."""
        if not _is_hash(digest):
            raise CacheError(f"not a content hash: {digest[:80]!r}")
        return self.root / digest

    def has(self, digest: str) -> bool:
        """Whether the version is unpacked here already."""
        return self.path(digest).is_dir()

    async def ensure(self, digest: str, fetch: Fetch) -> Path:
        """The version's directory, fetching and unpacking it first if needed."""
        target = self.path(digest)
        lock = self._locks.setdefault(digest, asyncio.Lock())
        async with lock:
            if target.is_dir():
                return target
            data = await fetch()
            if content_hash(data) != digest:
                raise CacheError(f"the archive fetched for {digest[:12]} has another hash")
            staging = self.root / f".{digest}.{os.getpid()}.partial"
            shutil.rmtree(staging, ignore_errors=True)
            try:
                try:
                    await asyncio.to_thread(extract, data, staging, RUNNER_CAPS)
                except ArchiveRefused as error:
                    raise CacheError(f"version {digest[:12]}: {error}") from None
                try:
                    os.replace(staging, target)
                except OSError:
                    # Another runner sharing this cache unpacked it first.
                    if not target.is_dir():
                        raise
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        return target
