"""One campaign: the deployment up, the workload and the nemesis at once for
the duration, every fault healed, the matches played out, then the checker;
the report as a table per fault kind, a JSON document and a timeline per
violation."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from twistarena.sandbox import sandbox_mode

from ..hostedsoak import instant_bot
from .checker import Outcome, Violation, check, table_rows
from .deploy import Deployment
from .league import League, check_league
from .nemesis import ALL_KINDS, KINDS_BY_STORE, Nemesis, fault_records, schedule
from .workload import Workload

#: Hosted agents of the campaign: the first plays the hosted practice matches,
#: all of them the arena and the tournament.
LEAGUE_AGENTS = 3


@dataclass
class Plan:
    """A campaign's parameters (the command's flags)."""

    seed: int = 1
    duration: float = 60.0
    rate: float = 1.0
    concurrency: int = 8
    nodes: int = 3
    fault_every: float = 5.0
    kinds: Sequence[str] = ALL_KINDS
    lease_ms: int = 2000
    redis_url: str = ""
    #: Primaries of a Valkey Cluster of the campaign's own (0: a single Valkey).
    cluster: int = 0
    admin_token: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    settle_s: float = 120.0
    #: Runner processes playing hosted seats (0: no hosted matches), and their sandbox.
    runners: int = 2
    sandbox: str = "bwrap"

    @property
    def store(self) -> str:
        return "cluster" if self.cluster else "given" if self.redis_url else "embedded"

    def fault_kinds(self) -> list[str]:
        """The kinds asked for that this deployment can take."""
        return [k for k in self.kinds if k in KINDS_BY_STORE[self.store]]


async def _heal(deployment: Deployment) -> None:
    """Every link forwarding, the store running and answering, every node up."""
    import signal

    for node in deployment.nodes:
        node.store_proxy.heal()
        node.agent_proxy.heal()
    valkey = deployment.valkey
    if valkey is not None:
        valkey.signal(signal.SIGCONT)
        if valkey.proc is None or valkey.proc.poll() is not None:
            await asyncio.to_thread(valkey.start)
    cluster = deployment.cluster
    if cluster is not None:
        for i in range(cluster.size):
            cluster.signal(i, signal.SIGCONT)
            if not cluster.alive(i):
                await asyncio.to_thread(cluster.restart, i)
    for node in deployment.nodes:
        if not node.alive():
            deployment.start_node(node)
        await deployment.wait_ready(node)
    for runner in deployment.runners:
        if not runner.alive():
            deployment.start_runner(runner)


def store_losses(deployment: Deployment) -> int:
    """The nodes' ``store_loss`` log records."""
    count = 0
    for node in deployment.nodes:
        if node.log_path.exists():
            for line in node.log_path.read_text(errors="replace").splitlines():
                if '"event": "store_loss"' in line:
                    count += 1
    return count


async def _check_league(league: League, deployment: Deployment, outcome: Outcome,
                        settle_s: float) -> dict[str, Any]:
    """The arena paused and the tournament let finish, then checked: what does not
    add up is a violation of the ``league`` row."""
    store = deployment.store_client()
    try:
        closed = await league.close(store, settle_s)
        counts, problems = await check_league(league, store)
    except Exception as exc:  # the rest of the report stands; this is said in it
        closed, counts, problems = False, {}, [f"the league could not be checked: {exc!r}"]
    finally:
        await store.aclose()
    counts["closed_in_time"] = closed
    for problem in problems:
        outcome.violations.append(Violation("", None, problem, {}, {}))
        outcome.table["league"]["violations"] += 1
    return counts


async def run_campaign(plan: Plan, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run ``plan``; the report (``violations`` empty when every check held)."""
    kinds = plan.fault_kinds()
    faults = schedule(plan.seed, plan.duration, plan.fault_every, kinds, plan.nodes)
    deployment = Deployment(plan.nodes, plan.admin_token, plan.lease_ms, plan.redis_url,
                            plan.cluster, plan.runners, plan.sandbox)
    began = time.monotonic()
    outcome: Outcome | None = None
    league_counts: dict[str, Any] = {}
    unsettled: list[str] = []
    await deployment.start()
    say(f"{plan.nodes} nodes over {deployment.store_url}"
        f"; {len(faults)} faults planned ({', '.join(sorted(set(f.kind for f in faults)))})")
    try:
        hosted = ""
        league: League | None = None
        if plan.runners:
            agents = [await instant_bot(deployment.servers, plan.admin_token, f"chaos-hosted{i}",
                                        deployment.work_dir) for i in range(LEAGUE_AGENTS)]
            hosted = agents[0][1]
            league = League(deployment.servers, plan.admin_token, [a for a, _t, _v in agents])
            await league.open(plan.duration)
        program = deployment.work_dir / "instant-bot" / "bot.py"
        workload = Workload(lambda: deployment.servers, plan.admin_token, plan.seed,
                            plan.rate, plan.duration, plan.concurrency, hosted_token=hosted,
                            exec_command=f"python3 {program}" if program.exists() else "",
                            sandbox=sandbox_mode(plan.sandbox))
        nemesis = Nemesis(deployment, faults, workload.running, lambda: len(workload.matches),
                          say, started=workload.started)
        await asyncio.gather(workload.run(), nemesis.run())
        await _heal(deployment)
        settled = await workload.settle(plan.settle_s)
        # Which matches were still in play, for the report: what kept them is in
        # their seats' records and the checker's violations.
        unsettled = workload.running()
        if unsettled:
            say(f"{len(unsettled)} match(es) still in play after {plan.settle_s:g} s: "
                + ", ".join(unsettled[:20]))
        outcome = await check(workload.matches, faults, deployment.servers,
                              deployment.store_url, plan.lease_ms)
        if league is not None:
            league_counts = await _check_league(league, deployment, outcome, plan.settle_s)
        losses = store_losses(deployment)
    finally:
        # The nodes' and the store's logs stay for a campaign that found violations.
        keep = outcome is None or bool(outcome.violations)
        await deployment.stop(keep=keep)
        if keep:
            say(f"logs kept in {deployment.work_dir}")
    assert outcome is not None
    report = {
        "seed": plan.seed, "duration_s": plan.duration, "rate": plan.rate,
        "nodes": plan.nodes, "store": plan.store,
        "wall_s": round(time.monotonic() - began, 1),
        "faults": fault_records(faults),
        "table": table_rows(outcome),
        "matches": outcome.matches, "finished": outcome.finished, "voided": outcome.voided,
        "matches_lost": outcome.matches_lost, "hosted_matches": outcome.hosted,
        "protocol_seats": outcome.protocol_seats, "program_seats": outcome.program_seats,
        "acknowledged": outcome.acknowledged, "acknowledged_then_lost": outcome.lost,
        "store_loss_records": losses, "create_failures": workload.create_failures,
        "settled": settled, "unsettled": unsettled, "league": league_counts,
        "work_dir": str(deployment.work_dir) if keep else "",
        "violations": [asdict(v) for v in outcome.violations],
    }
    return report


def write_json(report: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")


__all__ = ["ALL_KINDS", "Plan", "run_campaign", "write_json"]
