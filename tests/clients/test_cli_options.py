"""The command line's shared flags and exit statuses: each flag several commands
take means one thing everywhere, every command maps its errors to the same
statuses (docs/architecture.md), and starting the CLI loads neither the tools
nor the server."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import build_parser, main
from twistarena.clients.cli.command import EXIT_STATUS
from twistarena.clients.cli.options import ADMIN_TOKEN_HELP, JSON_HELP

#: The commands whose --admin-token is the token of the servers they start
#: themselves, not one they send.
STARTS_SERVERS = {"serve", "cluster", "chaos"}


def _parsers(parser: argparse.ArgumentParser, path: str = "") -> Iterator[
        tuple[str, argparse.ArgumentParser]]:
    """Every (sub)command's parser, with its deferred flags declared."""
    parser.format_help()  # declares what a CommandParser defers
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}".strip())


def _flag(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


PARSERS = dict(_parsers(build_parser()))


def test_the_walk_sees_every_command_and_the_tools_targets() -> None:
    assert {"match create", "agent versions delete", "bench engine", "bench service",
            "loadtest compare", "chaos", "runner", "runner-token"} <= set(PARSERS)


def test_every_json_flag_says_the_one_meaning() -> None:
    flags = {path: _flag(p, "--json") for path, p in PARSERS.items()}
    with_json = {path: f for path, f in flags.items() if f is not None}
    assert len(with_json) > 25
    wrong = [path for path, f in with_json.items() if not (f.help or "").startswith(JSON_HELP)]
    assert wrong == []


def test_every_admin_token_flag_is_one_declaration() -> None:
    """Default None everywhere (looked up when sent); the same help in every command
    that sends it."""
    for path, parser in PARSERS.items():
        flag = _flag(parser, "--admin-token")
        if flag is None:
            continue
        assert flag.default is None, path
        if path.split(" ")[0] not in STARTS_SERVERS:
            assert flag.help == ADMIN_TOKEN_HELP, path


def test_every_connected_command_takes_the_same_connection_flags() -> None:
    for path in ("runner", "runner-token", "match get", "agent show", "arena enroll",
                 "tournament create", "queue", "submit"):
        parser = PARSERS[path]
        for flag in ("--server", "--root-cert", "--tls"):
            action = _flag(parser, flag)
            assert action is not None, (path, flag)
            assert action.help == _flag(PARSERS["match get"], flag).help  # type: ignore[union-attr]


def test_the_help_states_the_exit_statuses() -> None:
    text = build_parser().format_help()
    assert EXIT_STATUS in text
    for status in ("0  done", "1  the command ran", "2  nothing was done", "3  loadtest"):
        assert status in text


def test_starting_the_cli_loads_neither_the_tools_nor_the_server() -> None:
    probe = ("import sys; from twistarena.clients.cli import build_parser; "
             "build_parser().parse_args(['match', 'list']); "
             "print([m for m in sys.modules if m.startswith(('twistarena.tools', "
             "'twistarena.server', 'twistarena.runner'))])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert out.strip() == "[]"


def test_a_refusal_is_one_line_on_stderr_and_status_2(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "get", "--server", server.target, "nope", "--json"]) == 2
    refused = capsys.readouterr()
    assert refused.out == ""
    assert refused.err.startswith("error:") and "nope" in refused.err


def test_a_command_error_is_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["queue", "--server", "127.0.0.1:9", "--api-token", "t"]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err.startswith("error: --game is needed")


def test_a_runner_refused_its_token_exits_2(server: Any, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "twistarena.clients.cli", "runner", "--server", server.target,
         "--runner-token", "not-the-token", "--sandbox", "none", "--cache-dir",
         str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "error:" in done.stderr and "UNAUTHENTICATED" in done.stderr


def test_bench_json_leaves_stdout_to_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--game", "twisted", "--games", "1", "--seconds", "0",
                 "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["games"] and figures["reference"]
