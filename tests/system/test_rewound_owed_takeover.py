"""A Rewound owed to a seat that was away outlives the node that found the loss,
and the match's end.

Real parts: Valkey and two node processes. The match runs on node A; one seat
leaves (its stream ends, its grace runs); Valkey is killed -9 and its AOF cut
back to its last fsync (an OS crash), taking acknowledged answers with it. A
finds the loss and rewinds: the seats present are told at once, the seat away
is owed the Rewound. Then either A is killed -9 before that seat comes back,
or the match ends without it; the seat resumes on node B. Only A's memory held
the loss: had it not been stored with the match, B would have let the seat
keep answers the store lost (a loss rewound in silence), or, the match over,
refused it with MATCH_OVER and nothing more.
"""

from __future__ import annotations

import asyncio
from typing import Any

import redis
from twistarena.clients.sdk import Agent, Backoff, MatchClient

from tests.clients.helpers import run
from tests.support.nodes import Node
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import play_past_an_fsync, slow_bot, tear_down

AWAY = 1


def _agent(seed: int, servers: list[str], match_id: str, token: str) -> Agent:
    return Agent(slow_bot("twhist", seed, 0.02), server=servers, match_id=match_id,
                 token=token, backoff=Backoff(initial=0.05, maximum=0.5, give_up_after=60))


def _away_stored(port: int, match_id: str) -> bool:
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        return int(client.hget(f"{{m:{match_id}}}:meta", f"away:{AWAY}") or 0) > 0
    finally:
        client.close()


async def _scenario(end_first: bool) -> dict[str, Any]:
    valkey = ValkeyProcess().start()
    restarted: ValkeyProcess | None = None
    a = Node("nodeA", valkey.url, lease_ms=1000).start()
    b = Node("nodeB", valkey.url, lease_ms=1000)
    both = [a.address, b.address]
    tasks: list[asyncio.Task[Any]] = []
    try:
        # Ending first, the seat's grace runs out after the loss, and the match
        # ends with its decisions timed out.
        created = await MatchClient(a.address).create_match(
            "twhist", 3, seed=44, decision_ms=60_000, fallback="random",
            reconnect_grace_ms=3000 if end_first else 60_000)
        mid = created.match.match_id
        seats = {t.seat: _agent(440 + t.seat, both if t.seat != AWAY else [a.address],
                                mid, t.token) for t in created.seat_tokens}
        tasks = [asyncio.ensure_future(agent.run()) for agent in seats.values()]
        aof, cut = await play_past_an_fsync(valkey, list(seats.values()), 9, more=12)
        # The seat leaves, and node A keeps when (what makes it away, not just slow).
        leaving = tasks[AWAY]
        leaving.cancel()
        await asyncio.gather(leaving, return_exceptions=True)
        await wait_until(lambda: _away_stored(valkey.port, mid), "node A sees the seat away")
        away = seats[AWAY]
        heard = {"next_seq": away.next_seq, "accepted": len(away.accepted)}
        valkey.kill()
        with aof.open("r+b") as f:
            f.truncate(cut)
        restarted = ValkeyProcess(valkey.data_dir, port=valkey.port).start()
        present = [agent for seat, agent in seats.items() if seat != AWAY]
        await wait_until(lambda: all(agent.rewinds for agent in present),
                         "node A announces the loss to the seats present", timeout=30)
        if end_first:
            others = [task for seat, task in enumerate(tasks) if seat != AWAY]
            await asyncio.wait_for(asyncio.gather(*others), 60)
        else:
            a.kill()
        b.start()
        back = _agent(440 + AWAY, [b.address], mid, away.token)
        back.next_seq = away.next_seq
        tasks[AWAY] = asyncio.ensure_future(back.run())
        results = await asyncio.wait_for(asyncio.gather(*tasks), 90)
        return {"back": back, "heard": heard, "results": results,
                "losses": [r for r in a.records() if r.get("event") == "store_loss"]}
    finally:
        tear_down(tasks, [a, b], valkey, restarted)


def _check(out: dict[str, Any]) -> Agent:
    (loss,) = out["losses"]
    assert loss["policy"] == "rewind" and loss["lost"] > 0, loss
    back: Agent = out["back"]
    assert back.rewinds, (f"the seat away (it had heard {out['heard']}) was never told "
                          f"of the loss node A found: {loss}")
    (told,) = back.rewinds
    assert told.actions == loss["kept"] and told.lost_actions == loss["lost"], (told, loss)
    assert told.to_seq <= out["heard"]["next_seq"]
    assert all(result is not None for result in out["results"])
    return back


def test_a_seat_away_is_told_of_the_loss_after_the_node_that_found_it_died() -> None:
    _check(run(_scenario(end_first=False), timeout=180))


def test_a_seat_away_is_told_of_the_loss_and_the_end_after_the_match_ended() -> None:
    out = run(_scenario(end_first=True), timeout=180)
    back = _check(out)
    assert back.result == out["results"][0], "the seat did not hear the stored end"
