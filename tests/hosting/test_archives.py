"""Version archives: deterministic packing, and every way out of the archive's
directory, every bomb and every cap refused before anything is written."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from twistarena.hosted.archives import (
    ArchiveRefused,
    ArchiveTooLarge,
    Caps,
    extract,
    inspect,
    pack_directory,
)


def _tar(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    """The same bytes at every call (gzip's header time fixed): the archives name the
    parametrized tests, and every process of a parallel run must name them alike."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode="w") as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, b""


def _zip(*members: tuple[str, bytes, int]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def test_a_packed_directory_is_the_same_bytes_whatever_the_times(tmp_path: Path) -> None:
    src = tmp_path / "bot"
    (src / "lib").mkdir(parents=True)
    (src / "bot.py").write_text("print(1)\n")
    (src / "lib" / "a.py").write_text("A = 1\n")
    (src / "run").write_text("#!/bin/sh\n")
    (src / "run").chmod(0o755)
    (src / "current").symlink_to("lib/a.py")
    first = pack_directory(src)
    os.utime(src / "bot.py", (1, 1))
    os.utime(src / "lib", (2, 2))
    assert pack_directory(src) == first
    summary = extract(first, tmp_path / "out")
    assert (summary.format, summary.files) == ("tar.gz", 4)
    assert (tmp_path / "out" / "current").read_text() == "A = 1\n"
    assert (tmp_path / "out" / "run").stat().st_mode & 0o111
    (src / "bot.py").write_text("print(2)\n")
    assert pack_directory(src) != first


@pytest.mark.parametrize(("archive", "why"), [
    (_tar(_file("/etc/evil")), "absolute"),
    (_tar(_file("../evil")), "'..'"),
    (_tar(_file("a/../../evil")), "'..'"),
    (_tar(_link("out", "/etc/passwd")), "absolute"),
    (_tar(_link("out", "../../etc")), "outside"),
    (_tar(_link("d/l", ".."), _link("s", "d/l/.."), _file("x")), "through the symlink"),
    (_tar(_link("dir", "."), _file("dir/x")), "through the symlink"),
    (_tar(_link("hard", "/etc/passwd", tarfile.LNKTYPE)), "absolute"),
    (_tar(_link("hard", "missing", tarfile.LNKTYPE)), "hardlink"),
    (_tar(_link("dev", "", tarfile.CHRTYPE)), "device"),
    (_tar(_file("a"), _file("a")), "twice"),
    (_zip(("../evil", b"x", stat.S_IFREG | 0o644)), "'..'"),
    (_zip(("link", b"/etc/passwd", stat.S_IFLNK | 0o777)), "absolute"),
    (_zip(("fifo", b"", stat.S_IFIFO | 0o644)), "device"),
    (b"MZ\x90\x00 not an archive", "not a .tar.gz or .zip"),
    (gzip.compress(b"\x00" * 100 + b"garbage", mtime=0), "damaged"),
])
def test_ways_out_of_the_archive_are_refused(archive: bytes, why: str, tmp_path: Path) -> None:
    with pytest.raises(ArchiveRefused, match=why):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_caps_count_what_is_really_unpacked() -> None:
    caps = Caps(packed=1 << 20, unpacked=1 << 20, files=5)
    with pytest.raises(ArchiveTooLarge, match="more than 5 files"):
        inspect(_tar(*(_file(f"f{i}") for i in range(6))), caps)
    with pytest.raises(ArchiveTooLarge, match="packed"):
        inspect(b"\x1f\x8b" + bytes(2 << 20), caps)
    bomb = _tar(_file("zeros", bytes(64 << 20)))  # 64 MiB of zeros: ~64 KiB packed
    assert len(bomb) < caps.packed
    with pytest.raises(ArchiveTooLarge, match="unpacks to more than"):
        inspect(bomb, caps)
    zip_bomb = _zip(("zeros", bytes(64 << 20), stat.S_IFREG | 0o644))
    with pytest.raises(ArchiveTooLarge, match="unpacks to more than"):
        inspect(zip_bomb, caps)
    # A zip whose directory understates a member's size is read to its real end.
    liar = bytearray(_zip(("z", bytes(2 << 20), stat.S_IFREG | 0o644)))
    central = liar.rfind(b"PK\x01\x02")
    liar[central + 24:central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(ArchiveRefused):
        inspect(bytes(liar), caps)


def test_a_pax_header_cannot_make_the_reader_swallow_a_bomb() -> None:
    info = tarfile.TarInfo("x")
    info.pax_headers = {"comment": "y" * (8 << 20)}
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(ArchiveTooLarge):
        inspect(archive.getvalue(), Caps(unpacked=1 << 20, files=10))


def test_a_zip_unpacks_with_its_links_and_executable_bits(tmp_path: Path) -> None:
    archive = _zip(("bin/", b"", stat.S_IFDIR | 0o755),
                   ("bin/bot", b"#!/bin/sh\necho 0\n", stat.S_IFREG | 0o755),
                   ("data.txt", b"x" * 100, stat.S_IFREG | 0o644),
                   ("run", b"bin/bot", stat.S_IFLNK | 0o777))
    summary = extract(archive, tmp_path / "out")
    assert (summary.format, summary.files, summary.unpacked) == ("zip", 3, 117)
    out = tmp_path / "out"
    assert (out / "run").is_symlink() and (out / "run").read_text() == "#!/bin/sh\necho 0\n"
    assert (out / "bin" / "bot").stat().st_mode & 0o111
    assert not (out / "data.txt").stat().st_mode & 0o111
