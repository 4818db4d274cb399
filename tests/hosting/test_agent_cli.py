"""``twistarena agent`` and ``twistarena submit`` (its main(), --json) against a
live server: register, submit a directory and an archive, list, activate, show;
clear refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main
from twistarena.hosted.archives import pack_directory

from tests.hosting.conftest import SMALL_CAPS
from tests.support.process import ServeProcess
from tests.support.server import InProcessServer


def _json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def test_register_submit_list_activate_show(hosting_server: InProcessServer, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    server = ["--server", hosting_server.target]
    assert main(["agent", "register", *server, "--name", "cli bot", "--json"]) == 0
    account = _json(capsys)
    agent_id, token = account["agent_id"], account["api_token"]
    mine = [*server, "--api-token", token]
    src = tmp_path / "bot"
    src.mkdir()
    (src / "bot.py").write_text("print(0)\n")
    assert main(["submit", *mine, str(src), "--entry", "python3 bot.py", "--json"]) == 0
    first = _json(capsys)
    assert first["created"] and first["version"]["active"]
    assert first["version"]["files"] == 1
    # The same directory again (touched: times do not count) is the same version.
    (src / "bot.py").touch()
    assert main(["submit", *mine, str(src), "--entry", "python3 bot.py", "--json"]) == 0
    again = _json(capsys)
    assert not again["created"]
    assert again["version"]["version_id"] == first["version"]["version_id"]
    (src / "bot.py").write_text("print(1)\n")
    packed = tmp_path / "bot.tar.gz"
    packed.write_bytes(pack_directory(src))
    assert main(["submit", *mine, str(packed), "--entry", "python3 bot.py", "--json"]) == 0
    second = _json(capsys)["version"]
    assert not second["active"]
    assert main(["agent", "versions", *mine, "--json"]) == 0
    listed = _json(capsys)
    assert listed["agent_id"] == agent_id
    assert [v["version_id"] for v in listed["versions"]] == [
        second["version_id"], first["version"]["version_id"]]
    assert main(["agent", "activate", *mine, second["version_id"][:10], "--json"]) == 0
    assert _json(capsys)["active"]
    assert main(["agent", "show", *server, agent_id, "--json"]) == 0
    shown = _json(capsys)
    assert shown["active_version_id"] == second["version_id"] and not shown["owner"]
    assert main(["agent", "show", *mine, agent_id]) == 0
    text = capsys.readouterr().out
    assert "cli bot" in text and f"* {second['version_id'][:12]}" in text


def test_refusals_are_one_clear_line(hosting_server: InProcessServer, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    server = ["--server", hosting_server.target]
    assert main(["agent", "register", *server, "--name", "refused", "--json"]) == 0
    token = _json(capsys)["api_token"]
    big = tmp_path / "big"
    big.mkdir()
    for i in range(SMALL_CAPS.files + 1):
        (big / f"f{i}").write_text(str(i))
    assert main(["submit", *server, "--api-token", token, str(big), "--entry", "./f0"]) == 2
    err = capsys.readouterr().err
    assert "RESOURCE_EXHAUSTED [ARCHIVE_TOO_LARGE]" in err and "more than 20 files" in err
    script = tmp_path / "bot.sh"
    script.write_text("echo hi\n")
    assert main(["submit", *server, "--api-token", token, str(script), "--entry", "x"]) == 2
    assert "not a .tar.gz or .zip" in capsys.readouterr().err
    assert main(["agent", "versions", *server]) == 2
    assert "an api token is needed" in capsys.readouterr().err
    assert main(["agent", "activate", *server, "--api-token", token, "0123456789"]) == 2
    assert "NOT_FOUND [UNKNOWN_VERSION]" in capsys.readouterr().err


def test_serve_flags_set_the_caps(valkey: Any, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    node = ServeProcess(["--port", "0", "--redis-url", valkey.url, "--no-web",
                         "--version-max-files", "3", "--version-max-packed-mb", "0.01"]).start()
    try:
        server = ["--server", node.target]
        assert main(["agent", "register", *server, "--name", "capped", "--json"]) == 0
        token = json.loads(capsys.readouterr().out)["api_token"]
        four = tmp_path / "four"
        four.mkdir()
        for i in range(4):
            (four / f"f{i}").write_text(str(i))
        assert main(["submit", *server, "--api-token", token, str(four), "--entry", "x"]) == 2
        assert "more than 3 files" in capsys.readouterr().err
        (tmp_path / "big").mkdir()
        (tmp_path / "big" / "noise").write_bytes(os.urandom(20_000))
        assert main(["submit", *server, "--api-token", token, str(tmp_path / "big"),
                     "--entry", "x"]) == 2
        assert "the cap is 10485" in capsys.readouterr().err
    finally:
        node.cleanup()
