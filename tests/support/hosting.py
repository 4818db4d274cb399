"""Hosted agents for tests: a program packed as a version, stored and activated,
either straight into the store or through ``agent register`` and ``submit``.

The programs here use the standard library only (the sandbox shows a program
the system's Python, not this repository's environment).
"""

from __future__ import annotations

import contextlib
import io
import json
import secrets
import tarfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from twistarena.storage import Holder, Store
from twistarena.storage.versions import VersionRecord, version_id
from twistarena.tools.hostedsoak import INSTANT_BOT

from tests.support.process import ServeProcess
from tests.support.valkey import ValkeyProcess

#: Answers every decision with its first legal action; exits after ``over`` (the
#: instant bot of ``soak --hosted``).
FIRST_LEGAL = INSTANT_BOT


def pack(files: Mapping[str, str | bytes]) -> bytes:
    """A .tar.gz of ``files`` (name -> text or bytes)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


async def store_version(redis_url: str, agent_id: str, files: Mapping[str, str | bytes],
                        entry: str) -> VersionRecord:
    """Store ``files`` as a version of the agent and make it the active one."""
    return await store_archive(redis_url, agent_id, pack(files), entry,
                               sum(len(c) for c in files.values()), len(files))


async def store_archive(redis_url: str, agent_id: str, archive: bytes, entry: str,
                        unpacked: int, files: int) -> VersionRecord:
    """Store ``archive`` as it is (no check: a test may store one no runner can
    unpack) as a version of the agent, and make it the active one."""
    import hashlib

    digest = hashlib.sha256(archive).hexdigest()
    record = VersionRecord(agent_id, version_id(digest, entry, ""), digest, entry, "", "",
                           len(archive), unpacked, files, int(time.time() * 1000))
    store = Store(redis_url, Holder("tests", "", 2000))
    await store.connect()
    try:
        stored, _new = await store.versions.put(record, archive)
        assert await store.versions.activate(agent_id, stored.version_id)
    finally:
        await store.close()
    return stored

#: Like ``FIRST_LEGAL``, thinking 30 ms over each decision (a match lasts a while).
SLOW_FIRST_LEGAL = FIRST_LEGAL.replace(
    'print(message["legal_actions"]',
    '__import__("time").sleep(0.03); print(message["legal_actions"]')


def submit_agent(server: str, name: str, files: Mapping[str, str | bytes], entry: str,
                 capsys: Any, workdir: Path) -> tuple[str, str]:
    """``agent register`` and ``submit`` (in this process, as a user types them):
    (agent id, api token) of a new agent whose active version is ``files``."""
    from twistarena.clients.cli import main as cli

    assert cli(["agent", "register", "--server", server, "--name", name, "--json"]) == 0
    registered = json.loads(capsys.readouterr().out)
    folder = workdir / name
    folder.mkdir()
    for path, content in files.items():
        (folder / path).write_bytes(content.encode() if isinstance(content, str) else content)
    assert cli(["submit", "--server", server, "--api-token", registered["api_token"],
                str(folder), "--entry", entry, "--json"]) == 0
    capsys.readouterr()
    return registered["agent_id"], registered["api_token"]


def agent_show(server: str, agent_id: str, api_token: str, capsys: Any) -> dict[str, Any]:
    """``agent show ID --json`` with the agent's own api token."""
    from twistarena.clients.cli import main as cli

    assert cli(["agent", "show", "--server", server, "--api-token", api_token, agent_id,
                "--json"]) == 0
    shown: dict[str, Any] = json.loads(capsys.readouterr().out)
    return shown


class Arena:
    """A serve subprocess with its runners, on a Valkey of its own (so that no other
    server's runners take its seats)."""

    def __init__(self, valkey: ValkeyProcess, serve: ServeProcess, runner_token: str) -> None:
        self.valkey = valkey
        self.serve = serve
        self.runner_token = runner_token

    @property
    def url(self) -> str:
        return str(self.valkey.url)


@contextlib.contextmanager
def running_arena(runners: int, sandbox: str = "bwrap",
                  extra: Sequence[str] = ()) -> Iterator[Arena]:
    """``twistarena serve`` starting ``runners`` runners (4 seats each), until the block
    ends; the runner token is the arena's ``runner_token``; ``extra``: more flags."""
    token = "rt_" + secrets.token_urlsafe(24)
    valkey = ValkeyProcess().start()
    serve = ServeProcess(["--port", "0", "--redis-url", valkey.url, "--runners", str(runners),
                          "--runner-slots", "4", "--sandbox", sandbox, "--runner-token", token,
                          "--drain-grace", "1", "--log-format", "json", "--no-web", *extra])
    try:
        serve.start()
        yield Arena(valkey, serve, token)
    finally:
        serve.terminate()
        serve.cleanup()
        valkey.stop()


async def finished_match(server: str, match_id: str, what: str,
                         timeout: float = 60.0) -> Any:
    """The match once it is FINISHED (it may not exist yet when this starts)."""
    from twistarena.clients.sdk import AgentError, MatchClient
    from twistarena.v1 import match_pb2

    from tests.support.waiting import wait_until

    matches = MatchClient(server)

    async def finished() -> Any:
        try:
            match = await matches.get_match(match_id)
        except AgentError:  # not created yet
            return None
        return match if match.status == match_pb2.MATCH_STATUS_FINISHED else None

    return await wait_until(finished, what, timeout=timeout)
