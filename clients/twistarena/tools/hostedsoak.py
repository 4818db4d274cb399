"""Hosted play at the machine's full rate on a local cluster, checked at the end.

``twistarena soak --hosted`` starts ``twistarena cluster`` (N nodes over one
embedded Valkey, its runners, JSON logs, no web face, nodes left down if they
die) as a child bounded by ``--for-seconds``, so that it stops by itself even
if this command is killed. It registers instant hosted bots (one Python
program answering every decision with its first legal action), submits a
version of each, and keeps hosted tournaments going for ``--duration`` seconds
with as many matches in flight as the runners have slots for. Then it stops
starting tournaments, lets the ones running finish (at most ``DRAIN_S``) and
checks what a long run must keep true:

* every version's stats count exactly the matches it played (the finished
  games of the tournaments it sat in);
* no runner call was refused (``twistarena_errors_total`` of kind
  ``permission_denied_runner`` on every node: ReportSeat and FetchVersion;
  the runners' ``runner_report_failed`` records; the reports of runners that
  lost their seat, ``runner_report_handed_over``, are said apart);
* no match is left WAITING;
* a version submitted a third into the load (``latecomer``) plays its hosted
  practice match (how long from its submission to its end is said);
* no seat was played to its end by two runners (the runners' ``runner_seat_over``
  records) nor reported by two (the nodes' ``runner_seat_reported``); how many
  seats were handed out again is said too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twistarena.hosted.archives import pack_directory
from twistarena.v1 import match_pb2 as mpb

#: The instant bot every hosted agent of the soak runs (the system's Python, no imports
#: beyond the standard library: the sandbox shows nothing else).
INSTANT_BOT = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "decision":
        print(message["legal_actions"][0]["id"], flush=True)
    elif message["type"] == "over":
        break
"""
#: Longest wait for the tournaments running when the load stops.
DRAIN_S = 120.0
#: Longest wait for the latecomer's practice match.
LATECOMER_S = 120.0
#: Longest wait for the cluster to come up.
START_S = 120.0
#: Seats each runner plays at once.
RUNNER_SLOTS = 8
#: Tournaments running at once.
AT_ONCE = 2
REFUSED_KIND = "permission_denied_runner"
_ERRORS = re.compile(r'^twistarena_errors_total\{kind="([^"]+)"\} (\S+)$', re.M)


@dataclass
class HostedSoakPlan:
    """What ``soak --hosted`` is asked for."""

    duration_s: float
    nodes: int = 3
    runners: int = 2
    agents: int = 3
    game: str = "twisted"
    players: int = 3
    sandbox: str = "bwrap"
    keep_dir: Path | None = None
    games_per_pairing: int = 20


@dataclass
class Progress:
    """What the load did so far (for a progress bar)."""

    t_s: float = 0.0
    tournaments: int = 0
    games_done: int = 0
    #: False once a tournament had to be cancelled at the end of the drain.
    drained: bool = True


@dataclass
class Cluster:
    """The ``twistarena cluster`` child, its nodes' addresses and metrics ports."""

    process: subprocess.Popen[bytes]
    folder: Path
    servers: list[str]
    metrics_ports: list[int]
    admin_token: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def log_dir(self) -> Path:
        return self.folder / "logs"

    @property
    def output(self) -> Path:
        """The cluster's own output, with its runners' logs."""
        return self.folder / "cluster.log"


def free_block(count: int) -> int:
    """The first of ``count`` consecutive free loopback ports, below the ephemeral
    range (a port the kernel gave a connection meanwhile would not be free)."""
    from twistarena.ports import ephemeral_low, free_run

    base = free_run((20_000, min(ephemeral_low(), 60_000)), count)
    if base is None:
        raise RuntimeError(f"no {count} consecutive free ports")
    return base


def start_cluster(plan: HostedSoakPlan, folder: Path, bound_s: float) -> Cluster:
    """``twistarena cluster`` for the soak, stopping by itself after ``bound_s``."""
    base, metrics = free_block(plan.nodes), free_block(plan.nodes)
    admin = "at_" + secrets.token_urlsafe(24)
    env = {**os.environ, "TWISTARENA_ADMIN_TOKEN": admin,
           "TWISTARENA_RUNNER_TOKEN": "rt_" + secrets.token_urlsafe(24),
           "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "twistarena.clients.cli", "cluster",
            "--nodes", str(plan.nodes), "--base-port", str(base),
            "--metrics-port", str(metrics), "--data-dir", str(folder / "data"),
            "--node-logs", str(folder / "logs"), "--no-web", "--no-restart",
            "--for-seconds", str(round(bound_s)), "--log-format", "json",
            "--runners", str(plan.runners), "--runner-slots", str(RUNNER_SLOTS),
            "--sandbox", plan.sandbox,
            # The soak is the cluster's only client: the quotas meant for strangers
            # would make it a rate-limit test.
            "--creates-per-minute", "0", "--live-per-client", "0"]
    with (folder / "cluster.log").open("ab") as out:
        process = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    return Cluster(process, folder, [f"127.0.0.1:{base + i}" for i in range(plan.nodes)],
                   [metrics + i for i in range(plan.nodes)], admin)


def stop_cluster(cluster: Cluster, timeout: float = 60.0) -> int | None:
    """SIGTERM (the cluster drains its nodes, stops its runners and Valkey); the
    whole process group killed if that takes longer than ``timeout``."""
    proc = cluster.process
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    return proc.poll()


async def wait_ready(cluster: Cluster) -> None:
    """Until the cluster says its nodes serve and its runners started."""
    deadline = time.monotonic() + START_S
    while "Kill a node" not in cluster.output.read_text(errors="replace"):
        if cluster.process.poll() is not None:
            raise RuntimeError("the cluster exited while starting:\n"
                               + cluster.output.read_text(errors="replace")[-3000:])
        if time.monotonic() > deadline:
            raise TimeoutError(f"the cluster did not start within {START_S:g} s")
        await asyncio.sleep(0.2)


def json_records(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON log records of one file (other lines skipped)."""
    if not path.exists():
        return
    with path.open(errors="replace") as lines:
        for line in lines:
            start = line.find("{")
            if start < 0:
                continue
            with contextlib.suppress(ValueError):
                record = json.loads(line[start:])
                if isinstance(record, dict):
                    yield record


def cluster_records(cluster: Cluster) -> Iterator[dict[str, Any]]:
    """Every node's and runner's log records."""
    for path in [*sorted(cluster.log_dir.glob("node*.log")), cluster.output]:
        yield from json_records(path)


def node_errors(port: int) -> dict[str, float]:
    """``twistarena_errors_total`` by kind, from one node's metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    return {kind: float(value) for kind, value in _ERRORS.findall(text)}


async def hosted_agent(cluster: Cluster, name: str, work: Path) -> tuple[str, str, str]:
    """(agent id, api token, version id) of a new instant bot, submitted and active."""
    return await instant_bot(cluster.servers, cluster.admin_token, name, work)


async def instant_bot(servers: list[str], admin_token: str, name: str,
                      work: Path) -> tuple[str, str, str]:
    """(agent id, api token, version id) of a new hosted agent running ``INSTANT_BOT``,
    registered with ``admin_token`` on ``servers``, its version submitted and active."""
    from twistarena.clients.sdk import register_agent
    from twistarena.clients.sdk.versions import VersionClient

    folder = work / "instant-bot"
    folder.mkdir(exist_ok=True)
    (folder / "bot.py").write_text(INSTANT_BOT)
    agent_id, token = await register_agent(servers, name, admin_token=admin_token)
    submitted = await VersionClient(",".join(servers), api_token=token).submit(
        pack_directory(folder), "python3 bot.py", activate=True)
    return agent_id, token, submitted.version.version_id


async def latecomer(cluster: Cluster, plan: HostedSoakPlan, work: Path) -> dict[str, Any]:
    """A version submitted a third into the load (at most 30 s in) and its hosted
    practice match: how long from the submission to the match's end, and how it
    ended (a new version must play within seconds, however busy the runners)."""
    from twistarena.clients.sdk import MatchClient, practice
    from twistarena.wire import MATCH_OVER

    await asyncio.sleep(min(30.0, plan.duration_s / 3))
    started = time.monotonic()
    agent_id, token, version_id = await hosted_agent(cluster, "latecomer", work)
    created = await practice(cluster.servers, plan.game, plan.players, api_token=token,
                             hosted=True)
    matches = MatchClient(cluster.servers, admin_token=cluster.admin_token)
    deadline = started + LATECOMER_S
    while (match := await matches.get_match(created.match.match_id)).status not in MATCH_OVER:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    over = match.status in MATCH_OVER
    return {"agent_id": agent_id, "token": token, "version_id": version_id,
            "match_id": match.match_id, "played_in_s": round(time.monotonic() - started, 1),
            "reason": mpb.EndReason.Name(match.result.reason) if over else "NOT_OVER"}


async def run_hosted_soak(plan: HostedSoakPlan,
                          on_progress: Callable[[Progress], None] | None = None
                          ) -> dict[str, Any]:
    """Start the cluster, play, drain, check, stop: the report."""
    work = plan.keep_dir or Path(tempfile.mkdtemp(prefix="twistarena-hosted-soak-"))
    if work.exists() and any(work.iterdir()):
        # Its logs are read at the end: another run's records would be counted too.
        raise FileExistsError(f"{work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    # The cluster's own bound: the load, the drain, starting and stopping.
    cluster = start_cluster(plan, work, plan.duration_s + DRAIN_S + START_S + 120)
    try:
        await wait_ready(cluster)
        agents = [await hosted_agent(cluster, f"instant{i}", work)
                  for i in range(plan.agents)]
        late = asyncio.ensure_future(latecomer(cluster, plan, work))
        load = await keep_tournaments(cluster, plan, [a for a, _t, _v in agents], on_progress)
        report = await check(cluster, plan, agents, load, await late)
    finally:
        code = await asyncio.to_thread(stop_cluster, cluster)
        if plan.keep_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    report["cluster_exit_code"] = code
    return report


@dataclass
class Load:
    """The tournaments the load started, and how long it ran."""

    tournaments: list[str]
    seconds: float
    drained: bool


async def keep_tournaments(cluster: Cluster, plan: HostedSoakPlan, agent_ids: list[str],
                           on_progress: Callable[[Progress], None] | None) -> Load:
    """Hosted tournaments for the duration, ``AT_ONCE`` of them overlapping (one's
    last games do not leave the runners idle), together with as many games at
    once as the runners have slots for; then the last ones finish."""
    from twistarena.clients.sdk.tournaments import TournamentClient
    from twistarena.v1 import tournaments_pb2 as tpb

    client = TournamentClient(cluster.servers, admin_token=cluster.admin_token)
    parallel = max(1, -(-plan.runners * RUNNER_SLOTS // plan.players) // AT_ONCE)
    over = (tpb.TOURNAMENT_FINISHED, tpb.TOURNAMENT_CANCELLED)
    started = time.monotonic()
    progress = Progress()
    ids: list[str] = []
    done: dict[str, int] = {}
    running: list[str] = []
    while True:
        now = time.monotonic() - started
        while now < plan.duration_s and len(running) < AT_ONCE:
            created = await client.create(
                plan.game, [f"agent:{a}" for a in agent_ids], players=plan.players,
                games_per_pairing=plan.games_per_pairing, parallel=parallel, decision_ms=2000)
            running.append(created.tournament_id)
            ids.append(created.tournament_id)
        if not running:
            return Load(ids, now, True)
        for tid in list(running):
            record = await client.get(tid)
            done[tid] = record.games_done
            if record.status in over:
                running.remove(tid)
            elif now >= plan.duration_s + DRAIN_S:
                await client.cancel(tid, "the soak's drain time is over")
                running.remove(tid)
                progress.drained = False
        progress.t_s, progress.tournaments = round(now, 1), len(ids)
        progress.games_done = sum(done.values())
        if on_progress is not None:
            on_progress(progress)
        if not running and not progress.drained:
            return Load(ids, now, False)
        await asyncio.sleep(0.5)


async def check(cluster: Cluster, plan: HostedSoakPlan, agents: list[tuple[str, str, str]],
                load: Load, late: dict[str, Any]) -> dict[str, Any]:
    """The figures of the report, from the tournaments, the versions' stats, the
    nodes' metrics and logs."""
    from twistarena.clients.sdk import MatchClient
    from twistarena.clients.sdk.tournaments import TournamentClient

    client = TournamentClient(cluster.servers, admin_token=cluster.admin_token)
    played: Counter[str] = Counter()
    matches = 0
    unrecorded: list[tuple[str, set[str]]] = []
    for tid in load.tournaments:
        record = await client.get(tid)
        for game in record.games:
            entrants = {entrant.removeprefix("agent:") for entrant in game.seats}
            if game.match_id and game.places:
                matches += 1
                played.update(entrants)
            elif game.match_id:
                unrecorded.append((game.match_id, entrants))
    # A tournament cancelled at the drain's end records no more results, but its
    # matches on other nodes play on to their end (CancelTournament cancels those in
    # flight on its own node): the seats of those matches were played all the same.
    after_cancel = await played_after_cancel(cluster, unrecorded)
    for entrants in after_cancel:
        played.update(entrants)
    # The latecomer played its practice match (once over, with places).
    played[late["agent_id"]] = int(late["reason"] != "NOT_OVER")
    agents = [*agents, (late["agent_id"], late["token"], late["version_id"])]
    # Reports come after a match ends: wait (bounded) until they stopped coming.
    versions = await settled_stats(cluster, agents)
    waiting = await MatchClient(cluster.servers, admin_token=cluster.admin_token).list_matches(
        plan.game, statuses=["waiting"], limit=1000)
    errors = [await asyncio.to_thread(node_errors, p) for p in cluster.metrics_ports]
    refused = sum(int(e.get(REFUSED_KIND, 0)) for e in errors)
    players: dict[tuple[str, str, int], set[str]] = {}
    handed_again = 0
    report_failed = 0
    handed_over = 0
    for logged in cluster_records(cluster):
        event = logged.get("event")
        if event in ("runner_seat_reported", "runner_seat_over"):
            # Reported by two runners (the nodes' records), or played to the end by
            # two (the runners' own).
            seat = (event, str(logged.get("match_id")), int(logged.get("seat", -1)))
            players.setdefault(seat, set()).add(str(logged.get("runner")))
        elif event == "runner_seat_assigned" and logged.get("handoffs"):
            handed_again += 1
        elif event == "runner_report_failed":
            report_failed += 1
        elif event == "runner_report_handed_over":
            handed_over += 1
    per_version = [{"agent_id": a, "version_id": v, "matches_played": played[a],
                    "stats_matches": versions.get((a, v), 0),
                    "equal": played[a] == versions.get((a, v), 0)} for a, _t, v in agents]
    return {
        "hosted": True, "duration_s": plan.duration_s, "nodes": plan.nodes,
        "runners": plan.runners, "game": plan.game, "players": plan.players,
        "tournaments": len(load.tournaments), "drained": load.drained,
        "matches_played": matches + len(after_cancel),
        "matches_played_after_cancel": len(after_cancel),
        "matches_per_s": (round((matches + len(after_cancel)) / load.seconds, 2)
                          if load.seconds else 0.0),
        "versions": per_version,
        "stats_equal": all(v["equal"] for v in per_version),
        "reports_refused": refused, "reports_failed_on_runners": report_failed,
        "reports_handed_over": handed_over,
        "matches_waiting": len(waiting),
        "seats_played_twice": len({seat[1:] for seat, runners in players.items()
                                   if len(runners) > 1}),
        "seats_handed_again": handed_again,
        "latecomer": {k: v for k, v in late.items() if k != "token"},
    }


async def played_after_cancel(cluster: Cluster, unrecorded: list[tuple[str, set[str]]],
                              timeout: float = 120.0) -> list[set[str]]:
    """The entrants of each match its tournament did not record that was played:
    waited for (bounded) until over, counted once it made a move."""
    from twistarena import wire
    from twistarena.clients.sdk import MatchClient

    client = MatchClient(cluster.servers, admin_token=cluster.admin_token)
    deadline = time.monotonic() + timeout
    played = []
    for match_id, entrants in unrecorded:
        match = await client.get_match(match_id)
        while match.status not in wire.MATCH_OVER and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
            match = await client.get_match(match_id)
        if match.actions:
            played.append(entrants)
    return played


async def settled_stats(cluster: Cluster, agents: list[tuple[str, str, str]],
                        timeout: float = 30.0) -> dict[tuple[str, str], int]:
    """Each (agent, version)'s counted matches, once two readings a second apart agree."""
    from twistarena.clients.sdk.versions import VersionClient

    async def read() -> dict[tuple[str, str], int]:
        counted: dict[tuple[str, str], int] = {}
        for agent_id, token, _version in agents:
            client = VersionClient(",".join(cluster.servers), api_token=token)
            details = await client.details(agent_id)
            for version in details.versions:
                counted[agent_id, version.version_id] = int(version.stats.matches)
        return counted

    deadline = time.monotonic() + timeout
    last = await read()
    while time.monotonic() < deadline:
        await asyncio.sleep(1.0)
        now = await read()
        if now == last:
            return now
        last = now
    return last


def passed(report: dict[str, Any]) -> bool:
    """Whether the run kept every promise the report checks."""
    return bool(report["matches_played"] and report["stats_equal"]
                and not report["reports_refused"] and not report["matches_waiting"]
                and not report["seats_played_twice"]
                and report["latecomer"]["reason"] != "NOT_OVER")
