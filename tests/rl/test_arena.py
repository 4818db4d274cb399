"""From training to the arena: the example training script on a tiny budget, its
policy in ``twistarena evaluate``, and a policy playing a seat over the network
with ``twistarena bot --policy``; and ``twistarena bench rl`` on a tiny budget."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from twistarena import engine
from twistarena.clients.cli import main
from twistarena.clients.sdk.policies import load_policy, policy_bot_of
from twistarena.rl import native

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "twisted_reinforce.py"


def _json_lines(text: str) -> list[Any]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_the_example_trains_on_a_tiny_budget_and_evaluate_plays_its_policy(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    weights = tmp_path / "policy.npz"
    done = subprocess.run([sys.executable, str(SCRIPT), "--seconds", "60", "--episodes", "32",
                           "--out", str(weights)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1])["episodes"] == 32 and weights.is_file()
    monkeypatch.setenv("TWISTED_POLICY_WEIGHTS", str(weights))
    kind = f"policy:{SCRIPT}:policy"
    assert main(["evaluate", "--game", "twisted", "--players", "2", "--bots", f"{kind},random",
                 "--deals", "2", "--jobs", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {s["entrant"] for s in report["standings"]} == {kind, "random"}
    assert report["meta"]["games"] == 4 and report["comparisons"][0]["n"] == 2


def test_a_policy_plays_a_seat_over_the_network(server: Any,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--seed", "9", "--option", "rounds=1", "--json"]) == 0
    created = _json_lines(capsys.readouterr().out)[-1]
    tokens = {t["seat"]: t["token"] for t in created["seat_tokens"]}
    seats = [["--policy", "tests.rl.policies:first_legal"], ["--strategy", "random"]]
    with ThreadPoolExecutor(2) as pool:
        codes = list(pool.map(lambda seat: main(
            ["bot", "--server", server.target, "--match", created["match_id"],
             "--token", tokens[seat], *seats[seat], "--json"]), [0, 1]))
    assert codes == [0, 0]
    results = _json_lines(capsys.readouterr().out)
    assert sorted(r["seat"] for r in results) == [0, 1]
    assert results[0]["scores"] == results[1]["scores"]


def test_a_policy_that_raises_is_counted_and_fails_the_command(
        server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The match goes on (the first legal action is played for the policy), but the
    command says how often the policy raised and exits non-zero; a policy that cannot
    load is refused before the seat is joined (the match still waits for it)."""
    assert main(["match", "create", "--server", server.target, "--game", "twisted",
                 "--players", "2", "--seed", "9", "--option", "rounds=1", "--json"]) == 0
    created = _json_lines(capsys.readouterr().out)[-1]
    tokens = {t["seat"]: t["token"] for t in created["seat_tokens"]}
    seat_args = ["bot", "--server", server.target, "--match", created["match_id"], "--token"]
    assert main([*seat_args, tokens[0], "--policy", "no.such.module:f"]) == 2
    assert "cannot load the policy" in capsys.readouterr().err
    seats = [["--policy", "tests.rl.policies:broken"], ["--strategy", "random"]]
    with ThreadPoolExecutor(2) as pool:
        codes = list(pool.map(lambda seat: main(
            [*seat_args, tokens[seat], *seats[seat], "--json"]), [0, 1]))
    assert codes == [1, 0]
    captured = capsys.readouterr()
    results = {r["seat"]: r for r in _json_lines(captured.out)}
    assert results[0]["bot_errors"] > 0 and results[1]["bot_errors"] == 0
    said = " ".join(captured.err.split())
    assert "raised on" in said and "(first: FileNotFoundError: weights.npz)" in said


def test_a_bad_policy_is_refused_with_the_reason() -> None:
    for spec, why in [("nocolon", "MODULE:CALLABLE"), ("no.such.module:f", "cannot import"),
                      ("tests.rl.policies:NOT_CALLABLE", "no callable"),
                      ("missing.py:f", "does not exist")]:
        with pytest.raises(ValueError, match=why):
            load_policy(spec)
    assert main(["evaluate", "--game", "twisted", "--players", "2",
                 "--bots", "policy:no.such.module:f,random"]) == 2
    bot = policy_bot_of("tests.rl.policies:illegal")
    state = engine.make("twisted", 2, 1)
    seat = state.to_act()[0]
    with pytest.raises(ValueError, match="not legal"):
        bot(state.observation(seat), state.legal_actions(seat))


def test_bench_rl_reports_every_rate(capsys: pytest.CaptureFixture[str]) -> None:
    before = os.getloadavg()[0]
    assert main(["bench", "rl", "--game", "twhist", "--games", "1", "--seconds", "0",
                 "--json"]) == 0
    after = os.getloadavg()[0]
    report = _json_lines(capsys.readouterr().out)[-1]
    # The machine's one-minute load as the figures were taken: the load the
    # figures were measured under (it moves little within a few seconds).
    assert min(before, after) - 0.5 <= report["load_average"] <= max(before, after) + 0.5
    assert report["compiled"] is True  # the figures are of the compiled tensors
    cases = report["cases"]
    assert [(c["game"], c["players"]) for c in cases] == [("twhist", 3), ("twhist", 4),
                                                         ("twhist", 5)]
    for case in cases:
        for key in ("raw_steps_per_s", "observe_steps_per_s", "mask_steps_per_s",
                    "observe_ratio", "mask_ratio", "raw_us_per_step", "observe_us_per_step",
                    "mask_us_per_step"):
            assert case[key] > 0


def test_bench_rl_measures_the_python_paths_when_asked_and_then_puts_them_back(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--python-tensors`` turns the compiled writers off while it measures; when
    it returns (run in this process) they are as they were, on or off."""
    try:
        assert native.in_use()
        assert main(["bench", "rl", "--game", "twisted", "--games", "1", "--seconds", "0",
                     "--turns", "1", "--python-tensors", "--json"]) == 0
        assert native.in_use() and native.compiled_mask is not None
        report = _json_lines(capsys.readouterr().out)[-1]
        assert report["compiled"] is False
        assert all(case["observe_steps_per_s"] > 0 for case in report["cases"])
        native.use_compiled(False)
        assert main(["bench", "rl", "--game", "twisted", "--games", "1", "--seconds", "0",
                     "--turns", "1", "--json"]) == 0
        assert not native.in_use()
        assert _json_lines(capsys.readouterr().out)[-1]["compiled"] is False
    finally:
        native.use_compiled(True)


def test_bench_rl_peers_reports_every_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "rl", "--peers", "--game", "twhist", "--turns", "1", "--seconds", "0",
                 "--json"]) == 0
    report = _json_lines(capsys.readouterr().out)[-1]
    assert report["peers"] == ["hearts", "spades", "bridge", "skat", "oh_hell", "euchre"]
    assert all(report["peer_rates"][k] > 0 for k in ("random", "tensor", "clone"))
    assert report["engine_compiled"] is engine.compiled()
    paths = {"raw", "mask", "spiel", "observe", "spiel_tensor", "clone"}
    assert set(report["median"]) == paths
    for case in report["cases"]:
        assert set(case["ratios"]) == paths and all(r > 0 for r in case["ratios"].values())
