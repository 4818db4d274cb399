"""A hosted entrant that hunts for secrets on its runner finds none.

Real parts: ``twistarena serve`` with one runner process (bubblewrap sandbox),
two hosted agents submitted with ``twistarena submit``. The spy's program,
started by the runner for its seat, searches everything it can open: its
environment, every /proc/<pid>/environ and cmdline it can see (written out
whole, for the test to look for the runner token in), and every file outside
the system directories (the runner's cache of the other agent's version, the
runner's and the server's token, their home). It writes what it
found to stderr and exits; the runner records the crash with the tail of its
stderr, which the spy's author reads with ``agent show``. Nothing is found,
and the match goes on: the other agent's seat plays on, and the match ends
by the rules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from twistarena.clients.cli import main as cli
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.clients.sdk.versions import VersionClient
from twistarena.v1 import match_pb2 as mpb

from tests.support.hosting import (
    FIRST_LEGAL,
    Arena,
    agent_show,
    finished_match,
    running_arena,
    submit_agent,
)
from tests.support.waiting import wait_until

#: In the victim's source: the spy must not be able to read it.
VICTIM_MARK = "VICTIM" + "-SOURCE-7f3a"

#: Searches what it can open for the marks below, reports on stderr, exits.
SPY = r'''
import os, sys
marks = [b"TWISTARENA_RUNNER" + b"_TOKEN", b"VICTIM" + b"-SOURCE"]
found, files = [], 0

def look(path, show=False):
    global files
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 16)
    except OSError:
        return
    files += 1
    if show:  # what other processes run with: the test looks for the runner's token
        print("PROC", path, data[:2000], file=sys.stderr)
    for mark in marks:
        at = data.find(mark)
        if at >= 0 and not path.startswith("/bot/"):
            found.append(f"{path}: {data[max(0, at - 20):at + 60]!r}")

for name, value in os.environ.items():
    for mark in marks:
        if mark.decode() in name or mark.decode() in value:
            found.append(f"env {name}={value}")
for pid in os.listdir("/proc"):
    if pid.isdigit():
        look(f"/proc/{pid}/environ", show=True)
        look(f"/proc/{pid}/cmdline", show=True)
for top in os.listdir("/"):
    if top in ("proc", "sys", "dev", "usr", "bin", "lib", "lib64", "sbin"):
        continue
    for root, dirs, names in os.walk("/" + top):
        for name in names:
            if files < 20000:
                look(os.path.join(root, name))
home = os.path.expanduser("~")
print(f"SCAN-DONE files={files} found={len(found)} home={home} cwd={os.getcwd()}",
      file=sys.stderr)
for line in found:
    print("FOUND", line, file=sys.stderr)
sys.stderr.flush()
sys.exit(3)
'''


@pytest.fixture(scope="module")
def arena() -> Iterator[Arena]:
    with running_arena(runners=1) as started:
        yield started


def test_a_hosted_entrant_finds_no_secret_of_the_runner_or_the_other_entrant(
        arena: Arena, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = arena.serve.target
    victim, _ = submit_agent(target, "victim", {"bot.py": f"# {VICTIM_MARK}\n{FIRST_LEGAL}"},
                             "python3 bot.py", capsys, tmp_path)
    spy, spy_token = submit_agent(target, "spy", {"bot.py": SPY}, "python3 bot.py", capsys,
                                  tmp_path)
    assert cli(["tournament", "create", "--server", target, "--game", "tricky_twist",
                "--players", "3", "--entrants", f"agent:{victim},agent:{spy},random",
                "--decision-ms", "1000", "--parallel", "1", "--no-follow"]) == 0
    tid = capsys.readouterr().out.split("tournament ", 1)[1].split(":", 1)[0].strip()
    mid = f"t{tid}-0-0"

    async def go() -> Any:
        match = await finished_match(target, mid, "the first game is over")
        versions = VersionClient(target, api_token=spy_token)

        async def recorded() -> Any:
            [version] = (await versions.details(spy)).versions
            return version.stats.failures

        await wait_until(recorded, "the spy's failure is recorded")

        async def victim_played() -> Any:
            [version] = (await versions.details(victim)).versions
            return version.stats if version.stats.matches else None

        played = await wait_until(victim_played, "the victim's seat is reported")
        await TournamentClient(target).cancel(tid, "enough")
        return match, played

    match, victim_stats = asyncio.run(go())
    # The match went on without the spy's program: it ended by the rules.
    assert match.result.reason == mpb.END_REASON_COMPLETED
    shown = agent_show(target, spy, spy_token, capsys)
    [version] = shown["versions"]
    assert version["stats"]["crashes"] >= 1
    tails = "\n".join(f["stderr_tail"] for f in version["stats"]["failures"])
    assert "SCAN-DONE" in tails, tails[-2000:]
    assert "found=0" in tails and "FOUND" not in tails, tails[-4000:]
    assert arena.runner_token not in tails
    assert "home=/tmp/home cwd=/bot" in tails
    # The runner stayed healthy: the victim's program played its seat to the end.
    assert victim_stats.crashes == victim_stats.timeouts == 0
    assert victim_stats.decisions > 0
