"""``submit --build`` in the real sandbox: the build's output is the version, its
log is kept for the owner, the source is never written to; a failed or endless
build submits nothing."""

from __future__ import annotations

import asyncio
import json
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from twistarena.clients.cli import main
from twistarena.sandbox import sandbox_mode
from twistarena.sandbox.builds import BUILD_LIMITS, BuildFailed, build

from tests.support.server import InProcessServer

BUILD = "mkdir bin && printf 'echo 0' > bin/bot && chmod +x bin/bot && echo built-ok"


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "README").write_text("a bot\n")
    return src


def test_the_build_output_is_the_version_and_its_log_is_kept(
        hosting_server: InProcessServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    server = ["--server", hosting_server.target]
    assert main(["agent", "register", *server, "--name", "built", "--json"]) == 0
    account = json.loads(capsys.readouterr().out)
    mine = [*server, "--api-token", account["api_token"]]
    src = _source(tmp_path)
    assert main(["submit", *mine, str(src), "--entry", "./bin/bot", "--build", BUILD,
                 "--json"]) == 0
    version = json.loads(capsys.readouterr().out)["version"]
    assert (version["files"], version["build"]) == (2, BUILD)
    assert sorted(p.name for p in src.iterdir()) == ["README"]  # the source is untouched
    assert main(["agent", "show", *mine, account["agent_id"], "--json"]) == 0
    [shown] = json.loads(capsys.readouterr().out)["versions"]
    assert "built-ok" in shown["build_log"]
    assert main(["submit", *mine, str(src), "--entry", "./bin/bot",
                 "--build", "echo compiling; echo 'bot.c:1: error' >&2; exit 3"]) == 2
    said = capsys.readouterr()
    assert "exited with status 3" in said.err and "bot.c:1: error" in said.out
    assert main(["agent", "versions", *mine, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["versions"]) == 1
    # An archive is unpacked (checked) to a scratch directory and built there.
    zipped = tmp_path / "src.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("README", "a bot\n")
    assert main(["submit", *mine, str(zipped), "--entry", "./bin/bot", "--build", BUILD,
                 "--json"]) == 0
    from_zip = json.loads(capsys.readouterr().out)["version"]
    assert from_zip["content_hash"] == version["content_hash"]  # the same output, packed alike


def test_a_build_that_runs_too_long_is_killed(tmp_path: Path) -> None:
    limits = replace(BUILD_LIMITS, wall_seconds=1)
    started = time.monotonic()
    with pytest.raises(BuildFailed, match="longer than 1 s") as caught:
        asyncio.run(build(_source(tmp_path), "echo started; sleep 60 & wait", sandbox_mode(),
                          limits))
    assert time.monotonic() - started < 10
    assert "started" in caught.value.log
