"""The starter bots of clients/starters: each one whose toolchain is here is built and plays
a full match of every game through ``twistarena bot --exec --sandbox`` (as a hosted
program runs: its folder only, no network, the sandbox's limits, a JVM included),
answering every decision with a legal action (no decision left to the fallback). Under
CI every toolchain must be present (.ci/run installs them). The README's table of
starters lists each with the command that runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main
from twistarena.clients.sdk import MatchClient

from tests.clients.helpers import run
from tests.support.sandboxed import program_folder

STARTERS = Path(__file__).resolve().parents[2] / "clients" / "starters"
GAMES = (("tricky_twist", 3), ("twisted", 2), ("twhist", 4))


def _build(language: str, out: Path) -> tuple[list[str], bool]:
    """(the --exec command, whether it reads the plain-text form) after building it."""
    if language == "javascript":
        return ["node", str(STARTERS / "javascript" / "bot.js")], False
    if language == "java":
        subprocess.run(["javac", "-d", str(out), str(STARTERS / "java" / "Bot.java")],
                       check=True, timeout=120)
        # Heap, class space and collector sized for a sandbox whose memory cap is an
        # address-space rlimit (a host without a memory cgroup).
        return ["java", "-Xmx128m", "-XX:CompressedClassSpaceSize=64m", "-XX:+UseSerialGC",
                "-cp", str(out), "Bot"], True
    compile_command = {
        "c": ["cc", "-O2", "-Wall", "-Werror", "-o", str(out / "bot"),
              str(STARTERS / "c" / "bot.c")],
        "go": ["go", "build", "-o", str(out / "bot"), str(STARTERS / "go" / "bot.go")],
        "rust": ["rustc", "-O", "-D", "warnings", "-o", str(out / "bot"),
                 str(STARTERS / "rust" / "bot.rs")],
    }[language]
    subprocess.run(compile_command, check=True, timeout=120, cwd=out)
    return [str(out / "bot")], True


TOOLS = {"javascript": "node", "java": "javac", "c": "cc", "go": "go", "rust": "rustc"}


@pytest.mark.parametrize("language", sorted(TOOLS))
def test_starter_plays_every_game(language: str, server: Any,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    if shutil.which(TOOLS[language]) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{TOOLS[language]} is missing; .ci/run installs it")
        pytest.skip(f"no {TOOLS[language]} here")
    with program_folder() as out:
        _play_every_game(language, server, out, capsys)


def _play_every_game(language: str, server: Any, out: Path,
                     capsys: pytest.CaptureFixture[str]) -> None:
    command, text = _build(language, out)
    client = MatchClient(server.target)
    for game, players in GAMES:
        created = run(client.create_match(game, players, seed=21, decision_ms=10_000,
                                          house_bots=["", *["random"] * (players - 1)]))
        match_id = created.match.match_id
        args = ["bot", "--server", server.target, "--match", match_id,
                "--token", created.seat_tokens[0].token, "--exec", " ".join(command),
                "--sandbox", "--json"]
        assert main(args + (["--text"] if text else [])) == 0
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert out["reason"] == "COMPLETED" and out["seat"] == 0
        match = run(client.get_match(match_id))
        assert match.seats[0].timeouts == 0, f"{language} left decisions to the fallback"
        replay = run(client.get_replay(match_id))
        assert any(a.seat == 0 for a in replay.actions)


def test_the_readme_lists_every_starter_with_its_command() -> None:
    readme = (STARTERS.parents[1] / "README.md").read_text()
    table = readme[readme.index("| starter |"):]
    table = table[:table.index("\n\n")]
    rows = {line.split("`clients/starters/")[1].split("/")[0]: line
            for line in table.splitlines()[2:]}
    assert sorted(rows) == sorted(p.name for p in STARTERS.iterdir() if p.is_dir())
    assert all("--exec" in row for row in rows.values())
