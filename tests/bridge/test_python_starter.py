"""The Python starter (clients/starters/python/bot.py) plays ismcts through the
stdin/stdout bridge, in the sandbox: a whole match with its own game options, every
decision answered by the search, each one the action the same bot picks in-process
from the replayed state (which it only can if the bridge passed it those options).

In the sandbox it has only its own folder and the system's Python, so its folder
holds what it imports, as a submitted version would: the pure engine and bots."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from twistarena.bots import make_bot
from twistarena.clients.cli import main
from twistarena.clients.sdk import MatchClient

from tests.bots.replayed import decisions_match_the_log
from tests.clients.helpers import run
from tests.support.sandboxed import program_folder

ROOT = Path(__file__).resolve().parents[2]
STARTER = ROOT / "clients" / "starters" / "python" / "bot.py"
ENGINE = ROOT / "engine" / "twistarena"


def test_python_starter_plays_ismcts_through_the_bridge(server: Any,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with program_folder() as folder:
        shutil.copy(STARTER, folder / "bot.py")
        shutil.copytree(ENGINE, folder / "twistarena",
                        ignore=shutil.ignore_patterns("__pycache__"))
        _play(server, folder, capsys)


def _play(server: Any, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    client = MatchClient(server.target)
    # A narrower extend distance than the default changes which cards are in reach:
    # a search on the default rules would simulate another game.
    options = {"extend_distance": 6, "rounds": 1}
    created = run(client.create_match("twisted", 2, seed=31, decision_ms=20_000,
                                      game_options=options, house_bots=["", "heuristic"]))
    match_id = created.match.match_id
    command = f"python3 {folder / 'bot.py'} ismcts-fast"
    assert main(["bot", "--server", server.target, "--match", match_id, "--token",
                 created.seat_tokens[0].token, "--exec", command, "--sandbox", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["reason"] == "COMPLETED" and out["seat"] == 0
    assert run(client.get_match(match_id)).seats[0].timeouts == 0
    replay = run(client.get_replay(match_id))
    bot = make_bot("ismcts-fast", "twisted", seed=0)  # the starter seeds with its seat
    assert decisions_match_the_log(replay, "twisted", 2, replay.match.seed or 31, 0, bot,
                                   options) >= 5
