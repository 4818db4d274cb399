"""The gateway without a browser: the JSON API, the SSE fan-out, serve --web-port."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from twistarena import engine, wire
from twistarena.clients.sdk import MatchClient
from twistarena.clients.web.feeds import MatchFeed, Viewer, encode
from twistarena.v1 import play_pb2 as ppb

from tests.support.agents import run
from tests.support.hosting import finished_match
from tests.support.process import ServeProcess, read_until
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def test_a_slow_viewer_gets_one_snapshot_instead_of_an_unbounded_queue() -> None:
    async def scenario() -> None:
        viewer = Viewer(size=4)
        snapshot = encode({"type": "snapshot"})
        for i in range(100):
            viewer.offer(encode({"type": "event", "i": i}), lambda: snapshot)
        assert viewer.queue.qsize() <= 5  # 4 frames and room for the end marker
        assert viewer.snapshots > 0
        frames = [viewer.queue.get_nowait() for _ in range(viewer.queue.qsize())]
        assert snapshot in frames
        assert frames[-1] == encode({"type": "event", "i": 99})

    asyncio.run(scenario())


def test_a_rewound_match_gives_every_browser_a_snapshot_without_the_void_events() -> None:
    async def scenario() -> None:
        info = engine.game("twisted")
        state = engine.make("twisted", 2, 7, {})
        for _ in range(3):
            seat = state.to_act()[0]
            state.apply(seat, state.legal_action_ids(seat)[0])
        events = [wire.event(i, ev.view(None), info) for i, ev in enumerate(state.events)]
        view = wire.public_view("twisted", state.public_view())
        feed = MatchFeed("m", ["127.0.0.1:1"])
        viewer = Viewer()
        feed.viewers.add(viewer)
        feed._handle(ppb.WatchMessage(batch=ppb.WatchBatch(events=events, view=view)))
        feed._flush()
        viewer.queue.get_nowait()
        to_seq = len(events) - 2
        feed._handle(ppb.WatchMessage(rewound=ppb.Rewound(to_seq=to_seq)))
        feed._handle(ppb.WatchMessage(batch=ppb.WatchBatch(view=view)))
        feed._flush()
        frame = json.loads(viewer.queue.get_nowait().removeprefix(b"data: "))
        assert frame["type"] == "snapshot"
        assert [e["seq"] for e in frame["events"]] == list(range(to_seq))
        assert frame["view"] is not None
        assert viewer.queue.empty()
        # The events after the rewind are new ones, not duplicates to skip.
        feed._handle(ppb.WatchMessage(batch=ppb.WatchBatch(events=events[to_seq:])))
        feed._flush()
        frame = viewer.queue.get_nowait()
        assert frame.count(b'"type":"event"') == 2

    asyncio.run(scenario())


def test_api_lists_a_finished_match_and_its_replay_ends_where_the_match_ended(
        server: InProcessServer, web: str) -> None:
    async def finished() -> str:
        client = MatchClient(server.target)
        created = await client.create_match("twhist", 3, seed=2,
                                            house_bots=["random", "heuristic", "random"])
        match_id = created.match.match_id
        await finished_match(server.target, match_id, "the house bots finished the match")
        return match_id

    match_id = run(finished())
    lobby = get(f"{web}/api/matches?game=twhist&status=finished")
    listed = {m["match_id"]: m for m in lobby["recent"]}
    assert match_id in listed and not lobby["live"]
    assert [s["name"] for s in listed[match_id]["seats"]] == \
        ["random (house)", "heuristic (house)", "random (house)"]
    replay = get(f"{web}/api/matches/{match_id}/replay")
    last = replay["steps"][-1]["view"]
    assert last["scores"] == replay["match"]["result"]["scores"]
    assert len(replay["steps"]) == replay["match"]["actions"] + 1
    assert_hands_are_the_deal(replay, run(MatchClient(server.target).get_replay(match_id)))
    with pytest.raises(urllib.error.HTTPError) as missing:
        get(f"{web}/api/matches/no-such-match")
    assert missing.value.code == 404


def assert_hands_are_the_deal(replay: dict[str, Any], recorded: Any) -> None:
    """Each step of a finished replay carries every seat's hidden cards: its hand
    and Twhist cards, as the engine rebuilt from the seed holds them then."""
    options = recorded.match.options
    state = engine.make(options.game_id, num_players=options.num_players,
                        seed=recorded.match.seed)
    for index, step in enumerate(replay["steps"]):
        if index:
            action = recorded.actions[index - 1]
            state.apply(action.seat, action.action_id)
        for seat in range(options.num_players):
            zones = state.card_zones()
            shown = step["hands"][seat]
            assert sorted(c["id"] for c in shown["hand"]) == sorted(zones[f"hand_{seat}"])
            assert shown["twhist"] == state.observation(seat)["twhist_hand"]
    assert any(step["hands"][0]["hand"] for step in replay["steps"])


def test_a_running_match_has_no_replay_and_no_hands(server: InProcessServer, web: str) -> None:
    client = MatchClient(server.target)
    created = run(client.create_match("twisted", 2, seed=8, decision_ms=60_000))
    match_id = created.match.match_id
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            get(f"{web}/api/matches/{match_id}/replay")
        body = refused.value.read().decode()
        assert refused.value.code == 409 and "hands" not in body, body
        shown = get(f"{web}/api/matches/{match_id}")
        assert "seed" not in shown and "hands" not in json.dumps(shown)
        # A match that is waiting for its seats is listed under its status;
        # an unknown status is refused with the list of the known ones.
        # (The lobby's listing is shared for a second.)
        run(wait_until(lambda: match_id in [m["match_id"] for m in get(
            f"{web}/api/matches?status={shown['status']}")["live"]],
            "the waiting match is listed", timeout=10, interval=0.2))
        with pytest.raises(urllib.error.HTTPError) as unknown:
            get(f"{web}/api/matches?status=live")
        assert unknown.value.code == 400
        assert json.loads(unknown.value.read())["statuses"] == [
            "waiting", "running", "finished", "cancelled"]
    finally:
        run(client.cancel_match(match_id, "test over"))


def test_many_browsers_share_one_upstream_watch(server: InProcessServer, web: str) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=4,
                                            house_bots=["random", "random"])
        match_id = created.match.match_id
        url = f"{web}/api/matches/{match_id}/stream"
        import aiohttp

        async def follow(session: aiohttp.ClientSession) -> list[str]:
            kinds = []
            async with session.get(url) as response:
                async for line in response.content:
                    if line.startswith(b"data: {\"type\""):
                        kinds.append(json.loads(line[6:])["type"])
            return kinds

        async with aiohttp.ClientSession() as session:
            streams = await asyncio.gather(*(follow(session) for _ in range(20)))
        for kinds in streams:
            assert kinds[0] == "snapshot"
            assert "over" in kinds or kinds == ["snapshot"]  # joined after the end
        nodes = get(f"{web}/api/nodes")
        assert nodes["feeds"] <= 1

    run(scenario(), timeout=90)


def test_serve_runs_the_web_face_in_the_node() -> None:
    proc = ServeProcess(["--port", "0", "--web-port", "0"]).start()
    try:
        found = run(wait_until(lambda: re.search(r"web listening on (http://\S+)",
                                                 proc.output()),
                               "the node prints the web face's address"))
        url = found.group(1)
        assert get(f"{url}api/matches")["servers"] == [proc.target]
        with urllib.request.urlopen(f"{url}static/cards.js", timeout=10) as response:
            assert b"symbol" in response.read()
    finally:
        proc.terminate()
        proc.cleanup()


def test_demo_web_keeps_the_server_and_the_site_up_until_interrupted() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "twistarena.clients.cli", "demo", "--web",
                             "--web-port", "0", "--game", "twisted"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = read_until(proc, "stay up")
        url = re.search(r"(http://127\.0\.0\.1:\d+/) stay up", seen)
        assert url, seen
        lobby = get(f"{url.group(1)}api/matches?game=twisted")
        assert [m["status"] for m in lobby["recent"]] == ["finished"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_nodes_page_and_the_metrics_say_which_node_drives_a_tournament(
        server: InProcessServer, web: str) -> None:
    from prometheus_client import REGISTRY
    from twistarena.clients.sdk.tournaments import TournamentClient

    client = TournamentClient(server.target)
    created = run(client.create("twisted", ["random", "random#2"], players=2,
                                games_per_pairing=500, parallel=1))
    tid = created.tournament_id

    async def driven() -> Any:
        leases = get(f"{web}/api/nodes")["leases"]
        return [entry for entry in leases if entry["id"] == tid and entry["driver"]]

    try:
        [entry] = run(wait_until(driven, "the nodes page names the tournament's driver"))
        assert entry["kind"] == "tournament"
        assert (run(client.get(tid)).driver) == entry["driver"]
        assert REGISTRY.get_sample_value(
            "twistarena_lease_held", {"kind": "tournament", "id": tid}) == 1
    finally:
        run(client.cancel(tid, "test over"))

    async def released() -> bool:
        return REGISTRY.get_sample_value(
            "twistarena_lease_held", {"kind": "tournament", "id": tid}) is None

    run(wait_until(released, "the metric forgets the tournament once it is over"))


def test_a_running_match_has_a_decision_rate_at_its_first_listing() -> None:
    """The lobby's first listing of a running match shows its mean rate since it
    was created, not 0; two listings then measure it."""
    from twistarena.clients.web.gateway import Gateway
    from twistarena.v1 import match_pb2

    async def scenario() -> None:
        gateway = Gateway("127.0.0.1:1")
        match = match_pb2.Match(match_id="m1", status=match_pb2.MATCH_STATUS_RUNNING,
                                actions=120)
        match.created_at.FromSeconds(int(time.time()) - 60)
        gateway._measure(time.monotonic(), [match])
        assert 1.5 < gateway.rates["m1"] <= 2.1  # 120 actions in about 60 s
        match.actions = 130
        gateway._measure(time.monotonic() + 1.0, [match])
        assert gateway.rates["m1"] == pytest.approx(10.0, rel=0.05)

    asyncio.run(scenario())
