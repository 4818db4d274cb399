"""A Rewound owed to a seat that was away outlives the node that found the loss,
and the match's end.

Real parts: Valkey and two node processes. The match runs on node A; one seat
leaves (its stream ends, its grace runs); Valkey is killed -9 and its AOF cut
back to its last fsync (an OS crash), taking acknowledged answers with it. A
finds the loss and rewinds: the seats present are told at once, the seat away
is owed the Rewound. Then A is killed -9 before that seat comes back, or the
match ends without it, or the store loses the owed Rewound itself (a second
crash cut back to before it, nothing acknowledged since) and A, which still
runs the match, stores it again before it is killed; the seat resumes on node
B. Only A's memory held the loss: had it not been stored with the match, B
would have let the seat keep answers the store lost (a loss rewound in
silence), or, the match over, refused it with MATCH_OVER and nothing more.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import redis
from twistarena.clients.sdk import Agent, Backoff, MatchClient

from tests.clients.helpers import run
from tests.support.nodes import Node
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until
from tests.system.faults import (
    aof_incr_file,
    fsynced_aof_size,
    play_past_an_fsync,
    slow_bot,
    tear_down,
)

AWAY = 1


#: How the scenario goes on once node A found the loss and told the seats present.
KILLED, ENDED, OWED_LOST = "node A killed", "match ended", "owed Rewound lost"


def _agent(seed: int, servers: list[str], match_id: str, token: str,
           rewound_stops: bool = False) -> Agent:
    """A seat's agent; ``rewound_stops``: it answers nothing once told of a rewind
    (nothing is acknowledged after it)."""
    inner = slow_bot("twhist", seed, 0.02)

    async def bot(observation: Any, legal_actions: Any) -> int:
        if rewound_stops and agent.rewinds:
            await asyncio.Event().wait()
        return int(await inner(observation, legal_actions))

    agent = Agent(bot, server=servers, match_id=match_id, token=token,
                  backoff=Backoff(initial=0.05, maximum=0.5, give_up_after=60))
    return agent


def _away_stored(port: int, match_id: str) -> bool:
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        return int(client.hget(f"{{m:{match_id}}}:meta", f"away:{AWAY}") or 0) > 0
    finally:
        client.close()


def _crash(valkey: ValkeyProcess, aof: Path, cut: int) -> ValkeyProcess:
    """Valkey killed -9, its AOF cut back to ``cut`` bytes (an OS crash), started again."""
    valkey.kill()
    with aof.open("r+b") as f:
        f.truncate(cut)
    return ValkeyProcess(valkey.data_dir, port=valkey.port).start()


async def _scenario(then: str) -> dict[str, Any]:
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
            reconnect_grace_ms=3000 if then == ENDED else 60_000)
        mid = created.match.match_id
        seats = {t.seat: _agent(440 + t.seat, both if t.seat != AWAY else [a.address],
                                mid, t.token, rewound_stops=then == OWED_LOST)
                 for t in created.seat_tokens}
        tasks = [asyncio.ensure_future(agent.run()) for agent in seats.values()]
        aof, cut = await play_past_an_fsync(valkey, list(seats.values()), 9, more=12)
        # The seat leaves, and node A keeps when (what makes it away, not just slow).
        leaving = tasks[AWAY]
        leaving.cancel()
        await asyncio.gather(leaving, return_exceptions=True)
        await wait_until(lambda: _away_stored(valkey.port, mid), "node A sees the seat away")
        away = seats[AWAY]
        heard = {"next_seq": away.next_seq, "accepted": len(away.accepted)}
        if then == OWED_LOST:
            a.pause()  # finds the loss once the AOF's size before its writes is known
        restarted = _crash(valkey, aof, cut)
        if then == OWED_LOST:
            aof = aof_incr_file(valkey.data_dir)
            cut = await asyncio.to_thread(fsynced_aof_size, valkey.port, aof)
            a.resume()
        present = [agent for seat, agent in seats.items() if seat != AWAY]
        await wait_until(lambda: all(agent.rewinds for agent in present),
                         "node A announces the loss to the seats present", timeout=30)
        if then == OWED_LOST:
            # The store loses the owed Rewound, and nothing was acknowledged since.
            restarted = _crash(restarted, aof, cut)
            await wait_until(lambda: any(r.get("event") == "rewound_owed_restored"
                                         for r in a.records()),
                             "node A stores the owed Rewound again", timeout=30)
        if then == ENDED:
            others = [task for seat, task in enumerate(tasks) if seat != AWAY]
            await asyncio.wait_for(asyncio.gather(*others), 60)
        else:
            a.kill()
        b.start()
        back = _agent(440 + AWAY, [b.address], mid, away.token)
        back.next_seq = away.next_seq
        tasks[AWAY] = asyncio.ensure_future(back.run())
        if then == OWED_LOST:  # the seats present answer no more: the match stays open
            await wait_until(lambda: back.rewinds, "the seat back is told", timeout=30)
            results = None
        else:
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
    assert out["results"] is None or all(result is not None for result in out["results"])
    return back


def test_a_seat_away_is_told_of_the_loss_after_the_node_that_found_it_died() -> None:
    _check(run(_scenario(KILLED), timeout=180))


def test_a_seat_away_is_told_of_the_loss_and_the_end_after_the_match_ended() -> None:
    out = run(_scenario(ENDED), timeout=180)
    back = _check(out)
    assert back.result == out["results"][0], "the seat did not hear the stored end"


def test_a_seat_away_is_told_of_the_loss_after_the_store_lost_what_it_was_owed() -> None:
    _check(run(_scenario(OWED_LOST), timeout=180))
