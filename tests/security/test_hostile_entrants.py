"""Hostile entrants: real programs in the real sandbox, through the real bridge
(``ProgramBot``, as ``tournament --entrants exec:`` and ``bot --exec --sandbox`` run
them), in one real match against a real server.

Three entrants, each in a folder of its own as uploads are: ``quiet`` tries every
attempt of ``entrants/hostile.py`` at start-up and reports each on stderr, then
plays; ``stdout`` answers every decision with 1 GiB on one line; ``stderr`` writes
1 GiB to stderr, then plays. Each attempt is judged on its own below, from the
program's report and from the host: the attempt failed, the match went on to its
end, the host's files are unchanged, no process is left behind, and what the
bridge can detect is recorded against the entrant (``ProgramStats``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.bridge import ProgramBot, ProgramStats, play_bridged
from twistarena.clients.sandbox import SandboxLimits, cgroups, sandbox_mode
from twistarena.clients.sdk import ArenaClient, MatchResult

from tests.support.sandboxed import program_folder

HOSTILE = Path(__file__).resolve().parent / "entrants" / "hostile.py"
MODES = ("quiet", "stdout", "stderr")
LIMITS = SandboxLimits(memory_mb=256, processes=32, tmp_mb=16, open_files=64, cpu_seconds=30)
GIB = 1 << 30
#: Where a host keeps things no entrant may see (none of them is mounted).
HOST_PATHS = ("/root", "/home", "/work", "/var", "/srv", "/opt", "/sys", "/etc/passwd",
              "/etc/shadow", "/etc/hostname", "/proc/1/root/etc/passwd", "/run")


@dataclass
class Outcome:
    """What one hostile match left: the quiet entrant's reports, every entrant's
    stats and result, and the host's view before and after."""

    reports: dict[str, dict[str, Any]]
    stats: dict[str, ProgramStats]
    results: dict[str, MatchResult]
    secrets: list[str]
    hashes_before: dict[str, str]
    hashes_after: dict[str, str]
    daemon_marker: str
    seat_timeouts: dict[str, int]
    decisions: dict[str, int]
    #: What this process's (the bridge's) open descriptors point to, before and after.
    fds: tuple[list[str], list[str]]


def _hashes(*folders: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders for p in sorted(folder.rglob("*")) if p.is_file()}


def _open_files() -> list[str]:
    """What each open descriptor of this process points to (pipes without their inode)."""
    targets = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            targets.append(target.split("[")[0] if target.startswith("pipe:") else target)
    return targets


def _sandbox_processes(marker: str) -> list[str]:
    """Host processes whose command line carries ``marker`` (the daemon's)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline.split():
                found.append(f"{entry.name}: {cmdline}")
    return found


@pytest.fixture(scope="module")
def outcome(server: Any, valkey: Any,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    with program_folder("ta-uploads-") as uploads:
        yield from _hostile_match(server, valkey, tmp_path_factory, uploads)


def _hostile_match(server: Any, valkey: Any, tmp_path_factory: pytest.TempPathFactory,
                   uploads: Path) -> Iterator[Outcome]:
    """Play the match (see the module docstring) and tell what it left."""
    mode = sandbox_mode("bwrap")  # no bubblewrap: the suite fails here, it does not skip
    folders = {m: uploads / m for m in MODES}
    victim_marker = f"VICTIM-{secrets.token_hex(8)}"
    for name, folder in folders.items():
        folder.mkdir()
        shutil.copy(HOSTILE, folder / "hostile.py")
        (folder / "secret.txt").write_text(f"{victim_marker} of {name}\n")
    data_dir = tmp_path_factory.mktemp("runner-data")
    (data_dir / "state.json").write_text(f'{{"token": "{secrets.token_hex(16)}"}}\n')
    host_secret = secrets.token_hex(16)
    os.environ["ARENA_HOST_API_TOKEN"] = host_secret
    daemon_marker = f"{86000 + secrets.randbelow(9000)}.{secrets.randbelow(999)}"
    victim = folders["stderr"]
    config = {
        "victim_paths": [str(victim / "secret.txt"), str(victim / "hostile.py"), str(victim)],
        "victim_marker": victim_marker,
        "host_paths": [*HOST_PATHS, str(data_dir), str(data_dir / "state.json"),
                       str(valkey.data_dir), str(uploads)],
        "host_files": [str(data_dir / "state.json"), "/etc/passwd", "/etc/hostname"],
        "runner_pid": os.getpid(), "ports": [server.port, valkey.port],
        "tmp_mb": LIMITS.tmp_mb, "daemon_marker": daemon_marker}
    hashes_before = _hashes(uploads, data_dir)
    fds_before = _open_files()

    async def play() -> tuple[dict[str, MatchResult], dict[str, ProgramBot], dict[str, int],
                              list[str]]:
        client = ArenaClient(server.target)
        created = await client.create_match("tricky_twist", 3, seed=25, decision_ms=15_000)
        tokens = [t.token for t in created.seat_tokens]
        bots = {m: ProgramBot(["python3", "hostile.py", m, json.dumps(config)],
                              sandbox=mode, code_dir=folders[m], limits=LIMITS,
                              name=f"hostile-{m}") for m in MODES}
        results = await asyncio.gather(*(
            play_bridged(bots[m], server=server.target, match_id=created.match.match_id,
                         token=tokens[i], no_events=True) for i, m in enumerate(MODES)))
        match = await client.get_match(created.match.match_id)
        timeouts = {m: match.seats[i].timeouts for i, m in enumerate(MODES)}
        return dict(zip(MODES, results, strict=True)), bots, timeouts, tokens

    try:
        results, bots, timeouts, tokens = asyncio.run(asyncio.wait_for(play(), 120))
    finally:
        del os.environ["ARENA_HOST_API_TOKEN"]
    tail = bots["quiet"].stats.stderr_tail.decode(errors="replace")
    reports = {}
    for line in tail.splitlines():
        if line.startswith("HOSTILE {"):
            report = json.loads(line.removeprefix("HOSTILE "))
            reports[report["attempt"]] = report
    hashes_after = _hashes(uploads, data_dir)
    yield Outcome(reports, {m: b.stats for m, b in bots.items()}, results,
                  [host_secret, *tokens], hashes_before, hashes_after,
                  daemon_marker, timeouts, {m: b.stats.decisions for m, b in bots.items()},
                  (fds_before, _open_files()))


def _report(outcome: Outcome, attempt: str) -> dict[str, Any]:
    assert attempt in outcome.reports, f"no report of {attempt}: {sorted(outcome.reports)}"
    return outcome.reports[attempt]


def test_the_match_goes_on_to_its_end_and_the_host_is_unchanged(outcome: Outcome) -> None:
    assert {r.reason for r in outcome.results.values()} == {"COMPLETED"}
    assert len(outcome.hashes_before) == 7  # 3 entrants x 2 files, the runner's state
    assert outcome.hashes_after == outcome.hashes_before
    assert _sandbox_processes(outcome.daemon_marker) == []
    assert not [p for p in Path("/sys/fs/cgroup/pids").rglob(f"p{os.getpid()}-*")]
    # The bridge kept no pipe or file of the programs it ran.
    before, after = outcome.fds
    kept = [f for f in after if f not in before or after.count(f) > before.count(f)]
    assert not [f for f in kept if f.startswith(("pipe:", "/memfd:"))], kept


@pytest.mark.parametrize("attempt", ["read_other_entrant", "read_host_paths", "write_files"])
def test_files_outside_its_own_folder_cannot_be_read_or_written(outcome: Outcome,
                                                                attempt: str) -> None:
    report = _report(outcome, attempt)
    assert report["succeeded"] is False, report["detail"]
    if attempt == "write_files":
        assert all(v != "written" for v in report["detail"].values())
        assert outcome.hashes_after == outcome.hashes_before
    else:
        assert all(how == "refused" for path, (how, _) in report["detail"].items()
                   if path != "/bot/../.."), report["detail"]


def test_the_environment_tokens_and_data_dir_of_the_host_stay_hidden(outcome: Outcome) -> None:
    report = _report(outcome, "read_environment")
    assert report["succeeded"] is False
    seen = json.dumps(report["detail"])
    for secret in outcome.secrets:
        assert secret not in seen
    assert set(report["detail"]["environ"]) <= {"PATH", "HOME", "LANG", "PWD"}
    for process in report["detail"]["processes"].values():
        variables = {v.partition("=")[0] for v in process["environ"].split()}
        assert variables <= {"PATH", "HOME", "LANG", "PWD"}, process
        assert "PWD=/bot" in process["environ"] or not variables, process


def test_other_processes_cannot_be_seen_through_proc(outcome: Outcome) -> None:
    report = _report(outcome, "proc_snoop")
    assert report["succeeded"] is False, report["detail"]["unexpected"]
    assert max(report["detail"]["pids"]) < 64  # its own PID namespace: only its tree
    assert report["detail"]["runner_environ"][0] != "read" or not any(
        s in report["detail"]["runner_environ"][1] for s in outcome.secrets)


def test_no_connection_to_the_server_or_anywhere(outcome: Outcome) -> None:
    report = _report(outcome, "network")
    assert report["succeeded"] is False, report["detail"]
    assert report["detail"]["interfaces"] == ["lo"] and report["detail"]["routes"] == []
    assert "connected" not in report["detail"]["connections"].values()


def test_a_fork_bomb_stops_at_the_process_cap_and_is_recorded(outcome: Outcome) -> None:
    report = _report(outcome, "fork_bomb")
    assert report["succeeded"] is False
    assert report["detail"]["forked"] < LIMITS.processes
    assert report["detail"]["then"].startswith("EAGAIN")
    if "pids" in cgroups.controllers():  # what counts the refusals (else an rlimit)
        assert outcome.stats["quiet"].process_limit_hits > 0


def test_allocating_4_gib_fails_and_is_recorded(outcome: Outcome) -> None:
    report = _report(outcome, "allocate_4gib")
    assert report["succeeded"] is False, report["detail"]
    assert outcome.stats["quiet"].oom_kills >= 1 or report["detail"] == "MemoryError"


def test_tmp_and_home_stop_at_their_cap(outcome: Outcome) -> None:
    report = _report(outcome, "fill_tmp")
    assert report["succeeded"] is False
    for written in report["detail"].values():
        assert written["then"] == "ENOSPC" and written["bytes"] <= LIMITS.tmp_mb << 20
    assert not Path("/tmp/hostile-fill").exists()


def test_a_daemon_does_not_outlive_the_match(outcome: Outcome) -> None:
    report = _report(outcome, "leave_daemon")
    assert report["succeeded"] is True  # it did start one, inside the sandbox...
    assert _sandbox_processes(outcome.daemon_marker) == []  # ...which died with it


def test_limits_cannot_be_raised(outcome: Outcome) -> None:
    report = _report(outcome, "raise_limits")
    assert report["succeeded"] is False, report["detail"]
    assert report["detail"]["RLIMIT_NOFILE"].startswith("ValueError")


def test_ptrace_is_refused(outcome: Outcome) -> None:
    report = _report(outcome, "ptrace")
    assert report["succeeded"] is False, report["detail"]
    assert set(report["detail"].values()) == {"EPERM"}


def test_1_gib_on_stdout_is_an_illegal_output_settled_at_once(outcome: Outcome) -> None:
    stats = outcome.stats["stdout"]
    assert stats.illegal_outputs == 4 and stats.restarts == 3 and stats.answered == 0
    # After the third restart the fallback played the seat to the end of the match.
    assert outcome.seat_timeouts["stdout"] == outcome.decisions["stdout"]


def test_1_gib_on_stderr_is_drained_and_only_its_end_kept(outcome: Outcome) -> None:
    stats = outcome.stats["stderr"]
    assert stats.stderr_bytes > GIB
    assert len(stats.stderr_tail) <= 64 * 1024
    assert stats.stderr_tail.endswith(b"HOSTILE done flooding stderr\n")
    assert stats.answered == outcome.decisions["stderr"] and stats.restarts == 0


def test_the_quiet_entrant_played_every_decision_after_its_attempts(outcome: Outcome) -> None:
    stats = outcome.stats["quiet"]
    assert stats.restarts == 0 and stats.answered == outcome.decisions["quiet"]
    assert outcome.seat_timeouts["quiet"] == 0
    assert len(outcome.reports) == 12
    # The CPU time of every answered decision is measured, for the author's report.
    assert stats.cpu_measured == stats.answered
    assert stats.cpu_ms_max >= stats.cpu_ms_mean > 0
