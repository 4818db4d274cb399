"""The runner's cache of versions: each archive fetched once, checked against its
content hash, unpacked into a directory named by that hash.

A version never changes (its hash is its content), so a directory that is
complete is good for every seat that plays it, on any match, for good. The
directory is made complete atomically (unpacked beside it, then renamed), so
a runner killed while unpacking leaves no half version behind. Unpacking
checks the archive as the server did (``twistarena.hosted.archives``: nothing
may leave the directory); the caps are the server's business, so the runner's
are wide.

The cache is bounded (``max_bytes``, ``runner --cache-max-mb``): once a new
version takes it over, the versions used least recently are removed, except
those a seat is playing right now (a version is held by the task that asked
for it, until that task ends). Its size, cap and removals are the runner's
``twistarena_runner_cache_*`` metrics (``runner --metrics-port``) and
``runner_cache_*`` log events. A directory's modification time is its last
use, so a restarted runner keeps the order.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import structlog
from prometheus_client import Counter, Gauge
from twistarena.hosted.archives import MIB, ArchiveRefused, Caps, extract

log = structlog.get_logger("twistarena.runner")

#: Archives are read fully into memory: the server caps them (10 MiB packed).
Fetch = Callable[[], Awaitable[bytes]]
#: What a runner unpacks at most (a server may set caps above the defaults).
RUNNER_CAPS = Caps(packed=256 * MIB, unpacked=2048 * MIB, files=100_000)
#: The default bound of a runner's cache (``runner --cache-max-mb``): forty
#: versions at the server's default cap of 50 MiB unpacked.
DEFAULT_MAX_BYTES = 2048 * MIB

CACHE_BYTES = Gauge("twistarena_runner_cache_bytes",
                    "Bytes of the unpacked versions in the runner's cache")
CACHE_MAX_BYTES = Gauge("twistarena_runner_cache_max_bytes",
                        "The bound of the runner's cache (runner --cache-max-mb)")
CACHE_VERSIONS = Gauge("twistarena_runner_cache_versions",
                       "Versions unpacked in the runner's cache")
CACHE_EVICTIONS = Counter("twistarena_runner_cache_evictions",
                          "Versions removed from the runner's cache to stay within its bound")


class CacheError(Exception):
    """An archive that does not match its hash or cannot be unpacked safely."""


def content_hash(data: bytes) -> str:
    """What a version's archive is named by: its SHA-256, hex."""
    return hashlib.sha256(data).hexdigest()


def _is_hash(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def disk_bytes(path: Path) -> int:
    """What a directory takes on disk, itself included (allocated blocks, links not
    followed)."""
    total = 0
    with contextlib.suppress(OSError):
        total = os.lstat(path).st_blocks * 512
    for folder, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


class VersionCache:
    """Versions unpacked under ``root/<content hash>/``, at most ``max_bytes`` of
    them (the one being added and those being played may go over it)."""

    def __init__(self, root: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        # Only the runner's user may look inside (a program never sees it: the
        # sandbox shows it its own version's directory only).
        os.chmod(self.root, 0o700)
        self.max_bytes = max_bytes
        self._locks: dict[str, asyncio.Lock] = {}
        #: Each version's bytes on disk (read once at start for what was there).
        self.sizes: dict[str, int] = {
            entry.name: disk_bytes(entry) for entry in self.root.iterdir()
            if _is_hash(entry.name) and entry.is_dir()}
        #: The tasks playing each version now: it is not removed while one runs.
        self._holders: dict[str, set[asyncio.Task[Any]]] = {}
        self._report()

    @property
    def total_bytes(self) -> int:
        """Bytes of every version in the cache."""
        return sum(self.sizes.values())

    def _report(self) -> None:
        CACHE_BYTES.set(self.total_bytes)
        CACHE_MAX_BYTES.set(self.max_bytes)
        CACHE_VERSIONS.set(len(self.sizes))

    def _hold(self, digest: str) -> None:
        """The calling task holds the version until it ends."""
        task = asyncio.current_task()
        if task is None:
            return
        holders = self._holders.setdefault(digest, set())
        if task not in holders:
            holders.add(task)
            task.add_done_callback(lambda done: self._release(digest, done))

    def _release(self, digest: str, task: asyncio.Task[Any]) -> None:
        holders = self._holders.get(digest)
        if holders is not None:
            holders.discard(task)
            if not holders:
                del self._holders[digest]

    def _touch(self, digest: str) -> None:
        """Mark the version used now (its directory's time is its place in the LRU)."""
        with contextlib.suppress(OSError):
            os.utime(self.path(digest))

    def evict(self, keep: str = "") -> None:
        """Remove the least recently used versions nobody plays (nor ``keep``) until
        the cache is within its bound."""
        if self.total_bytes <= self.max_bytes:
            self._report()
            return
        idle = [d for d in self.sizes if d != keep and d not in self._holders]
        idle.sort(key=lambda d: _mtime(self.path(d)))
        for digest in idle:
            if self.total_bytes <= self.max_bytes:
                break
            freed = self.sizes.pop(digest)
            # Renamed first: a directory half removed is never taken for a version.
            doomed = self.root / f".{digest}.{os.getpid()}.evicted"
            with contextlib.suppress(OSError):
                os.replace(self.path(digest), doomed)
            shutil.rmtree(doomed, ignore_errors=True)
            CACHE_EVICTIONS.inc()
            log.info("runner_cache_evicted", version=digest[:12], bytes=freed,
                     cache_bytes=self.total_bytes, max_bytes=self.max_bytes)
        if self.total_bytes > self.max_bytes:
            log.warning("runner_cache_over_bound", cache_bytes=self.total_bytes,
                        max_bytes=self.max_bytes, playing=len(self._holders))
        self._report()

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
        self._hold(digest)
        lock = self._locks.setdefault(digest, asyncio.Lock())
        async with lock:
            if target.is_dir():
                self._touch(digest)
                if digest not in self.sizes:  # another runner sharing the directory
                    self.sizes[digest] = await asyncio.to_thread(disk_bytes, target)
                    self.evict(keep=digest)
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
                size = await asyncio.to_thread(disk_bytes, staging)
                try:
                    os.replace(staging, target)
                except OSError:
                    # Another runner sharing this cache unpacked it first.
                    if not target.is_dir():
                        raise
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            self.sizes[digest] = size
            log.info("runner_cache_added", version=digest[:12], bytes=size,
                     cache_bytes=self.total_bytes, max_bytes=self.max_bytes)
            self.evict(keep=digest)
        return target


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
