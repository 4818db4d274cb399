"""``twistarena chaos``: the same seed gives the same fault schedule; the
checker calls an unannounced loss a violation; and a seeded campaign of about
half a minute (every fault kind, runners among them; SDK agents, protocol-only
bots, programs through the bridge, hosted practice matches, an arena, a
tournament and spectators over three nodes) ends with no violation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from twistarena.clients.sdk import MatchResult
from twistarena.tools.chaos.checker import _seat_lost
from twistarena.tools.chaos.nemesis import KINDS_BY_STORE, schedule
from twistarena.tools.chaos.workload import SeatRecord
from twistarena.v1 import match_pb2 as mpb


def _cli(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "twistarena.clients.cli", "chaos", *args],
                          capture_output=True, text=True, timeout=timeout, check=False)


def test_the_same_seed_gives_the_same_fault_schedule() -> None:
    first = _cli("--schedule", "--seed", "11", "--duration", "600", timeout=60)
    again = _cli("--schedule", "--seed", "11", "--duration", "600", timeout=60)
    other = _cli("--schedule", "--seed", "12", "--duration", "600", timeout=60)
    assert first.returncode == 0, first.stderr
    assert first.stdout == again.stdout
    assert first.stdout != other.stdout
    planned = json.loads(first.stdout)
    assert {f["kind"] for f in planned} == set(KINDS_BY_STORE["embedded"])
    assert [f["at"] for f in planned] == sorted(f["at"] for f in planned)
    assert schedule(11, 600, 5.0, KINDS_BY_STORE["embedded"], 3)[0].planned() == planned[0]


def _log(*entries: tuple[int, int]) -> list[mpb.RecordedAction]:
    return [mpb.RecordedAction(seat=s, action_id=a) for s, a in entries]


def test_the_checker_calls_an_unannounced_loss_a_violation() -> None:
    # Seat 1's decision opened at log position 1 (id 1 * 8 + 1 + 1), answered 5.
    seat = SeatRecord("m", 1, acks={10: (5, 0)})
    assert _seat_lost(seat, _log((0, 3), (1, 5)), voided=False) == (0, [])
    lost, silent = _seat_lost(seat, _log((0, 3)), voided=False)
    assert lost == 1 and len(silent) == 1
    seat.rewinds = [(1, 1, "the store kept 1 of 2")]  # told: back to 1 action
    assert _seat_lost(seat, _log((0, 3)), voided=False) == (1, [])
    # Asked the decision again after its acknowledgement: the loss no server can
    # announce, learned as docs/protocol.md says.
    again = SeatRecord("m", 1, acks={10: (5, 0)}, asked_again={10})
    assert _seat_lost(again, _log((0, 3)), voided=False) == (1, [])
    void = SeatRecord("m", 1, acks={10: (5, 0)},
                      heard=MatchResult((0, 0), (1, 1), (), "VOIDED"))
    assert _seat_lost(void, _log((0, 3)), voided=True) == (1, [])


def test_a_seeded_campaign_ends_without_a_violation(tmp_path: Path) -> None:
    out = tmp_path / "chaos.json"
    done = _cli("--seed", "7", "--duration", "28", "--fault-every", "2.0", "--rate", "1.5",
                "--json-out", str(out), timeout=240)
    report = json.loads(out.read_text()) if out.exists() else {}
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert report["violations"] == []
    assert {f["kind"] for f in report["faults"]} == set(KINDS_BY_STORE["embedded"])
    assert report["matches"] >= 10 and report["acknowledged"] > 500
    assert report["hosted_matches"] >= 1 and report["protocol_seats"] >= 1
    assert report["program_seats"] >= 1
    assert report["league"]["arena_rated"] >= 1 and report["league"]["tournament_games"] >= 1
