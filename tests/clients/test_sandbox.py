"""The sandbox's contract with its callers: a host without bubblewrap is refused with
the package to install (by the API and by every command that runs programs) unless
it asks for ``--sandbox none``, which warns at every start and still hides the host's
environment; a host command becomes its program's folder and a command inside it."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs
from twistarena.clients.cli import main
from twistarena.sandbox import (
    SandboxLimits,
    SandboxSpec,
    SandboxUnavailable,
    cgroups,
    cpu_ns,
    kill_tree,
    launch,
    sandbox_mode,
    spec_for_command,
    start,
)

from tests.support.sandboxed import program_folder


@pytest.fixture
def no_bubblewrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A PATH on which bwrap cannot be found (the answers are cached per process)."""
    monkeypatch.setenv("PATH", str(tmp_path))
    launch._bwrap_problem.cache_clear()
    launch._tool.cache_clear()
    yield
    launch._bwrap_problem.cache_clear()
    launch._tool.cache_clear()


def test_without_bubblewrap_the_api_refuses_and_names_the_package(no_bubblewrap: None) -> None:
    with pytest.raises(SandboxUnavailable) as refused:
        sandbox_mode()
    assert "`bubblewrap`" in str(refused.value) and "--sandbox none" in str(refused.value)
    assert sandbox_mode("none") == "none"


def test_without_bubblewrap_the_commands_refuse_before_playing(
        no_bubblewrap: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    program = tmp_path / "bot"
    program.write_text("#!/bin/sh\n")
    assert main(["bot", "--server", "127.0.0.1:9", "--match", "m", "--token", "t",
                 "--exec", str(program), "--sandbox"]) == 2
    assert "apt-get install bubblewrap" in capsys.readouterr().err
    assert main(["tournament", "create", "--server", "127.0.0.1:9", "--game", "twisted",
                 "--entrants", f"exec:{program},random"]) == 2
    assert "apt-get install bubblewrap" in capsys.readouterr().err


def test_none_runs_bare_with_a_warning_at_every_start_and_no_host_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_HOST_SECRET", "s3cret")
    spec = SandboxSpec(tmp_path, ["/bin/sh", "-c", "env; pwd"], {"TWISTARENA_SEAT": "1"})

    async def twice() -> list[bytes]:
        outputs = []
        for _ in range(2):
            proc = await start(spec, "none")
            out, _ = await proc.communicate()
            await kill_tree(proc)
            outputs.append(out)
        return outputs

    with capture_logs() as logs:
        outputs = asyncio.run(twice())
    warnings = [e for e in logs if e["log_level"] == "warning" and "WITHOUT" in e["event"]]
    assert len(warnings) == 2
    for out in outputs:
        names = {line.split("=")[0] for line in out.decode().splitlines() if "=" in line}
        assert names <= {"PATH", "HOME", "LANG", "PWD", "TWISTARENA_SEAT"}
        assert b"s3cret" not in out and str(tmp_path).encode() in out


def test_a_host_command_becomes_its_programs_folder(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob, carol = (tmp_path / "uploads" / n for n in ("alice", "bob", "carol"))
    for folder in (alice, bob, carol):
        folder.mkdir(parents=True)
    (alice / "bot").write_text("#!/bin/sh\n")
    (bob / "bot.js").write_text("")
    monkeypatch.chdir(tmp_path)
    cases: list[tuple[str, Path, list[str]]] = [
        ("uploads/alice/bot --fast", alice, ["./bot", "--fast"]),
        ("node uploads/bob/bot.js", bob, ["node", "bot.js"]),
        ("java -Xmx64m -cp uploads/carol Bot", carol, ["java", "-Xmx64m", "-cp", ".", "Bot"]),
    ]
    for command, folder, argv in cases:
        spec = spec_for_command(command)
        assert (spec.code_dir, list(spec.argv)) == (folder.resolve(), argv), command


@pytest.mark.parametrize("command,why", [
    ("python3 -c 'print(1)'", "cannot tell which folder"),
    ("/opt/tools/python3 uploads/alice/bot", "is not in the sandbox"),
])
def test_a_command_the_sandbox_cannot_hold_is_refused(command: str, why: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "uploads" / "alice").mkdir(parents=True)
    (tmp_path / "uploads" / "alice" / "bot").write_text("")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=why):
        spec_for_command(command)


def test_only_twistarena_variables_may_be_passed(tmp_path: Path) -> None:
    env: Any = {"TWISTARENA_SEAT": "0", "HOME": "/root"}
    with pytest.raises(ValueError, match="HOME"):
        SandboxSpec(tmp_path, ["true"], env)


def test_bench_sandbox_prints_its_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "sandbox", "--runs", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["mode"] == "bwrap" and figures["runs"] == 3
    for part in ("start", "kill"):
        row = figures[part]
        assert 0 < row["min_ms"] <= row["median_ms"] <= row["max_ms"]


BOMB = """
import errno, os, signal, sys
children, refused = [], ""
try:
    for _ in range(500):
        pid = os.fork()
        if pid == 0:
            signal.pause()
            os._exit(0)
        children.append(pid)
except OSError as error:
    refused = errno.errorcode[error.errno]
for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
try:
    block = bytearray(2 << 30)
    memory = "allocated"
except MemoryError:
    memory = "MemoryError"
print(len(children), refused, memory, flush=True)
sys.stdin.readline()
"""


def test_without_a_cgroup_the_rlimits_still_cap_processes_and_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A host where no cgroup can be made (as a container's non-root user): the
    process rlimit, set inside the sandbox (as root, bubblewrap runs as nobody so
    that it binds), stops a fork bomb, and the address space stops 2 GiB; CPU time
    is then read from /proc."""
    monkeypatch.setattr(cgroups, "create", lambda *limits: None)
    with program_folder() as folder:
        (folder / "bomb.py").write_text(BOMB)
        limits = SandboxLimits(memory_mb=256, processes=16)
        spec = SandboxSpec(folder, ["python3", "bomb.py"], limits=limits)

        async def play() -> tuple[str, int | None]:
            proc = await start(spec, sandbox_mode())
            assert proc.stdout is not None and proc.stdin is not None
            line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
            used = cpu_ns(proc)
            proc.stdin.close()
            await kill_tree(proc)
            return line, used

        line, used = asyncio.run(play())
    forked, refused, memory = line.split()
    assert int(forked) < limits.processes and refused == "EAGAIN"
    assert memory == "MemoryError"
    assert used is not None and used > 0


SPINNERS = """
import os, sys
for _ in range(3):
    if os.fork() == 0:
        while True:
            pass
print("spinning", flush=True)
sys.stdin.read()
"""


@pytest.mark.serial  # measures the CPU the spinners get: alone, as the quota is the cap
def test_a_cpu_quota_caps_the_whole_tree() -> None:
    """Three processes spinning get half a core between them, where the host lets the
    sandbox have a cpu cgroup (a root host does; elsewhere the CPU-seconds rlimit is
    the cap, and the bridge stops CPU burnt between decisions)."""
    if "cpu" not in cgroups.controllers():
        assert os.getuid() != 0, "a root host can give a sandbox a cpu cgroup"
        return
    with program_folder() as folder:
        (folder / "spin.py").write_text(SPINNERS)
        spec = SandboxSpec(folder, ["python3", "spin.py"],
                           limits=SandboxLimits(cpu_cores=0.5, cpu_seconds=30))

        async def rate() -> float:
            proc = await start(spec, sandbox_mode())
            try:
                assert proc.stdout is not None
                assert await asyncio.wait_for(proc.stdout.readline(), 30) == b"spinning\n"
                loop = asyncio.get_running_loop()
                before, started = cpu_ns(proc), loop.time()
                await asyncio.sleep(1.0)
                after, ended = cpu_ns(proc), loop.time()
                assert before is not None and after is not None
                return (after - before) / 1e9 / (ended - started)
            finally:
                await kill_tree(proc)

        cores = asyncio.run(rate())
    assert 0 < cores < 0.5 * 1.3, cores  # less when the host is busy
