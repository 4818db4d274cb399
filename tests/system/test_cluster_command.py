"""`twistarena cluster`: the README's one command for a local 3-node cluster."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

from tests.support.process import read_until
from tests.support.valkey import free_ports

CLI = [sys.executable, "-m", "twistarena.clients.cli"]


def test_cluster_runs_three_nodes_that_play_a_match_and_drain_on_sigterm() -> None:
    # Below the kernel's ephemeral range: node2 is started again on its port, which
    # an outgoing connection (the cluster's own readiness checks) could take meanwhile.
    base = free_ports(3)
    proc = subprocess.Popen([*CLI, "cluster", "--nodes", "3", "--base-port", str(base),
                             "--web-port", "0", "--for-seconds", "240"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = read_until(proc, "Ctrl-C")
        for i in range(3):
            assert f"127.0.0.1:{base + i}" in seen
        assert re.search(r"web face on http://127\.0\.0\.1:\d+/", seen), seen
        # A match created through the second node, played by bots through any node.
        servers = ",".join(f"127.0.0.1:{base + i}" for i in (1, 0, 2))
        out = subprocess.run(
            [*CLI, "match", "create", "--server", servers, "--game", "twhist", "--players", "3",
             "--bots", "random,heuristic,random", "--seed", "5", "--json"],
            capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        record = json.loads(out.stdout.strip().splitlines()[-1])
        assert record["status"] == "FINISHED"
        assert record["result"]["reason"] == "COMPLETED"
        assert len(record["result"]["scores"]) == 3 and record["result"]["winners"]
        # A node killed: the cluster says so, starts it again and keeps running.
        pid = int(re.search(r"node2\s+│\s+127\.0\.0\.1:\d+\s+│\s+(\d+)", seen).group(1))
        os.kill(pid, signal.SIGKILL)
        seen = read_until(proc, "node2 restarted", seen)
        assert f"node2 (pid {pid}) exited" in seen
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=40) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cluster_nodes_take_serve_s_flags_log_to_files_and_stay_down_with_no_restart(
        tmp_path: object) -> None:
    from pathlib import Path

    logs = Path(str(tmp_path)) / "logs"
    base = free_ports(2)
    env = {k: v for k, v in os.environ.items() if k != "TWISTARENA_ADMIN_TOKEN"}
    proc = subprocess.Popen([*CLI, "cluster", "--nodes", "2", "--base-port", str(base),
                             "--no-web", "--no-restart", "--node-logs", str(logs),
                             "--admin-token", "sesame", "--arena", "twisted:3",
                             "--runners", "1", "--sandbox", "none", "--log-format", "json",
                             "--for-seconds", "240"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        seen = read_until(proc, "Ctrl-C")
        assert "1 runners play" in seen and str(logs) in seen
        servers = f"127.0.0.1:{base},127.0.0.1:{base + 1}"
        create = [*CLI, "match", "create", "--server", servers, "--game", "twhist",
                  "--players", "3", "--bots", "random,random,random", "--json"]
        # The admin token reached every node: no match without it, one with it.
        refused = subprocess.run(create, capture_output=True, text=True, timeout=60, env=env)
        assert refused.returncode != 0 and "PERMISSION_DENIED" in refused.stdout + refused.stderr
        made = subprocess.run([*create, "--admin-token", "sesame"], capture_output=True,
                              text=True, timeout=120, env=env)
        assert made.returncode == 0, made.stdout + made.stderr
        # --arena opened the arena.
        arenas = subprocess.run([*CLI, "arena", "list", "--server", servers, "--json"],
                                capture_output=True, text=True, timeout=60, env=env)
        assert arenas.returncode == 0, arenas.stdout + arenas.stderr
        # ...and the arena list names the node whose lease drives it.
        [arena] = json.loads(arenas.stdout.strip().splitlines()[-1])
        assert arena["game_id"] == "twisted" and arena["driver"].startswith("node"), arena
        # Each node's output is in its own file; the runner connected to a node.
        for i in (1, 2):
            assert '"event"' in (logs / f"node{i}.log").read_text()
        assert "runner_connected" in "".join(
            (logs / f"node{i}.log").read_text() for i in (1, 2))
        # A killed node stays down.
        pid = int(re.search(r"node2\s+│\s+127\.0\.0\.1:\d+\s+│\s+(\d+)", seen).group(1))
        os.kill(pid, signal.SIGKILL)
        seen = read_until(proc, f"node2 (pid {pid}) exited", seen)
        again = subprocess.run([*create, "--admin-token", "sesame"], capture_output=True,
                               text=True, timeout=120, env=env)
        assert again.returncode == 0, again.stdout + again.stderr
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=60)
        assert "node2 restarted" not in seen + rest
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
