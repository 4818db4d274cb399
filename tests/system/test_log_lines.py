"""One record per line on ``serve``'s stdout while runners' lines are passed on.

``serve`` forwards each runner's (and worker's) output from a thread of its own
while its event loop logs. A line from one source must never land inside a
line of the other: tests and log shippers read the stream one JSON record per
line, and a mixed line loses both records (a tournament's "runner_seat_reported"
was lost that way, in a full test run).

Real parts: a Python process that configures logging as ``serve`` does and runs
a ``Worker`` forwarder over a real child process printing JSON lines, its
stdout a file, as in ``ServeProcess``; unbuffered, as in the container image and
under ``bench`` (each ``print`` then reaches the file as two writes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.process import ROOT

LINES = 20_000
#: Records as long as one carrying a program's stderr tail: the longer the line,
#: the wider the gap a print leaves between its message and its newline.
PAD = "x" * 1000

PROGRAM = f"""
import sys, threading
import structlog
from twistarena.server import logs
from twistarena.clients.cli.workers import Worker

logs.configure(json=True)
log = logs.get("lines")
child = ("import json\\n"
         "for i in range({LINES}):\\n"
         "    print(json.dumps({{'event': 'child', 'i': i, 'pad': '{PAD}'}}), flush=True)\\n")
worker = Worker([sys.executable, "-c", child], threading.Semaphore(0), label="runner")
worker.start()
for i in range({LINES}):
    log.info("own", i=i, pad="{PAD}")
worker.process.wait()
worker.forwarded.join(30)
"""


def test_forwarded_lines_and_own_events_never_share_a_line(tmp_path: Path) -> None:
    out = tmp_path / "serve.log"
    env_paths = [str(ROOT / d) for d in ("engine", "proto", "server", "clients")]
    with out.open("wb") as sink:
        done = subprocess.run([sys.executable, "-c", PROGRAM], stdout=sink,
                              stderr=subprocess.PIPE, cwd=str(ROOT), timeout=120,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(env_paths),
                                   "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    records = []
    for line in out.read_text().splitlines():
        records.append(json.loads(line))  # fails on a line holding parts of two records
    own = sorted(r["i"] for r in records if r["event"] == "own")
    child = sorted(r["i"] for r in records if r["event"] == "child")
    assert own == list(range(LINES))
    assert child == list(range(LINES))
