"""Archives a runner could not unpack are refused at submit, by the one set of
rules the runner's unpack also runs: a file that is also a directory (``a``
and ``a/b``, in either order), a 1 MiB member name, a name part longer than a
file system takes. And what the server accepts, a runner's cache unpacks."""

from __future__ import annotations

import asyncio
import gzip
import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import grpc
import pytest
from twistarena.clients.sdk import AgentError, register_agent
from twistarena.clients.sdk.versions import VersionClient
from twistarena.runner.cache import CacheError, VersionCache, content_hash

BOT = b"print(1)\n"


def zip_of(*names: str) -> bytes:
    """A zip whose members are files with these names (a name ending in / a directory)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, b"" if name.endswith("/") else BOT)
    return buffer.getvalue()


def tar_of(*names: str) -> bytes:
    """A .tar.gz whose members are files with these names (pax headers for long ones)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(BOT)
                tar.addfile(info, io.BytesIO(BOT))
    return buffer.getvalue()


UNPACKABLE = {
    "zip file then file below it": (zip_of("bot.py", "a", "a/b"), "'a' is a file"),
    "zip file below then file": (zip_of("bot.py", "a/b", "a"), "'a' is a file"),
    "tar file then file below it": (tar_of("bot.py", "a", "a/b/c"), "'a' is a file"),
    "tar with a 1 MiB name": (tar_of("bot.py", "n" * (1 << 20)), "longer than 1024 bytes"),
    "tar with a 300-byte part": (tar_of("bot.py", "d/" + "p" * 300), "longer than 255"),
}

#: Unusual but sound: a runner unpacks them.
SOUND = {
    "directory after its file": tar_of("a/b", "a/", "bot.py"),
    "zip directory after its file": zip_of("a/b", "a/", "bot.py"),
    "deep names": tar_of("bot.py", "/".join(["d" * 200] * 4)),
}


@pytest.mark.parametrize("case", sorted(UNPACKABLE))
def test_an_archive_no_runner_could_unpack_is_refused_at_submit(
        server: Any, case: str, tmp_path: Path) -> None:
    archive, why = UNPACKABLE[case]

    async def go() -> AgentError:
        _agent, token = await register_agent(server.target, "clash")
        with pytest.raises(AgentError) as refused:
            await VersionClient(server.target, api_token=token).submit(archive,
                                                                       "python3 bot.py")
        return refused.value

    error = asyncio.run(go())
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT, error
    assert why in str(error)
    assert len(str(error)) < 600  # the 1 MiB name is not echoed back

    # The runner's unpack refuses it by the same rule, as an error it reports.
    with pytest.raises(CacheError, match=why):
        asyncio.run(VersionCache(tmp_path / "cache").ensure(content_hash(archive),
                                                            _fetched(archive)))


@pytest.mark.parametrize("case", sorted(SOUND))
def test_what_the_server_accepts_a_runner_unpacks(server: Any, case: str,
                                                  tmp_path: Path) -> None:
    archive = SOUND[case]

    async def go() -> Path:
        _agent, token = await register_agent(server.target, "sound")
        submitted = await VersionClient(server.target, api_token=token).submit(
            archive, "python3 bot.py")
        assert submitted.version.content_hash == content_hash(archive)
        return await VersionCache(tmp_path / "cache").ensure(content_hash(archive),
                                                             _fetched(archive))

    unpacked = asyncio.run(go())
    assert (unpacked / "bot.py").read_bytes() == BOT


def _fetched(archive: bytes) -> Any:
    async def fetch() -> bytes:
        return archive

    return fetch
