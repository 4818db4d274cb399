"""The seed and raw action log of a match that is not over never leave the server.

Over a real server and a real Valkey with raw stubs: whoever knows a running
match's seed rebuilds every hand with ``engine.make``, and its action log holds
secret choices (a Tricky Twist reserve pick names its card). GetMatch,
ListMatches, CreateMatch, CancelMatch, Practice and GetReplay show them to the
admin only until the match is over; a game of a duplicate tournament block
stays closed until every game of the block is over.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc import aio
from twistarena import engine
from twistarena.server.config import ServerConfig
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc
from twistarena.v1 import tournaments_pb2 as tpb
from twistarena.v1 import tournaments_pb2_grpc as tgrpc

from tests.support.agents import REASON_KEY, Agent, create, options, run, tokens
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

ADMIN = "admin-token-of-the-seed-tests"
ADMIN_MD = (("authorization", f"Bearer {ADMIN}"),)


@pytest.fixture(scope="module")
def admin_server(valkey: Any) -> Iterator[InProcessServer]:
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url, admin_token=ADMIN)).start()
    try:
        yield srv
    finally:
        srv.stop()


def _reason(err: grpc.aio.AioRpcError) -> str:
    return next((str(v) for k, v in err.trailing_metadata() or () if k == REASON_KEY), "")


async def _replay_refused(stub: mgrpc.MatchesStub, mid: str,
                          metadata: tuple[tuple[str, str], ...] = ()) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetReplay(mpb.GetReplayRequest(match_id=mid), metadata=metadata, timeout=10)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _reason(err.value) == "REPLAY_CLOSED"


async def _listed(stub: mgrpc.MatchesStub, mid: str,
                  metadata: tuple[tuple[str, str], ...] = ()) -> mpb.Match:
    page = await stub.ListMatches(mpb.ListMatchesRequest(page_size=500), metadata=metadata,
                                  timeout=10)
    return next(m for m in page.matches if m.match_id == mid)


async def _running(stub: mgrpc.MatchesStub, mid: str) -> None:
    async def running() -> bool:
        match = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))
        return match.status == mpb.MATCH_STATUS_RUNNING

    await wait_until(running, f"match {mid} runs", timeout=10, interval=0.02)


def test_a_running_match_keeps_its_seed_and_log_from_everyone(server: Any) -> None:
    """On a server without an admin token nobody sees them before the end (defects 1, 2)."""
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            created = await create(ch, options("tricky_twist", 4, house=(
                "", "heuristic", "heuristic", "heuristic")))
            mid = created.match.match_id
            seen: list[mpb.Match] = [created.match]
            agent = Agent(ch, mid, tokens(created)[0])
            await agent.join()
            await _running(stub, mid)
            # A secret choice is in the log: the first reserve pick (TT-3.3).
            decision = (await agent.expect("decision")).decision
            await agent.answer(decision.decision_id, decision.legal_actions[0].id)
            await agent.expect("accepted")
            seen.append(await stub.GetMatch(mpb.GetMatchRequest(match_id=mid)))
            seen.append(await _listed(stub, mid))
            await _replay_refused(stub, mid)
            for match in seen:
                assert match.seed == 0 and not match.options.HasField("seed")
                assert match.status != mpb.MATCH_STATUS_CANCELLED
            cancelled = await stub.CancelMatch(mpb.CancelMatchRequest(match_id=mid))
            # Over: the full replay is public and rebuilds the match.
            assert cancelled.seed != 0 and cancelled.options.seed == cancelled.seed
            replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=mid))
            assert replay.match.seed == cancelled.seed and len(replay.actions) >= 1
            state = engine.replay("tricky_twist", 4, replay.match.seed, {},
                                  [(a.seat, a.action_id) for a in replay.actions])
            assert len(state.events) == len(replay.events)
            agent.cancel()

    run(main())


def test_the_admin_alone_reads_a_running_match(admin_server: InProcessServer) -> None:
    async def main() -> None:
        async with aio.insecure_channel(admin_server.target) as ch:
            stub = mgrpc.MatchesStub(ch)
            created = await create(ch, options("twisted", 2, seed=1234, house=("", "random")),
                                   metadata=ADMIN_MD)
            mid = created.match.match_id
            assert created.match.seed == 1234  # the admin created it
            agent = Agent(ch, mid, tokens(created)[0])
            await agent.join()
            await _running(stub, mid)
            for metadata in ((), (("authorization", "Bearer wrong"),),
                             (("authorization", f"Bearer {tokens(created)[0]}"),)):
                got = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid), metadata=metadata)
                assert got.seed == 0 and not got.options.HasField("seed")
                assert (await _listed(stub, mid, metadata)).seed == 0
                await _replay_refused(stub, mid, metadata)
            got = await stub.GetMatch(mpb.GetMatchRequest(match_id=mid), metadata=ADMIN_MD)
            assert got.seed == 1234 and got.options.seed == 1234
            assert (await _listed(stub, mid, ADMIN_MD)).seed == 1234
            replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=mid), metadata=ADMIN_MD)
            assert replay.match.seed == 1234
            await stub.CancelMatch(mpb.CancelMatchRequest(match_id=mid), metadata=ADMIN_MD)
            assert (await stub.GetMatch(mpb.GetMatchRequest(match_id=mid))).seed == 1234
            agent.cancel()

    run(main())


def test_choosing_the_seed_is_the_admins_privilege(admin_server: InProcessServer) -> None:
    """Whoever picks the seed knows every hand: a practice seed needs the admin token."""
    async def main() -> None:
        async with aio.insecure_channel(admin_server.target) as ch:
            stub = kgrpc.MatchmakingStub(ch)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.Practice(kpb.PracticeRequest(game_id="twisted", seed=5), timeout=10)
            assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert "seed" in (err.value.details() or "")
            practice = await stub.Practice(kpb.PracticeRequest(game_id="twisted"), timeout=10)
            assert practice.match.seed == 0 and not practice.match.options.HasField("seed")
            chosen = await stub.Practice(kpb.PracticeRequest(game_id="twisted", seed=5),
                                         metadata=ADMIN_MD, timeout=10)
            assert chosen.match.seed == 5 and chosen.seat == 5 % 2
            matches = mgrpc.MatchesStub(ch)
            for mid in (practice.match.match_id, chosen.match.match_id):
                await matches.CancelMatch(mpb.CancelMatchRequest(match_id=mid),
                                          metadata=ADMIN_MD)

    run(main())


def test_a_running_tournament_shows_its_seed_to_the_admin_alone(
        admin_server: InProcessServer) -> None:
    """The tournament seed derives every deal; the admin sees it, others see none."""
    async def main() -> None:
        async with aio.insecure_channel(admin_server.target) as ch:
            reg = await kgrpc.MatchmakingStub(ch).RegisterAgent(
                kpb.RegisterAgentRequest(name="absent entrant"), metadata=ADMIN_MD, timeout=10)
            stub = tgrpc.TournamentsStub(ch)
            spec = tpb.TournamentSpec(game_id="twisted", num_players=2, seed=4242,
                                      entrants=["heuristic", reg.agent_id], parallel=2)
            created = await stub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                                  metadata=ADMIN_MD, timeout=10)
            tid = created.tournament_id
            assert created.spec.seed == 4242  # the admin created it
            plain = await _tournament(stub, tid)
            listed = await stub.ListTournaments(tpb.ListTournamentsRequest(), timeout=10)
            mine = next(t for t in listed.tournaments if t.tournament_id == tid)
            assert not plain.spec.HasField("seed") and not mine.spec.HasField("seed")
            assert plain.games and all(g.seed == 0 for g in plain.games)
            admin = await _tournament(stub, tid, ADMIN_MD)
            assert admin.spec.seed == 4242 and all(g.seed for g in admin.games)
            await stub.CancelTournament(tpb.CancelTournamentRequest(tournament_id=tid),
                                        metadata=ADMIN_MD, timeout=10)
            over = await _tournament(stub, tid)
            assert over.spec.seed == 4242
            assert [g.seed for g in over.games] == [g.seed for g in admin.games]

    run(main())


async def _tournament(stub: tgrpc.TournamentsStub, tid: str,
                      metadata: tuple[tuple[str, str], ...] = ()) -> tpb.Tournament:
    return await stub.GetTournament(tpb.GetTournamentRequest(tournament_id=tid),
                                    metadata=metadata, timeout=10)


async def _until(stub: tgrpc.TournamentsStub, tid: str, done: int,
                 redis_url: str) -> tpb.Tournament:
    """The record once ``done`` games have their end stored in the tournament: a
    cancelled game ranks nobody, so ``games_done`` does not count it, and its
    stored result is what seals or opens its block."""
    from twistarena.storage import Holder, Store

    store = Store(redis_url, Holder("tests", "", 2000))
    await store.connect()
    try:
        async def recorded() -> bool:
            stored = await store.tournaments.load(tid)
            return stored is not None and len(stored.results) >= done

        await wait_until(recorded, f"{done} game(s) of tournament {tid} recorded")
    finally:
        await store.close()
    return await _tournament(stub, tid)


def test_a_duplicate_block_stays_closed_until_its_last_game_ends(server: Any) -> None:
    """Defect 3: both seatings of a duplicate deal play the same cards, so the first
    game's seed and replay open only when the second one is over."""
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            reg = await kgrpc.MatchmakingStub(ch).RegisterAgent(
                kpb.RegisterAgentRequest(name="absent entrant"), timeout=10)
            tstub = tgrpc.TournamentsStub(ch)
            spec = tpb.TournamentSpec(
                game_id="twisted", num_players=2, entrants=["heuristic", reg.agent_id],
                duplicate_deals=True, seed=99, parallel=2)
            created = await tstub.CreateTournament(tpb.CreateTournamentRequest(spec=spec),
                                                   timeout=10)
            tid = created.tournament_id
            assert not created.spec.HasField("seed")  # it derives every deal
            stub = mgrpc.MatchesStub(ch)
            first, second = f"t{tid}-0-0", f"t{tid}-0-1"

            async def both_exist() -> bool:
                return all([await _exists(stub, m) for m in (first, second)])

            await wait_until(both_exist, "the block's two games exist", timeout=10)
            await stub.CancelMatch(mpb.CancelMatchRequest(match_id=first))
            record = await _until(tstub, tid, 1, server.config.redis_url)
            over = await stub.GetMatch(mpb.GetMatchRequest(match_id=first))
            assert over.status == mpb.MATCH_STATUS_CANCELLED
            assert over.seed == 0 and not over.options.HasField("seed")
            await _replay_refused(stub, first)
            assert [g.seed for g in record.games] == [0, 0]
            assert not record.spec.HasField("seed")
            # Even the public events of either game show cards the other one deals.
            for mid in (first, second):
                await _watch_refused(ch, mid)
            await stub.CancelMatch(mpb.CancelMatchRequest(match_id=second))
            record = await _until(tstub, tid, 2, server.config.redis_url)
            seeds = {g.seed for g in record.games}
            assert len(seeds) == 1 and 0 not in seeds
            replay = await stub.GetReplay(mpb.GetReplayRequest(match_id=first))
            assert replay.match.seed in seeds
            watched = [m async for m in pgrpc.WatchStub(ch).Watch(
                ppb.WatchRequest(match_id=first), timeout=10)]
            assert watched[-1].WhichOneof("msg") == "match_over"

    run(main())


async def _watch_refused(ch: aio.Channel, mid: str) -> None:
    call = pgrpc.WatchStub(ch).Watch(ppb.WatchRequest(match_id=mid), timeout=10)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call.read()
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _reason(err.value) == "REPLAY_CLOSED"


async def _exists(stub: mgrpc.MatchesStub, mid: str) -> bool:
    try:
        await stub.GetMatch(mpb.GetMatchRequest(match_id=mid), timeout=10)
    except grpc.aio.AioRpcError as err:
        if err.code() == grpc.StatusCode.NOT_FOUND:
            return False
        raise
    return True
