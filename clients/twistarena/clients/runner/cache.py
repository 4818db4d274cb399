"""The runner's cache of versions: each archive fetched once, checked against its
content hash, unpacked into a directory named by that hash.

A version never changes (its hash is its content), so a directory that is
complete is good for every seat that plays it, on any match, for good. The
directory is made complete atomically (unpacked beside it, then renamed), so
a runner killed while unpacking leaves no half version behind. Unpacking
refuses what an archive could use to escape its directory (absolute paths,
``..``, links out of it, device files): ``tarfile``'s ``data`` filter, and the
same checks for zip files.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import shutil
import tarfile
import zipfile
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath

#: Archives are read fully into memory: the server caps them (10 MiB packed).
Fetch = Callable[[], Awaitable[bytes]]


class CacheError(Exception):
    """An archive that does not match its hash or cannot be unpacked safely."""


def content_hash(data: bytes) -> str:
    """What a version's archive is named by: its SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def _is_hash(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def unpack(data: bytes, into: Path) -> None:
    """Unpack a .tar(.gz) or .zip archive into ``into`` (which must not exist)."""
    into.mkdir(parents=True)
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                name = PurePosixPath(info.filename)
                if name.is_absolute() or ".." in name.parts:
                    raise CacheError(f"the archive names a path outside it: {info.filename!r}")
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    raise CacheError(f"the archive holds a symbolic link: {info.filename!r}")
            archive.extractall(into)
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
            archive.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as error:
        raise CacheError(f"cannot unpack the archive: {error}") from None


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
                await asyncio.to_thread(unpack, data, staging)
                try:
                    os.replace(staging, target)
                except OSError:
                    # Another runner sharing this cache unpacked it first.
                    if not target.is_dir():
                        raise
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        return target
