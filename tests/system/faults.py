"""Shared parts of the store fault tests: a served node, agents that play slowly,
the store's view of the logs, and the node's logs and metrics."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import redis
from twistarena.bots import make_bot
from twistarena.clients.sdk import Agent, Backoff, MatchClient

from tests.clients.helpers import Acknowledgements
from tests.support.process import ServeProcess, json_records
from tests.support.valkey import ValkeyProcess, free_port
from tests.support.waiting import wait_until

#: Decision ids are ``opened_at * SEAT_BITS + seat + 1`` (see the server runner).
SEAT_BITS = 8


def serve(*args: str) -> ServeProcess:
    return ServeProcess(["--port", "0", "--log-format", "json", "--metrics-port", "0",
                         *args]).start()


def records(proc: ServeProcess) -> list[dict[str, Any]]:
    return json_records(proc.output())


def metric(proc: ServeProcess, name: str) -> float:
    """Sum of a Prometheus metric's samples (every label) on the node."""
    port = next(r["metrics_port"] for r in records(proc) if r.get("event") == "listening")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and not line.startswith(name + "_created"):
            rest = line[len(name):]
            if rest[:1] in ("{", " "):
                total += float(line.rsplit(" ", 1)[1])
    return total


def slow_bot(game_id: str, seed: int, delay: float = 0.01) -> Any:
    inner = make_bot("random", game_id, seed)

    async def act(observation: Any, legal_actions: Any) -> int:
        await asyncio.sleep(delay)
        return inner(observation, legal_actions)

    return act


async def start_matches(address: str, count: int, seed: int,
                        game: tuple[str, int] = ("tricky_twist", 3),
                        delay: float = 0.01,
                        tracer: Acknowledgements | None = None,
                        ) -> tuple[MatchClient, list[Any], list[Agent], list[asyncio.Task[Any]]]:
    """``count`` matches created on ``address``, every seat played by a slow random
    bot; ``tracer`` hears of every acceptance an agent is told of."""
    client = MatchClient(address)
    created = [await client.create_match(game[0], game[1], seed=seed + i, decision_ms=60_000,
                                         reconnect_grace_ms=60_000) for i in range(count)]

    agents = [Agent(slow_bot(game[0], seed * 100 + i * 10 + t.seat, delay), server=address,
                    match_id=r.match.match_id, token=t.token,
                    backoff=Backoff(initial=0.05, maximum=0.5, give_up_after=60),
                    tracer=tracer)
              for i, r in enumerate(created) for t in r.seat_tokens]
    tasks = [asyncio.ensure_future(a.run()) for a in agents]
    return client, created, agents, tasks


def accepted_total(agents: Sequence[Agent]) -> int:
    return sum(len(a.accepted) for a in agents)


def logs_of(url_port: int, match_ids: Sequence[str]) -> dict[str, list[bytes]]:
    client = redis.Redis(host="127.0.0.1", port=url_port)
    try:
        return {mid: client.lrange(f"{{m:{mid}}}:log", 0, -1) for mid in match_ids}
    finally:
        client.close()


def read_logs(data_dir: Path, match_ids: Sequence[str]) -> dict[str, list[bytes]]:
    """The logs an AOF directory holds, read by a throwaway Valkey on a copy."""
    copy = copy_aof(data_dir, "read")
    proc = ValkeyProcess(copy).start()
    try:
        return logs_of(proc.port, match_ids)
    finally:
        proc.kill()
        shutil.rmtree(copy, ignore_errors=True)


def acknowledged_lost(accepted: dict[int, int], seat: int, full: Sequence[bytes],
                      kept: int) -> int:
    """How many of a seat's acknowledged answers sit in the full log at a position
    the kept log no longer has."""
    lost = 0
    for decision_id in accepted:
        opened_at = (decision_id - 1) // SEAT_BITS
        position = next((i for i in range(opened_at, len(full))
                         if int(full[i].split(b",")[0]) == seat), None)
        if position is not None and position >= kept:
            lost += 1
    return lost


def fsynced_aof_size(port: int, aof: Path) -> int:
    """A size of ``aof`` that its disk is known to hold: read, then a write of its own
    and ``WAITAOF`` (which returns once the AOF is fsynced past that write)."""
    size = aof.stat().st_size
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        client.incr("fault-test:fsync-probe")
        local, _replicas = client.execute_command("WAITAOF", 1, 0, 5000)
    finally:
        client.close()
    assert int(local) >= 1, "the store did not fsync its AOF within 5 s"
    return size


async def play_past_an_fsync(valkey: ValkeyProcess, agents: Sequence[Agent], first: int,
                             more: int = 20) -> tuple[Path, int]:
    """Once ``first`` answers were accepted, a size of the store's AOF known to be
    on disk; returns (the AOF, that size) once ``more`` answers were accepted
    since: what an OS crash cutting the AOF back to it would lose."""
    await wait_until(lambda: accepted_total(agents) >= first, "play started", timeout=30)
    aof = aof_incr_file(valkey.data_dir)
    cut = await asyncio.to_thread(fsynced_aof_size, valkey.port, aof)
    mark = accepted_total(agents)
    await wait_until(lambda: accepted_total(agents) >= mark + more, "more play", timeout=30)
    return aof, cut


def aof_incr_file(data_dir: Path) -> Path:
    files = sorted((data_dir / "appendonlydir").glob("*.incr.aof"))
    assert files, f"no AOF in {data_dir}"
    return files[-1]


async def finish_all(tasks: Sequence[asyncio.Task[Any]], agents: Sequence[Agent],
                     node: ServeProcess, timeout: float = 90) -> list[Any]:
    """Every agent's result; on a stall, which matches and the node's log say why."""
    try:
        return list(await asyncio.wait_for(asyncio.gather(*tasks), timeout))
    except TimeoutError:
        stuck = {a.match_id for a in agents if a.result is None}
        seats = [(a.seat, a.next_seq, a.connected, len(a.accepted))
                 for a in agents if a.match_id in stuck]
        lines = [str(r) for r in records(node) if r.get("level") != "info"
                 or r.get("match_id") in stuck or set(r.get("match_ids", ())) & stuck]
        raise AssertionError(f"matches {stuck} stalled; seats {seats}; node log:\n"
                             + "\n".join(lines[-60:])) from None


def copy_aof(data_dir: Path, name: str) -> Path:
    """A copy of ``data_dir``'s AOF (read later with ``read_logs``: copying is fast,
    so the store can be restarted at once)."""
    copy = data_dir.parent / f"{data_dir.name}-{name}-{free_port()}"
    shutil.copytree(data_dir / "appendonlydir", copy / "appendonlydir")
    return copy


def tear_down(tasks: Sequence[asyncio.Task[Any]], nodes: Sequence[Any], valkey: ValkeyProcess,
              restarted: ValkeyProcess | None) -> None:
    """The end of a store fault test: its agents stopped, its nodes (anything with
    ``cleanup``) and both lives of its Valkey gone, and its data."""
    for task in tasks:
        task.cancel()
    for node in nodes:
        node.cleanup()
    if restarted is not None:
        restarted.kill()
    valkey.kill()
    shutil.rmtree(valkey.data_dir, ignore_errors=True)


def loss_records(proc: ServeProcess) -> dict[str, list[dict[str, Any]]]:
    """The node's ``store_loss`` records, by match."""
    out: dict[str, list[dict[str, Any]]] = {}
    for record in records(proc):
        if record.get("event") == "store_loss":
            out.setdefault(record["match_id"], []).append(record)
    return out


def freeze_once_ended(valkey: ValkeyProcess, match_id: str) -> None:
    """Wait (bounded) until Valkey has executed the match's end, then freeze it
    (SIGSTOP): the end is in its memory and its WAITAOF cannot answer."""
    client = redis.Redis(host="127.0.0.1", port=valkey.port, socket_timeout=2)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not client.hexists(
                f"{{m:{match_id}}}:meta", "result"):
            time.sleep(0.001)
    finally:
        client.close()
    assert valkey.proc is not None
    os.kill(valkey.proc.pid, signal.SIGSTOP)
