"""Hostile entrants: real programs in the real sandbox, through the real bridge
(``ProgramBot``, as ``tournament --entrants exec:`` and ``bot --exec --sandbox`` run
them), in one real match against a real server.

Three entrants, each in a folder of its own as uploads are: ``quiet`` tries every
attempt of ``entrants/hostile.py`` at start-up and reports each on stderr, then
plays; ``stdout`` answers every decision with 1 GiB on one line; ``stderr`` writes
1 GiB to stderr, then plays. Each attempt is judged on its own below, from the
program's report and from the host: the attempt failed, the match went on to its
end, the host's files are unchanged, no process is left behind, and what the
bridge can detect is recorded against the entrant (``ProgramStats``). A second
match, of short decisions, holds the entrants that cost their seat restarts:
``forkbomb``, ``silent`` and ``burn`` (processes left spinning between decisions).

Both matches are played twice when the tests run as root: with the bridge in this
process (``serve`` started as root), and with each seat's bridge in a process of
uid 10001 (``seat_process.py``: the packaged image's user, with no cgroup of its
own). The same tests judge both.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from twistarena.bridge import ProgramBot, ProgramStats, play_bridged
from twistarena.bridge.program import MAX_RESTARTS
from twistarena.clients.sdk import MatchClient
from twistarena.sandbox import SandboxLimits, SandboxSpec, cgroups, sandbox_mode
from twistarena.sandbox.launch import _tree, kill_tree, start, wait_ready

from tests.support.sandboxed import program_folder

HOSTILE = Path(__file__).resolve().parent / "entrants" / "hostile.py"
SEAT_PROCESS = Path(__file__).resolve().parent / "seat_process.py"
MODES = ("quiet", "stdout", "stderr")
#: The entrants of the second match (short decisions): each costs its seat restarts.
RESTLESS = ("forkbomb", "silent", "burn")
LIMITS = SandboxLimits(memory_mb=256, processes=32, tmp_mb=16, open_files=64, cpu_seconds=30,
                       cpu_cores=1.0, idle_cpu_seconds=0.3)
#: The packaged image's user (deploy/Dockerfile).
IMAGE_UID = 10001
#: Who runs the bridge: this process, and (as root) a process of the image's uid.
BRIDGES = ("this-process", "image-uid") if os.getuid() == 0 else ("this-process",)
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
    #: How each seat's match ended (MatchResult.reason).
    results: dict[str, str]
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


@pytest.fixture(scope="module", params=BRIDGES)
def bridge(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def outcome(server: Any, valkey: Any, bridge: str,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    with program_folder("ta-uploads-") as uploads:
        yield from _hostile_match(server, valkey, tmp_path_factory, uploads, MODES,
                                  bridge, decision_ms=15_000)


@pytest.fixture(scope="module")
def restless(server: Any, valkey: Any, bridge: str,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    with program_folder("ta-uploads-") as uploads:
        yield from _hostile_match(server, valkey, tmp_path_factory, uploads, RESTLESS,
                                  bridge, decision_ms=1_500)


async def _play_seat(bridge: str, bot: ProgramBot, argv: list[str], code_dir: Path,
                     server: str, match_id: str, token: str) -> tuple[str, ProgramStats]:
    """Play one seat: in this process, or from a process of ``IMAGE_UID``."""
    if bridge == "this-process":
        result = await play_bridged(bot, server=server, match_id=match_id, token=token,
                                    no_events=True)
        return result.reason, bot.stats
    limits = {f: getattr(LIMITS, f) for f in LIMITS.__slots__}
    args = {"server": server, "match_id": match_id, "token": token, "argv": argv,
            "code_dir": str(code_dir), "limits": limits, "name": bot.name}
    uid = str(IMAGE_UID)
    proc = await asyncio.create_subprocess_exec(
        "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
        sys.executable, str(SEAT_PROCESS), json.dumps(args), cwd="/",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode(errors="replace")[-4000:]
    played = json.loads(out.decode().strip().splitlines()[-1])
    fields = played["stats"]
    fields["stderr_tail"] = bytearray(fields["stderr_tail"].encode("latin-1"))
    return played["reason"], ProgramStats(**fields)


def _hostile_match(server: Any, valkey: Any, tmp_path_factory: pytest.TempPathFactory,
                   uploads: Path, modes: tuple[str, ...], bridge: str,
                   decision_ms: int) -> Iterator[Outcome]:
    """Play the match (see the module docstring) and tell what it left."""
    mode = sandbox_mode("bwrap")  # no bubblewrap: the suite fails here, it does not skip
    folders = {m: uploads / m for m in modes}
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
    victim = folders[modes[-1]]
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

    async def play() -> tuple[dict[str, tuple[str, ProgramStats]], dict[str, int],
                              list[str]]:
        client = MatchClient(server.target)
        created = await client.create_match("tricky_twist", 3, seed=25,
                                            decision_ms=decision_ms)
        tokens = [t.token for t in created.seat_tokens]
        argvs = {m: ["python3", "hostile.py", m, json.dumps(config)] for m in modes}
        bots = {m: ProgramBot(argvs[m], sandbox=mode, code_dir=folders[m], limits=LIMITS,
                              name=f"hostile-{m}") for m in modes}
        played = await asyncio.gather(*(
            _play_seat(bridge, bots[m], argvs[m], folders[m], server.target,
                       created.match.match_id, tokens[i]) for i, m in enumerate(modes)))
        match = await client.get_match(created.match.match_id)
        timeouts = {m: match.seats[i].timeouts for i, m in enumerate(modes)}
        return dict(zip(modes, played, strict=True)), timeouts, tokens

    try:
        played, timeouts, tokens = asyncio.run(asyncio.wait_for(play(), 120))
    finally:
        del os.environ["ARENA_HOST_API_TOKEN"]
    stats = {m: s for m, (_, s) in played.items()}
    tail = stats[modes[0]].stderr_tail.decode(errors="replace")
    reports = {}
    for line in tail.splitlines():
        if line.startswith("HOSTILE {"):
            report = json.loads(line.removeprefix("HOSTILE "))
            reports[report["attempt"]] = report
    hashes_after = _hashes(uploads, data_dir)
    yield Outcome(reports, stats, {m: r for m, (r, _) in played.items()},
                  [host_secret, *tokens], hashes_before, hashes_after,
                  daemon_marker, timeouts, {m: s.decisions for m, s in stats.items()},
                  (fds_before, _open_files()))


def _report(outcome: Outcome, attempt: str) -> dict[str, Any]:
    assert attempt in outcome.reports, f"no report of {attempt}: {sorted(outcome.reports)}"
    return outcome.reports[attempt]


def test_the_match_goes_on_to_its_end_and_the_host_is_unchanged(outcome: Outcome) -> None:
    assert set(outcome.results.values()) == {"COMPLETED"}
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


def test_a_fork_bomb_stops_at_the_process_cap_and_is_recorded(outcome: Outcome,
                                                              bridge: str) -> None:
    report = _report(outcome, "fork_bomb")
    assert report["succeeded"] is False
    assert report["detail"]["forked"] < LIMITS.processes
    assert report["detail"]["then"].startswith("EAGAIN")
    # What counts the refusals, where the bridge could make one (else an rlimit).
    if bridge == "this-process" and "pids" in cgroups.controllers():
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
    assert len(outcome.reports) == 16
    # The CPU time of every answered decision is measured, for the author's report.
    assert stats.cpu_measured == stats.answered
    assert stats.cpu_ms_max >= stats.cpu_ms_mean > 0


def test_kernel_settings_cannot_be_changed_through_proc(outcome: Outcome) -> None:
    report = _report(outcome, "kernel_settings")
    assert report["succeeded"] is False, report["detail"]
    assert set(report["detail"]["writes"].values()) <= {"EROFS", "EACCES", "EPERM"}
    assert report["detail"]["writable_count"] == 0, report["detail"]["writable"]


def test_no_process_of_a_program_is_host_root() -> None:
    """Whoever starts it (here: this process, root when the suite runs as root), every
    process of a sandboxed program has an unprivileged host uid."""
    with program_folder() as folder:
        (folder / "wait.py").write_text("import os, sys\nif os.fork() == 0:\n"
                                        "    sys.stdin.read()\nsys.stdin.read()\n")

        async def uids() -> set[int]:
            proc = await start(SandboxSpec(folder, ["python3", "wait.py"], limits=LIMITS),
                               sandbox_mode())
            try:
                await wait_ready(proc, 30)
                found: set[int] = set()
                for pid in _tree(proc.pid)[1:]:  # [0] is the launcher's shell
                    status = Path(f"/proc/{pid}/status").read_text()
                    uid_line = next(line for line in status.splitlines()
                                    if line.startswith("Uid:"))
                    found.update(int(u) for u in uid_line.split()[1:])
                return found
            finally:
                await kill_tree(proc)

        found = asyncio.run(uids())
    assert found and 0 not in found, found


def test_sockets_that_reach_past_the_sandbox_are_refused(outcome: Outcome) -> None:
    report = _report(outcome, "other_sockets")
    assert report["succeeded"] is False, report["detail"]
    assert set(report["detail"].values()) == {"EAFNOSUPPORT"}, report["detail"]


def test_forbidden_calls_fail_by_the_filter(outcome: Outcome) -> None:
    """The errors are the filter's: with these arguments the kernel alone would have
    answered otherwise (a key id, EINVAL, EFAULT, success)."""
    report = _report(outcome, "forbidden_syscalls")
    assert report["succeeded"] is False, report["detail"]
    assert report["detail"] == {"keyctl": "EPERM", "bpf": "EPERM", "perf_event_open": "EPERM",
                                "userfaultfd": "EPERM", "io_uring_setup": "ENOSYS",
                                "kcmp": "ENOSYS", "unshare": "ENOSYS", "syslog": "ENOSYS"}


def test_the_mount_table_shows_no_host_path(outcome: Outcome) -> None:
    report = _report(outcome, "mountinfo")
    assert report["succeeded"] is False, report["detail"]["leaked"]
    for mode in MODES:  # the folder names of the uploads
        assert f"/{mode}" not in report["detail"]["mountinfo"].replace("/proc/", "")


def test_the_environment_is_the_one_the_docs_name(outcome: Outcome) -> None:
    """docs/bots.md#the-sandbox names every variable a program finds (no TWISTARENA_*
    one is passed here)."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text()
    section = docs.partition("## The sandbox")[2].partition("\n## ")[0]
    bullet = next(b for b in section.split("\n- ") if b.startswith("an environment of"))
    named = {w.strip("`,=") for w in bullet.split() if w.startswith("`")}
    named = {w.partition("=")[0] for w in named if not w.startswith("TWISTARENA_")}
    seen = _report(outcome, "read_environment")["detail"]["environ"]
    assert set(seen) == named, (sorted(seen), sorted(named))


def _starts(stats: ProgramStats) -> int:
    """How often the program started (each start says so on stderr)."""
    return stats.stderr_tail.count(b"HOSTILE started\n")


@pytest.mark.parametrize("entrant", ["forkbomb", "silent"])
def test_a_program_that_never_answers_is_restarted_at_most_the_cap(restless: Outcome,
                                                                   entrant: str) -> None:
    stats = restless.stats[entrant]
    assert stats.restarts == MAX_RESTARTS, stats
    assert _starts(stats) == MAX_RESTARTS + 1
    assert stats.answered == 0 and stats.timeouts == MAX_RESTARTS + 1
    # After its last start failed, the fallback played the rest of its match.
    assert restless.seat_timeouts[entrant] == restless.decisions[entrant]


def test_cpu_burnt_between_decisions_stops_the_program(restless: Outcome) -> None:
    stats = restless.stats["burn"]
    assert stats.cpu_overruns >= 1, stats
    assert _starts(stats) == stats.restarts + 1 <= MAX_RESTARTS + 1
    assert stats.answered > 0
    # Each start is stopped soon after its budget: one look (0.25 s) of at most
    # every core, and the kill.
    budget_ms = LIMITS.idle_cpu_seconds * 1000
    assert stats.cpu_ms_between <= (stats.restarts + 1) * (budget_ms + 2 * 1000), stats


def test_the_restless_match_goes_on_to_its_end(restless: Outcome) -> None:
    assert set(restless.results.values()) == {"COMPLETED"}
    assert not [p for p in Path("/sys/fs/cgroup/pids").rglob(f"p{os.getpid()}-*")]
