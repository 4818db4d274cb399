"""Smoke tests of the network commands: match, bot, watch, replay, demo, bench service."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from twistarena.clients.cli import main
from twistarena.clients.cli.replay import verify
from twistarena.clients.sdk import MatchClient
from twistarena.tools.processes import CLI

from tests.support.waiting import wait_until

from .helpers import run


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True,
                          timeout=timeout)


def _last_json(text: str) -> Any:
    return json.loads(text.strip().splitlines()[-1])


def test_match_create_with_bots_then_replay(server: Any,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["match", "create", "--server", server.target, "--game", "twhist",
                 "--players", "3", "--bots", "heuristic,random", "--seed", "11", "--json"])
    assert code == 0
    created = _last_json(capsys.readouterr().out)
    assert created["status"] == "FINISHED" and created["result"]["reason"] == "COMPLETED"
    match_id = created["match_id"]
    replay = run(MatchClient(server.target).get_replay(match_id))
    assert created["actions"] == len(replay.actions) > 0

    assert main(["replay", "--server", server.target, match_id, "--json"]) == 0
    check = _last_json(capsys.readouterr().out)
    assert check["ok"] and check["replayed_scores"] == created["result"]["scores"]

    assert main(["replay", "--server", server.target, match_id]) == 0
    assert "OK" in capsys.readouterr().out

    assert main(["match", "get", "--server", server.target, match_id, "--json"]) == 0
    record = _last_json(capsys.readouterr().out)
    assert record["status"] == "FINISHED" and record["result"] == created["result"]

    assert main(["match", "list", "--server", server.target, "--game", "twhist", "--json"]) == 0
    listed = _last_json(capsys.readouterr().out)
    assert match_id in [m["match_id"] for m in listed["matches"]]


def test_replay_detects_a_tampered_result(server: Any) -> None:
    async def scenario() -> Any:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=3, house_bots=["random", "random"])
        match_id = created.match.match_id

        async def scored() -> bool:
            return bool((await client.get_match(match_id)).result.scores)

        await wait_until(scored, "the house bots finished the match", timeout=10)
        return await client.get_replay(match_id)

    replay = run(scenario())
    assert verify(replay).ok
    replay.match.result.scores[0] += 1
    assert not verify(replay).ok
    assert "scores differ" in verify(replay).problems[0]


def test_match_create_tokens_bot_and_watch(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--seed", "4", "--json"]) == 0
    created = _last_json(capsys.readouterr().out)
    tokens = created["seat_tokens"]
    assert [t["seat"] for t in tokens] == [0, 1]
    match_id = created["match_id"]
    base = [sys.executable, "-c", CLI]
    watcher = subprocess.Popen([*base, "watch", "--server", server.target, match_id],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bots = [subprocess.Popen([*base, "bot", "--server", f"127.0.0.1:1,{server.target}",
                              "--match", match_id, "--token", t["token"], "--strategy", s,
                              "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
            for t, s in zip(tokens, ["heuristic", "random"], strict=True)]
    outputs = [b.communicate(timeout=120) for b in bots]
    for bot, (_out, err) in zip(bots, outputs, strict=True):
        assert bot.returncode == 0, err
    results = [_last_json(out) for out, _ in outputs]
    assert {r["seat"] for r in results} == {0, 1}
    assert results[0]["scores"] == results[1]["scores"]
    watched, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 0, err
    assert "Final result" in watched and "winner" in watched

    assert main(["match", "create", "--server", server.target, "--game", "twhist",
                 "--players", "3"]) == 0
    assert "Seat tokens" in capsys.readouterr().out


def test_match_cancel(server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "tricky_twist",
                 "--players", "3", "--join-timeout-ms", "90000", "--json"]) == 0
    created = _last_json(capsys.readouterr().out)
    assert created["time_control"]["join_timeout_ms"] == 90_000
    assert created["time_control"]["decision_ms"] == 5000  # the server's default, resolved
    match_id = created["match_id"]
    assert main(["match", "cancel", "--server", server.target, match_id, "--json"]) == 0
    cancelled = _last_json(capsys.readouterr().out)
    assert cancelled["status"] == "CANCELLED"
    assert main(["match", "cancel", "--server", server.target, match_id]) != 0
    assert main(["match", "get", "--server", server.target, "nope"]) != 0


def test_bot_with_a_bad_token_exits_non_zero(server: Any) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2"]) == 0
    assert main(["bot", "--server", server.target, "--match", "nope", "--token", "x"]) == 2


def test_demo_plays_every_game_over_grpc() -> None:
    done = _cli("demo", timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    for name in ("Tricky Twist", "Twisted", "Twhist", "Demo summary"):
        assert name in out


def test_demo_offline() -> None:
    done = _cli("demo", "--offline", "--game", "twhist", "--players", "3")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Winner" in done.stdout


@pytest.mark.serial  # reads the CPU each process spent per decision: alone, as the bench runs
def test_bench_service_small() -> None:
    done = _cli("bench", "service", "--matches", "4", "--duration", "1", "--warmup", "0.5",
                "--rounds", "2", "--json", timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    report = _last_json(done.stdout)
    assert report["config"]["rounds"] == 2
    for run_name in ("bare_grpc", "grpc_engine_only", "service", "service_sdk_agents"):
        assert report[run_name]["decisions"] > 0, run_name
        # Measured in two windows (in order, then reversed), summed.
        windows = report[run_name]["decisions_per_s_by_window"]
        assert len(windows) == 2 and min(windows) > 0, run_name
        assert min(windows) <= report[run_name]["decisions_per_s"] <= max(windows) * 1.01
    assert report["service"]["valkey_cpu_us_per_decision"] > 0
    # The system calls of the server and of Valkey are read (0 when /proc is not).
    assert report["service"]["server_syscalls_per_decision"] > 0
    assert report["service"]["valkey_syscalls_per_decision"] > 0
    # Each ratio is its run's rate over the bare server's in the same report (a
    # figure, not a bound: how fast a loaded machine runs is not for a test to say).
    bare = report["bare_grpc"]["decisions_per_s"]
    for run_name in ("service", "grpc_engine_only", "service_sdk_agents"):
        expected = report[run_name]["decisions_per_s"] / bare
        assert report[f"{run_name}_to_bare_ratio"] == pytest.approx(expected, abs=2e-3)
    assert report["message_bytes"]["decision_request"] > 100
    costs = report["match_costs"]  # matches created, seated, started and cancelled
    assert costs["matches"] > 0 and costs["server_cpu_us_per_match"] > 0


def test_bench_service_live_and_storm() -> None:
    done = _cli("bench", "service", "--live-matches", "20", "--storm", "40", "--json",
                timeout=150)
    assert done.returncode == 0, done.stderr[-2000:]
    live = _last_json(done.stdout)["live"]
    assert live["all_live_seated"] and live["storm_seated"] == 40
