"""A hosted version's archive, the bytes of ``Hosting.SubmitVersion``: what it may
hold, checked alike where it arrives (the server, in memory) and where it is
unpacked (a runner), and the deterministic packing of a directory.

An archive is a .tar.gz or a .zip (told apart by their first bytes) of regular
files, directories and symlinks that stay inside it. Refused: absolute names,
``..``, backslashes, NULs and names that are not UTF-8, names longer than
``MAX_PATH`` bytes or with a part longer than ``MAX_PART`` (what every Linux
file system takes), names given twice, a name that is a file and also a
directory of another (``a`` and ``a/b``), device files and fifos, a symlink or
hardlink that leads outside or through another symlink, encrypted zip members,
and more files or unpacked bytes than the caps. Sizes are counted on the bytes
actually decompressed (a zip's declared sizes may lie) and the count stops at
the cap, so a bomb costs at most a cap's worth of work and memory.

``inspect`` is the server's check and ``extract`` the runner's unpack; the
second runs the first and then writes exactly the entries it listed, so an
archive the server accepts is one every runner unpacks.

A packed directory is the same bytes for the same files wherever zlib
compresses alike (sorted names, fixed times, owners and modes), so its
sha256 names the content: submitting it again gives the same version.
"""

from __future__ import annotations

import gzip
import io
import os
import posixpath
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, NoReturn

MIB = 1024 * 1024
#: The defaults of ``serve --version-max-packed-mb/--version-max-unpacked-mb/--version-max-files``.
DEFAULT_MAX_PACKED = 10 * MIB
DEFAULT_MAX_UNPACKED = 50 * MIB
DEFAULT_MAX_FILES = 2000
#: Decompressed in steps of this many bytes, each counted before the next.
CHUNK = 64 * 1024
#: Tar headers around the files (512 bytes each, long-name and pax records):
#: the decompressed stream may exceed the files' bytes by this much per entry.
HEADER_ALLOWANCE = 4096
#: Packed entries' modification time: 1980-01-01, the earliest a zip can hold.
FIXED_MTIME = 315532800

#: Longest member name, in UTF-8 bytes, and longest part of one (Linux's
#: NAME_MAX); well under PATH_MAX once a runner's cache directory is in front.
MAX_PATH = 1024
MAX_PART = 255

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


class ArchiveRefused(ValueError):
    """The archive is not one a version may be: the message says why."""


class ArchiveTooLarge(ArchiveRefused):
    """The archive exceeds a cap (packed bytes, unpacked bytes or files)."""


@dataclass(frozen=True, slots=True)
class Caps:
    """The limits on one version's archive."""

    packed: int = DEFAULT_MAX_PACKED
    unpacked: int = DEFAULT_MAX_UNPACKED
    files: int = DEFAULT_MAX_FILES


@dataclass(slots=True)
class Entry:
    """One member: its normalized name, kind, link target and size."""

    name: str
    kind: str  # "file", "dir", "symlink" or "hardlink"
    target: str = ""
    size: int = 0


@dataclass(slots=True)
class Summary:
    """What a valid archive holds."""

    format: str  # "tar.gz" or "zip"
    files: int
    unpacked: int
    entries: list[Entry] = field(default_factory=list)


def archive_format(data: bytes) -> str:
    """``tar.gz`` or ``zip`` from the first bytes; refused otherwise."""
    if data.startswith(GZIP_MAGIC):
        return "tar.gz"
    if data.startswith(ZIP_MAGICS):
        return "zip"
    raise ArchiveRefused("not a .tar.gz or .zip archive")


def inspect(data: bytes, caps: Caps = Caps()) -> Summary:
    """Check an archive against the rules and caps, without writing anything;
    raises ``ArchiveRefused`` (``ArchiveTooLarge`` for a cap)."""
    if len(data) > caps.packed:
        raise ArchiveTooLarge(f"the archive has {len(data)} bytes packed; the cap is "
                              f"{caps.packed}")
    fmt = archive_format(data)
    counter = _Counter(caps)
    try:
        for entry in (_tar_entries(data, caps, counter) if fmt == "tar.gz"
                      else _zip_entries(data, counter)):
            counter.add(entry)
    except ArchiveRefused:
        raise
    except Exception as exc:  # whatever a parser raises on bytes it cannot read
        raise ArchiveRefused(f"a damaged {fmt} archive ({type(exc).__name__}: {exc})") from exc
    _check_links(counter.entries)
    return Summary(fmt, counter.files, counter.unpacked, counter.entries)


def extract(data: bytes, dest: Path, caps: Caps = Caps()) -> Summary:
    """Check the archive (``inspect``), then unpack into the empty directory ``dest``
    (a runner's copy of a version) exactly the entries the check listed."""
    summary = inspect(data, caps)
    dest.mkdir(parents=True, exist_ok=True)
    kinds = {entry.name: entry for entry in summary.entries}
    for entry in summary.entries:
        if entry.kind == "dir":
            (dest / entry.name).mkdir(mode=0o755, parents=True, exist_ok=True)
    for name, source, executable in _regular_files(data, summary.format):
        if name not in kinds:
            continue  # the root, or a member the check did not list: never written
        path = dest / name
        path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as target:
            while chunk := source.read(CHUNK):
                target.write(chunk)
        path.chmod(0o755 if executable else 0o644)
    for entry in summary.entries:
        path = dest / entry.name
        if entry.kind in ("symlink", "hardlink"):
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        if entry.kind == "symlink":
            path.symlink_to(entry.target)
        elif entry.kind == "hardlink":
            os.link(dest / entry.target, path, follow_symlinks=False)
    return summary


def pack_directory(root: Path) -> bytes:
    """A deterministic .tar.gz of a directory: sorted names, fixed times, owner
    0, modes 0644/0755; symlinks kept as links. Other kinds of file are refused."""
    buffer = io.BytesIO()
    # mtime=0 and no file name: the gzip header is the same on every machine.
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, filename="") as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in _walk(root):
            name = path.relative_to(root).as_posix()
            info = tarfile.TarInfo(name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = FIXED_MTIME, 0, 0, "", ""
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, os.readlink(path), 0o777
                tar.addfile(info)
            elif stat.S_ISDIR(mode):
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif stat.S_ISREG(mode):
                info.size = path.stat().st_size
                info.mode = 0o755 if mode & 0o111 else 0o644
                with path.open("rb") as handle:
                    tar.addfile(info, handle)
            else:
                raise ArchiveRefused(f"{name}: not a regular file, directory or symlink")
    return buffer.getvalue()


# -- the checks -------------------------------------------------------------------


def _walk(root: Path) -> Iterator[Path]:
    """Every path under root, sorted, parents before children; links not followed."""
    for entry in sorted(root.iterdir(), key=lambda p: p.name):
        yield entry
        if entry.is_dir() and not entry.is_symlink():
            yield from _walk(entry)


def _shown(raw: str) -> str:
    """A member's name in a message: at most 60 characters of it."""
    return repr(raw) if len(raw) <= 60 else f"{raw[:60]!r}... ({len(raw)} characters)"


def _normalized(raw: str) -> str:
    """A member's name as a relative POSIX path; refused if it could leave the root
    or if a file system would refuse it."""
    if "\x00" in raw or "\\" in raw:
        raise ArchiveRefused(f"{_shown(raw)}: a name with a NUL or a backslash")
    if raw.startswith("/"):
        raise ArchiveRefused(f"{_shown(raw)}: an absolute path")
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveRefused(f"{_shown(raw)}: a path with '..'")
    name = "/".join(parts)
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        raise ArchiveRefused(f"{_shown(raw)}: a name that is not UTF-8") from None
    if len(encoded) > MAX_PATH:
        raise ArchiveRefused(f"{_shown(raw)}: a name longer than {MAX_PATH} bytes")
    if any(len(part.encode("utf-8")) > MAX_PART for part in parts):
        raise ArchiveRefused(f"{_shown(raw)}: a name with a part longer than "
                             f"{MAX_PART} bytes")
    return name


def _clash(name: str, kind: str, child: str) -> NoReturn:
    """Refuse a name that is both a directory of ``child`` and not a directory."""
    if kind == "symlink":
        raise ArchiveRefused(f"{child}: a path through the symlink {_shown(name)}")
    raise ArchiveRefused(f"{_shown(name)} is a {kind} and also the directory of {child}")


class _Counter:
    """Counts files and decompressed bytes against the caps, entry by entry."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.files = 0
        self.dirs = 0
        self.unpacked = 0
        self.entries: list[Entry] = []
        #: Every name's kind, and the directories the names imply (their parents).
        self.kinds: dict[str, str] = {}
        self.parents: set[str] = set()

    def add(self, entry: Entry) -> None:
        """Count one entry (its bytes were counted as they were read)."""
        if not entry.name:
            return  # the root itself ("." or "./")
        if entry.name in self.kinds:
            raise ArchiveRefused(f"{_shown(entry.name)} is in the archive twice")
        if entry.kind != "dir" and entry.name in self.parents:
            _clash(entry.name, entry.kind, "another member")
        parent = posixpath.dirname(entry.name)
        while parent and parent not in self.parents:
            if self.kinds.get(parent, "dir") != "dir":
                _clash(parent, self.kinds[parent], _shown(entry.name))
            self.parents.add(parent)
            parent = posixpath.dirname(parent)
        self.kinds[entry.name] = entry.kind
        if entry.kind == "dir":
            self.dirs += 1
        else:
            self.files += 1
        if self.files > self.caps.files or self.dirs > self.caps.files:
            raise ArchiveTooLarge(f"the archive has more than {self.caps.files} files")
        self.entries.append(entry)

    def read(self, stream: IO[bytes], name: str) -> int:
        """Decompress a member to its end, counting; returns its size."""
        size = 0
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            self.unpacked += len(chunk)
            if self.unpacked > self.caps.unpacked:
                raise ArchiveTooLarge(f"the archive unpacks to more than "
                                      f"{self.caps.unpacked} bytes (at {name!r})")
        return size


class _Bounded(io.RawIOBase):
    """A decompressed stream that refuses to give more than ``limit`` bytes, so
    that no header (a pax record, a long name) can make tarfile read a bomb."""

    def __init__(self, inner: gzip.GzipFile, limit: int) -> None:
        self.inner = inner
        self.left = limit

    def readable(self) -> bool:
        """It is."""
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        """Read at most what is left of the limit; past it, refuse."""
        want = min(len(buffer), CHUNK)
        if self.left <= 0:
            raise ArchiveTooLarge("the archive unpacks to more than its caps allow")
        data = self.inner.read(min(want, self.left + 1))
        self.left -= len(data)
        if self.left < 0:
            raise ArchiveTooLarge("the archive unpacks to more than its caps allow")
        buffer[:len(data)] = data
        return len(data)


def _tar_entries(data: bytes, caps: Caps, counter: _Counter) -> Iterator[Entry]:
    limit = caps.unpacked + HEADER_ALLOWANCE * 2 * (caps.files + 1)
    stream = io.BufferedReader(_Bounded(gzip.GzipFile(fileobj=io.BytesIO(data)), limit))
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            name = _normalized(member.name)
            if member.isreg():
                handle = tar.extractfile(member)
                assert handle is not None
                yield Entry(name, "file", size=counter.read(handle, name))
            elif member.isdir():
                yield Entry(name, "dir")
            elif member.issym():
                yield Entry(name, "symlink", member.linkname)
            elif member.islnk():
                yield Entry(name, "hardlink", _normalized(member.linkname))
            else:
                raise ArchiveRefused(f"{name!r}: a device file or fifo")


def _zip_entries(data: bytes, counter: _Counter) -> Iterator[Entry]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        if len(infos) > 2 * counter.caps.files:
            raise ArchiveTooLarge(f"the archive has more than {counter.caps.files} files")
        for info in infos:
            name = _normalized(info.filename)
            if info.flag_bits & 0x1:
                raise ArchiveRefused(f"{name!r}: an encrypted member")
            kind = stat.S_IFMT(info.external_attr >> 16)
            if info.is_dir():
                yield Entry(name, "dir")
            elif kind == stat.S_IFLNK:
                with archive.open(info) as handle:
                    target = handle.read(4096).decode("utf-8", "replace")
                yield Entry(name, "symlink", target)
            elif kind in (0, stat.S_IFREG):
                with archive.open(info) as handle:
                    yield Entry(name, "file", size=counter.read(handle, name))
            else:
                raise ArchiveRefused(f"{name!r}: a device file or fifo")


def _check_links(entries: list[Entry]) -> None:
    """Every link leads to a place inside the archive, through real directories
    only (so resolving it by its text is resolving it for real), and no member
    sits below a symlink."""
    kinds = {e.name: e.kind for e in entries}
    for entry in entries:
        parent = posixpath.dirname(entry.name)
        _through_directories(entry.name, entry.name.split("/"), kinds)
        if entry.kind == "symlink":
            if entry.target.startswith("/") or not entry.target:
                raise ArchiveRefused(f"{entry.name!r}: a symlink to an absolute path")
            _through_directories(entry.name, [*(parent.split("/") if parent else []),
                                              *entry.target.split("/")], kinds)
        elif entry.kind == "hardlink" and kinds.get(entry.target) != "file":
            raise ArchiveRefused(f"{entry.name!r}: a hardlink to something other than a "
                                 "file of the archive")


def _through_directories(name: str, parts: list[str], kinds: dict[str, str]) -> None:
    """Walk ``parts`` from the root: refused if it climbs above the root or goes
    through a symlink of the archive."""
    stack: list[str] = []
    for i, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                raise ArchiveRefused(f"{name!r}: a link that leads outside the archive")
            stack.pop()
            continue
        stack.append(part)
        last = i == len(parts) - 1
        if not last and kinds.get("/".join(stack)) == "symlink":
            raise ArchiveRefused(f"{name!r}: a path through the symlink {'/'.join(stack)!r}")


def _regular_files(data: bytes, fmt: str) -> Iterator[tuple[str, IO[bytes], bool]]:
    """Each regular file of a checked archive: its name, its bytes, executable or not."""
    if fmt == "tar.gz":
        with tarfile.open(fileobj=io.BytesIO(data), mode="r|gz") as tar:
            for member in tar:
                if member.isreg():
                    handle = tar.extractfile(member)
                    assert handle is not None
                    yield _normalized(member.name), handle, bool(member.mode & 0o111)
        return
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            kind = stat.S_IFMT(info.external_attr >> 16)
            if not info.is_dir() and kind in (0, stat.S_IFREG):
                with archive.open(info) as handle:
                    yield (_normalized(info.filename), handle,
                           bool((info.external_attr >> 16) & 0o111))
