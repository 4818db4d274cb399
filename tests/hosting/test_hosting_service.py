"""The Hosting service over real gRPC on a real Valkey: versions submitted, listed,
activated and inspected; caps and hostile archives refused with a clear status;
private parts only for the agent's own api token."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import grpc
import pytest
from twistarena.clients.sdk import AgentError, register_agent
from twistarena.clients.sdk.versions import VersionClient
from twistarena.hosted.archives import pack_directory
from twistarena.server.hostedagents.service import PRIVATE_VERSIONS
from twistarena.storage import Holder, MatchReport, Store
from twistarena.v1 import hosting_pb2, hosting_pb2_grpc

from tests.clients.helpers import run
from tests.hosting.conftest import MAX_VERSIONS, SMALL_CAPS
from tests.support.server import InProcessServer


def _bot(tmp_path: Path, text: str = "print(1)\n") -> bytes:
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "bot.py").write_text(text)
    return pack_directory(src)


def _tar(**files: bytes) -> bytes:
    """A .tar.gz of these files, the same bytes every time (gzip's time fixed)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as gz, \
            tarfile.open(fileobj=gz, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


async def _refusal(client: VersionClient, archive: bytes, entry: str = "python3 bot.py",
                   ) -> AgentError:
    with pytest.raises(AgentError) as caught:
        await client.submit(archive, entry)
    return caught.value


def test_submit_list_activate_and_show(hosting_server: InProcessServer, valkey: Any,
                                       tmp_path: Path) -> None:
    target = hosting_server.target

    async def scenario() -> None:
        agent_id, token = await register_agent(target, "hosted")
        owner = VersionClient(target, api_token=token)
        first_archive = _bot(tmp_path)
        first = await owner.submit(first_archive, "python3 bot.py", build="make",
                                   build_log="compiled fine")
        assert first.created and first.version.active
        assert first.version.content_hash == hashlib.sha256(first_archive).hexdigest()
        assert (first.version.files, first.version.size) == (1, len(first_archive))
        again = await owner.submit(_bot(tmp_path), "python3 bot.py", build="make")
        assert not again.created and again.version.version_id == first.version.version_id
        second = await owner.submit(_bot(tmp_path, "print(2)\n"), "python3 bot.py")
        assert second.created and not second.version.active
        listed = await owner.versions()
        assert listed.agent_id == agent_id
        assert [v.version_id for v in listed.versions] == [
            second.version.version_id, first.version.version_id]
        activated = await owner.activate(second.version.version_id[:8])
        assert activated.version_id == second.version.version_id and activated.active

        store = Store(valkey.url, Holder("test", "", 2000))
        await store.connect()
        try:
            assert await store.versions.archive(first.version.content_hash) == first_archive
            assert (await store.versions.active(agent_id)).version_id == \
                second.version.version_id  # type: ignore[union-attr]
            await store.versions.record_match(agent_id, second.version.version_id, MatchReport(
                "m1:0", "m1", decisions=4, cpu_ms_total=8.0, cpu_ms_max=3.5, crashes=1,
                stderr_tail=b"Traceback: secret"))
        finally:
            await store.close()

        mine = await owner.details(agent_id)
        public = await VersionClient(target).details(agent_id)
        assert mine.owner and not public.owner
        assert mine.active_version_id == public.active_version_id == second.version.version_id
        for shown, private in ((mine, True), (public, False)):
            newest, oldest = shown.versions
            assert (newest.stats.matches, newest.stats.crashes, newest.stats.cpu_ms_max) == \
                (1, 1, 3.5)
            assert newest.stats.cpu_ms_mean == 2.0
            assert [f.stderr_tail for f in newest.stats.failures] == \
                (["Traceback: secret"] if private else [])
            assert oldest.build_log == ("compiled fine" if private else "")
        assert "secret" not in str(public) and "compiled" not in str(public)

    run(scenario())


def test_caps_are_refused_with_resource_exhausted(hosting_server: InProcessServer) -> None:
    target = hosting_server.target

    async def scenario() -> None:
        agent_id, token = await register_agent(target, "greedy")
        client = VersionClient(target, api_token=token)
        cases = {
            "bytes packed": bytes.fromhex("1f8b") + bytes(SMALL_CAPS.packed),
            "more than 20 files": _tar(**{f"f{i}": b"x" for i in range(SMALL_CAPS.files + 1)}),
            "unpacks to more than": _tar(zeros=bytes(4 * SMALL_CAPS.unpacked)),
        }
        bomb = _zip_bomb(64 * SMALL_CAPS.unpacked)
        assert len(bomb) < SMALL_CAPS.packed
        for why, archive in [*cases.items(), ("unpacks to more than", bomb)]:
            error = await _refusal(client, archive)
            assert (error.code, error.reason) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED, "ARCHIVE_TOO_LARGE"), why
            assert why in str(error)
        for i in range(MAX_VERSIONS):
            await client.submit(_tar(bot=str(i).encode()), "./bot", build_log=f"log {i}")
        error = await _refusal(client, _tar(bot=b"one more"), "./bot")
        assert (error.code, error.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED,
                                              "TOO_MANY_VERSIONS")
        assert len((await client.versions()).versions) == MAX_VERSIONS
        # A version it already has is no new version: still answered.
        assert not (await client.submit(_tar(bot=b"0"), "./bot", build_log="log 0")).created
        # Build logs go out for the newest versions and the active one (the first), not
        # for all: an answer stays small however many versions there are.
        assert MAX_VERSIONS > PRIVATE_VERSIONS + 1
        logs = [v.build_log for v in (await client.details(agent_id)).versions]
        newest_first = range(MAX_VERSIONS - 1, -1, -1)
        assert logs == [f"log {i}" if i == 0 or MAX_VERSIONS - i <= PRIVATE_VERSIONS else ""
                        for i in newest_first]

    run(scenario())


def _zip_bomb(size: int) -> bytes:
    """A zip of one member of ``size`` zeros (about a thousandth of that, packed)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("zeros", bytes(size))
    return buffer.getvalue()


def _symlink_out() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("data")
        info.type, info.linkname = tarfile.SYMTYPE, "../../../etc/passwd"
        tar.addfile(info)
    return buffer.getvalue()


def test_hostile_archives_and_bad_calls_are_refused(hosting_server: InProcessServer,
                                                    tmp_path: Path) -> None:
    target = hosting_server.target

    async def scenario() -> None:
        agent_id, token = await register_agent(target, "hostile")
        client = VersionClient(target, api_token=token)
        for archive, why in ((_tar(**{"../escape": b"x"}), "'..'"),
                             (_symlink_out(), "outside"),
                             (b"#!/bin/sh\nrm -rf /\n", "not a .tar.gz or .zip")):
            error = await _refusal(client, archive)
            assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                  "ARCHIVE_REFUSED")
            assert why in str(error)
        error = await _refusal(client, _bot(tmp_path), entry="  ")
        assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                              "MALFORMED_MESSAGE")
        error = await _refusal(client, _bot(tmp_path), entry="./bot --fast")
        assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                              "ENTRY_NOT_IN_ARCHIVE")
        assert "'./bot'" in str(error)
        error = await _refusal(VersionClient(target, api_token="ag_wrong"), _bot(tmp_path))
        assert (error.code, error.reason) == (grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN")
        for prefix, code in (("abc", grpc.StatusCode.INVALID_ARGUMENT),
                             ("abcdef0123", grpc.StatusCode.NOT_FOUND)):
            with pytest.raises(AgentError) as caught:
                await client.activate(prefix)
            assert caught.value.code == code
        with pytest.raises(AgentError) as caught:
            await client.details("ag_nobody")
        assert caught.value.code == grpc.StatusCode.NOT_FOUND
        # Data before the manifest: refused, nothing stored.
        async with grpc.aio.insecure_channel(target) as channel:
            stub = hosting_pb2_grpc.HostingStub(channel)  # type: ignore[no-untyped-call]

            async def data_first() -> Any:
                yield hosting_pb2.SubmitVersionChunk(data=b"x")

            with pytest.raises(grpc.aio.AioRpcError) as raw:
                await stub.SubmitVersion(data_first(),
                                         metadata=(("authorization", f"Bearer {token}"),))
            assert raw.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert (await client.versions()).versions == []
        assert (await client.details(agent_id)).active_version_id == ""

    run(scenario())
