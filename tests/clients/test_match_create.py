"""``match create`` mixing house-bot and remote seats, with its rules in force."""

from __future__ import annotations

import json
from typing import Any

import pytest
from twistarena import engine
from twistarena.clients.cli import main
from twistarena.clients.sdk import MatchClient

from .helpers import run


def test_house_and_remote_seats_with_forfeit_rules(server: Any,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "3", "--house", "1:heuristic", "--bots", "random",
                 "--fallback", "forfeit", "--forfeit-after", "2", "--seed", "8",
                 "--option", "rounds=1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert [s["house_bot"] for s in out["seats"]] == ["", "heuristic", ""]
    assert out["time_control"]["fallback"] == "FORFEIT"
    assert out["time_control"]["forfeit_after"] == 2
    # The options in force: the game's defaults with the override.
    assert out["game_options"] == {**engine.game("twisted").defaults, "rounds": 1}
    assert out["status"] == "FINISHED" and len(out["result"]["scores"]) == 3
    match_id = out["match_id"]

    assert main(["replay", match_id, "--server", server.target]) == 0
    replayed = capsys.readouterr().out
    assert "heuristic" in replayed and "random" in replayed


def test_watch_names_every_seat_of_a_match_without_names(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--house", "0:random", "--house", "1:random",
                 "--json"]) == 0
    match_id = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["match_id"]
    assert main(["watch", match_id, "--server", server.target]) == 0
    table = capsys.readouterr().out.split("Final result")[-1]
    assert table.count("house random") == 2


def test_house_seat_out_of_range_is_refused(server: Any,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--house", "5:random"]) == 2
    assert "--house seats are 0..1" in capsys.readouterr().err


def test_the_seed_is_null_in_json_until_the_match_ends(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--house", "1:random", "--json"]) == 0
    waiting = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert waiting["status"] == "WAITING" and waiting["seed"] is None
    match_id = waiting["match_id"]
    # The server sends no seed either: 0 and options.seed absent.
    record = run(MatchClient(server.target).get_match(match_id))
    assert record.seed == 0 and not record.options.HasField("seed")
    assert main(["bot", "--server", server.target, "--match", match_id, "--token",
                 waiting["seat_tokens"][0]["token"], "--json"]) == 0
    capsys.readouterr()
    assert main(["match", "get", match_id, "--server", server.target, "--json"]) == 0
    over = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert over["status"] == "FINISHED" and isinstance(over["seed"], int)
    assert over["seed"] == run(MatchClient(server.target).get_replay(match_id)).match.seed
