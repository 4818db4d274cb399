"""Tournaments run by the server: schedule, one match per scheduled game, standings.

What is stored (spec and status, round plans, results, the driver's lease)
and where is in ``twistarena.storage.tournaments``; Swiss rounds are written
once, when the round before is complete. One node drives a tournament: the
holder of its lease (the same lease mechanism as a match's), renewed every
second; round plans and results are written only by the holder.

Everything the driver does is a function of the spec and the stored results:
the schedule of a round (Swiss pairings from the standings of the rounds
before), the id of each game's match (``t<id>-<round>-<index>``, so a game is
created at most once), the standings (recomputed from the results in schedule
order, never a running total). A node that takes over after a crash reads the
results back, watches the matches in flight (their runners resume from their
logs) and creates the missing ones: the final standings equal those of an
uninterrupted run with the same seeds (house bots decide as a function of the
match seed and log; see ``housebots``).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc import aio
from twistarena import engine, wire
from twistarena.bots import STRATEGIES
from twistarena.league import (
    GameResult,
    compute_standings,
    games_for_tables,
    seatings,
    swiss_tables,
)
from twistarena.storage import MatchRecord, StoreError, TournamentRecord
from twistarena.storage.tournaments import TournamentStore
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import tournaments_pb2 as tpb
from twistarena.v1 import tournaments_pb2_grpc as tgrpc

from .. import logs, metrics
from ..cluster import Cluster
from ..config import ServerConfig
from ..hostedagents.runnerhub import RunnerHub
from ..limits import Quotas
from ..loops import stop_loops
from ..match.creation import CreationError, new_match
from ..match.referee import MatchReferee
from ..rpc import fail, is_admin, require_admin, shown
from .agents import Agents
from .leased import LeasedTasks, driver

log = logs.get("twistarena.tournaments")

POLL_S = 0.2
#: Every node looks this often for the games it runs of a tournament that is over.
SWEEP_S = 0.5
#: The driver renews its lease this often (the lease lasts three times longer).
RENEW_S = 1.0
MAX_GAMES = 20_000


def game_match_id(tid: str, round_no: int, index: int) -> str:
    """The match id of a tournament game: derived, so a resumed driver finds its matches."""
    return f"t{tid}-{round_no}-{index}"


def parse_game_match_id(match_id: str) -> tuple[str, int, int] | None:
    """(tournament id, round, index) of a tournament game's match id, else None.

    Other match ids are hex (``secrets.token_hex``), so they never start with "t"."""
    if not match_id.startswith("t"):
        return None
    tid, _, rest = match_id[1:].partition("-")
    round_no, _, index = rest.partition("-")
    if not (tid and round_no.isdigit() and index.isdigit()):
        return None
    return tid, int(round_no), int(index)


def strategy_of(entrant: str) -> str | None:
    """The house bot strategy an entrant names ('heuristic#2' -> 'heuristic'), or None."""
    base = entrant.split("#", 1)[0]
    return base if base in STRATEGIES else None


#: An entrant ``agent:ID`` is a hosted agent: runners play its active version.
HOSTED_PREFIX = "agent:"


def hosted_agent(entrant: str) -> str | None:
    """The agent id of a hosted entrant ('agent:ag_12' -> 'ag_12'), or None."""
    return entrant.removeprefix(HOSTED_PREFIX) if entrant.startswith(HOSTED_PREFIX) else None


def agent_of(entrant: str) -> str:
    """The agent account an entrant that is not a house bot plays for."""
    return hosted_agent(entrant) or entrant


# -- the schedule, as pure functions of the spec and the results -----------------------


def seatings_per_table(players: int) -> int:
    """How many seat rotations one table plays (every entrant in every seat)."""
    return len(seatings([str(i) for i in range(players)]))


def planned_games(spec: tpb.TournamentSpec) -> int:
    """How many games the tournament will play, known before it starts."""
    from itertools import combinations

    n = spec.num_players
    entrants = list(spec.entrants)
    per_table = seatings_per_table(n) * spec.games_per_pairing
    if spec.format == tpb.SWISS:
        return len(entrants) // n * per_table * spec.rounds
    if spec.format == tpb.GAUNTLET:
        return sum(1 for _ in combinations(entrants[1:], n - 1)) * per_table
    return sum(1 for _ in combinations(entrants, n)) * per_table


def rounds_of(spec: tpb.TournamentSpec) -> int:
    """How many rounds the format plays (only Swiss has more than one)."""
    return spec.rounds if spec.format == tpb.SWISS else 1


def first_round_tables(spec: tpb.TournamentSpec) -> list[list[str]]:
    """The tables of round 1: every combination, the gauntlet's pairings, or Swiss's first draw."""
    from itertools import combinations

    entrants = list(spec.entrants)
    n = spec.num_players
    if spec.format == tpb.GAUNTLET:
        return [[entrants[0], *c] for c in combinations(entrants[1:], n - 1)]
    if spec.format == tpb.SWISS:
        return swiss_tables(entrants, n)[0]
    return [list(c) for c in combinations(entrants, n)]


def swiss_round(spec: tpb.TournamentSpec, previous: Sequence[dict[str, Any]],
                results: Sequence[Any]) -> dict[str, Any]:
    """Tables and byes of the next Swiss round, from the rounds before and their results."""
    entrants = list(spec.entrants)
    met: set[frozenset[str]] = set()
    byes: list[str] = []
    for rnd in previous:
        byes += rnd["byes"]
        for table in rnd["tables"]:
            met.update(frozenset((a, b)) for i, a in enumerate(table) for b in table[i + 1:])
    order = entrants
    if results:
        ranked = [s.entrant for s in compute_standings(results)]
        order = ranked + [e for e in entrants if e not in ranked]
    tables, out = swiss_tables(order, spec.num_players, met, byes)
    return {"tables": tables, "byes": out}


def round_games(spec: tpb.TournamentSpec, round_no: int, plan: dict[str, Any]) -> list[Any]:
    """The games of one round from its stored plan: the same on every node that drives it."""
    return games_for_tables(plan["tables"], spec.games_per_pairing, spec.seed, round_no,
                            duplicate=spec.duplicate_deals)


@dataclass(slots=True)
class Snapshot(TournamentRecord):
    """A tournament as stored, its results as GameResults (see ``load``)."""

    def games(self) -> list[tuple[int, int, Any]]:
        """(round, index, ScheduledGame) of every round planned so far, in order."""
        out = []
        for r in sorted(self.rounds):
            for i, game in enumerate(round_games(self.spec, r, self.rounds[r])):
                out.append((r, i, game))
        return out

    def sealed(self) -> set[tuple[int, int]]:
        """(round, index) of the games whose seed and replay are still closed.

        A game is sealed until it has its result; with duplicate deals, until
        every game of its block (the seatings of one table on one deal) has
        one, since they all deal the same cards. Nothing is sealed once the
        tournament is over: no game is left to play."""
        if self.status in wire.TOURNAMENT_OVER:
            return set()
        blocks: dict[tuple[int, int, int], list[tuple[int, int]]] = {}
        for r, i, game in self.games():
            key = (r, game.table, game.deal) if self.spec.duplicate_deals else (r, -1, i)
            blocks.setdefault(key, []).append((r, i))
        return {g for members in blocks.values()
                if any(m not in self.results for m in members) for g in members}

    def ordered_results(self, before_round: int | None = None) -> list[Any]:
        """The results that count, in game order (of the rounds before
        ``before_round``, if given): a game whose match did not finish is stored
        without places (see ``game_result``) and ranks nobody."""
        return [self.results[k] for k in sorted(self.results)
                if self.results[k].places and (before_round is None or k[0] < before_round)]


async def load(store: TournamentStore, tid: str) -> Snapshot | None:
    """A tournament as stored, its results as GameResults."""
    record: TournamentRecord | None = await store.load(tid)
    if record is None:
        return None
    return Snapshot(record.tid, record.spec, record.status, record.created_ms, record.detail,
                    record.rounds, {k: GameResult.from_json(v)
                                    for k, v in record.results.items()})


async def replay_sealed(store: TournamentStore, match_id: str,
                        loaded: dict[str, Snapshot | None] | None = None) -> bool:
    """True for a tournament game whose seed and replay must stay closed (see
    ``Snapshot.sealed``); False for any other match. ``loaded``: tournaments
    already read in this call, by id (a page of matches reads each one once)."""
    parsed = parse_game_match_id(match_id)
    if parsed is None:
        return False
    tid, round_no, index = parsed
    loaded = {} if loaded is None else loaded
    if tid not in loaded:
        loaded[tid] = await load(store, tid)
    snap = loaded[tid]
    return snap is not None and (round_no, index) in snap.sealed()


async def in_open_duplicate_block(store: TournamentStore, match_id: str) -> bool:
    """True for a game of a duplicate block with games left to play: even its
    public events show cards that the block's other games deal again."""
    parsed = parse_game_match_id(match_id)
    if parsed is None:
        return False
    tid, round_no, index = parsed
    snap = await load(store, tid)
    return (snap is not None and snap.spec.duplicate_deals
            and (round_no, index) in snap.sealed())


def game_result(game: Any, record: MatchRecord) -> GameResult:
    """What a game whose match is over counts for. Only a match the store holds
    FINISHED (played out: completed, forfeited, length-capped) gives scores and
    places; one cancelled, abandoned or voided is recorded without them, so the
    round can go on but the game ranks nobody (its places would be made up)."""
    result = record.result or mpb.MatchResult()
    if record.status != mpb.MATCH_STATUS_FINISHED or result.reason == mpb.END_REASON_VOIDED \
            or not result.places:
        return GameResult.of(game, (), ())
    return GameResult.of(game, result.scores, result.places)


def to_proto(snap: Snapshot, with_games: bool = True, admin: bool = False) -> tpb.Tournament:
    """The tournament as a caller sees it: only the admin sees the seed of a
    running tournament (it derives every deal) and the seeds of sealed games."""
    from google.protobuf import timestamp_pb2

    results = snap.ordered_results()
    rows = [tpb.StandingRow(
        entrant=s.entrant, games=s.games, wins=s.wins, win_share=s.win_share,
        win_ci_low=s.win_ci_low, win_ci_high=s.win_ci_high, mean_score=s.mean_score,
        score_ci_low=s.score_ci_low, score_ci_high=s.score_ci_high, mean_place=s.mean_place,
        mu=s.mu, sigma=s.sigma, conservative=s.conservative)
        for s in compute_standings(results)] if results else []
    created = timestamp_pb2.Timestamp()
    created.FromMilliseconds(snap.created_ms)
    msg = tpb.Tournament(tournament_id=snap.tid, spec=snap.spec,
                         status=snap.status,  # type: ignore[arg-type]
                         games_planned=planned_games(snap.spec), games_done=len(results),
                         standings=rows, created_at=created, detail=snap.detail)
    if not admin and snap.status not in wire.TOURNAMENT_OVER:
        msg.spec.ClearField("seed")
    if with_games:
        sealed = set() if admin else snap.sealed()
        for r, i, game in snap.games():
            res = snap.results.get((r, i))
            msg.games.append(tpb.TournamentGame(
                round=r, table=game.table, deal=game.deal,
                seed=0 if (r, i) in sealed else game.seed, seats=game.seats,
                match_id=game_match_id(snap.tid, r, i),
                scores=res.scores if res else (), places=res.places if res else ()))
    return msg


# -- the driver ----------------------------------------------------------------------


class Director:
    """Drives the tournaments this node holds the lease of; takes over orphaned ones."""

    def __init__(self, cluster: Cluster, agents: Agents, address: Any,
                 runners: RunnerHub) -> None:
        self.cluster = cluster
        self.runners = runners
        self.hub = cluster.hub
        self.store = cluster.store.tournaments
        self.agents = agents
        self.node_id = cluster.node_id
        self.address = address
        #: The drivers this node runs, one per tournament it holds the lease of.
        self.drivers = LeasedTasks("tournament", self.store.leases, self.store.live, self._run,
                                   self.hub)
        self.tokens = self.drivers.tokens
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start supervising: pick up tournaments that no live driver holds; and
        sweeping: end this node's games of tournaments that are over."""
        await self.drivers.start()
        self._sweeper = asyncio.get_running_loop().create_task(
            self._sweep_loop(), name="tournament.sweep")

    async def close(self) -> None:
        """Stop driving and release the leases, so another node takes over at once."""
        if self._sweeper is not None:
            await stop_loops([self._sweeper], "tournament")
        await self.drivers.close()

    async def end_games_of_over_tournaments(self) -> int:
        """Cancel the live games this node runs of tournaments that are over; how many.

        A tournament's games run on whichever nodes placement chose, and only a
        match's owner may end it; the stored status is the order every owner
        follows (``CancelTournament`` answers before the other nodes have
        looked, and a game claimed later by a node that takes over is ended as
        soon as its new owner sweeps)."""
        games: dict[str, list[MatchReferee]] = {}
        for referee in list(self.hub.referees.values()):
            parsed = parse_game_match_id(referee.match_id)
            if parsed is not None and not referee.over:
                games.setdefault(parsed[0], []).append(referee)
        ended = 0
        for tid, referees in games.items():
            stored = await self.store.status(tid)
            if stored is None or stored[0] not in wire.TOURNAMENT_OVER:
                continue
            why = ("tournament cancelled" if stored[0] == tpb.TOURNAMENT_CANCELLED
                   else "tournament over")
            for referee in referees:
                try:
                    if not await referee.cancel(why):
                        continue
                except StoreError as exc:  # lost meanwhile: its next owner sweeps it
                    log.warning("tournament_game_cancel_failed", tournament=tid,
                                match=referee.match_id, error=repr(exc))
                    continue
                ended += 1
                log.info("tournament_game_cancelled", tournament=tid,
                         match=referee.match_id, node=self.node_id)
        return ended

    async def _sweep_loop(self) -> None:
        while True:
            try:
                await self.end_games_of_over_tournaments()
            except StoreError as exc:
                log.warning("tournament_sweep_failed", error=repr(exc))
            except Exception as exc:  # keep sweeping whatever one referee did
                metrics.ERRORS.labels("tournament_sweep").inc()
                log.error("tournament_sweep_failed", error=repr(exc))
            await asyncio.sleep(SWEEP_S)

    async def try_drive(self, tid: str) -> bool:
        """Drive the tournament if no other node holds its lease."""
        return await self.drivers.try_take(tid)

    async def _run(self, tid: str) -> None:
        log.info("tournament_driving", tournament=tid, node=self.node_id)
        last_renew = time.monotonic()
        in_flight: set[tuple[int, int]] = set()
        while True:
            if time.monotonic() - last_renew > RENEW_S:
                if not await self.drivers.renew(tid):
                    return
                last_renew = time.monotonic()
            snap = await load(self.store, tid)
            if snap is None or snap.status in wire.TOURNAMENT_OVER:
                await self.store.drop_live(tid)
                return
            spec = snap.spec
            # The current round: the first one without every result.
            round_no = 0
            while True:
                plan = snap.rounds.get(round_no)
                if plan is None:
                    if round_no >= rounds_of(spec):
                        await self._finish(snap)
                        return
                    plan = await self._plan(snap, round_no)
                games = round_games(spec, round_no, plan)
                if all((round_no, i) in snap.results for i in range(len(games))):
                    round_no += 1
                    continue
                break
            todo = [i for i in range(len(games)) if (round_no, i) not in snap.results]
            ids = [game_match_id(tid, round_no, i) for i in todo]
            records = await self.hub.store.matches.load_many(ids)
            free = max(1, spec.parallel)
            running = 0
            for i, record in zip(todo, records, strict=True):
                if record is None:
                    continue
                if record.status in wire.MATCH_OVER:
                    res = game_result(games[i], record)
                    await self.store.record_result(tid, self.tokens[tid], round_no, i,
                                                   res.to_json())
                    in_flight.discard((round_no, i))
                else:
                    running += 1
            for i, record in zip(todo, records, strict=True):
                if running >= free:
                    break
                if record is None and (round_no, i) not in in_flight:
                    await self._create(snap, round_no, i, games[i])
                    in_flight.add((round_no, i))
                    running += 1
            await asyncio.sleep(POLL_S)

    async def _plan(self, snap: Snapshot, round_no: int) -> dict[str, Any]:
        spec = snap.spec
        if spec.format == tpb.SWISS and round_no > 0:
            previous = [snap.rounds[r] for r in range(round_no)]
            plan = swiss_round(spec, previous, snap.ordered_results(round_no))
        else:
            plan = {"tables": first_round_tables(spec), "byes": []}
            if spec.format == tpb.SWISS:
                plan["byes"] = swiss_tables(list(spec.entrants), spec.num_players)[1]
        plan = await self.store.plan_round(snap.tid, self.tokens[snap.tid], round_no, plan)
        snap.rounds[round_no] = plan
        return plan

    async def _create(self, snap: Snapshot, round_no: int, index: int, game: Any) -> None:
        spec = snap.spec
        mid = game_match_id(snap.tid, round_no, index)
        if await self.hub.store.matches.exists(mid):
            return
        stored = await self.store.status(snap.tid)
        if stored is None or stored[0] in wire.TOURNAMENT_OVER:
            return  # cancelled since ``snap`` was read: no new game
        opts = mpb.MatchOptions(game_id=spec.game_id, num_players=spec.num_players,
                                seed=game.seed, time_control=spec.time_control)
        if spec.HasField("game_options"):
            opts.game_options.CopyFrom(spec.game_options)
        agents: dict[int, str] = {}
        for seat, entrant in enumerate(game.seats):
            strategy = strategy_of(entrant)
            if strategy is not None:
                opts.seats.append(mpb.SeatSpec(name=entrant, house_bot=strategy))
            else:
                record = await self.agents.get(agent_of(entrant))
                opts.seats.append(mpb.SeatSpec(name=record.name if record else entrant))
                agents[seat] = entrant
        templates = {}
        for seat, entrant in agents.items():
            hosted = hosted_agent(entrant)
            template = await self.runners.hosted_template(
                hosted, tournament_id=snap.tid) if hosted is not None else None
            if template is not None:
                templates[seat] = template
        try:
            match, tokens = await new_match(self.cluster, opts, match_id=mid, hosted=templates)
        except CreationError as exc:
            await self._finish(snap, tpb.TOURNAMENT_CANCELLED, f"cannot create a match: {exc}")
            return
        if agents:
            address = await self.cluster.serving_address(mid, self.address())
            for seat, entrant in agents.items():
                hosted = hosted_agent(entrant)
                if hosted is not None:
                    await self.runners.seat_hosted(
                        match.options, mid, seat, tokens[seat], address, hosted, "tournament",
                        tournament_id=snap.tid, template=templates.get(seat))
                    continue
                await self.agents.assign(entrant, kpb.MatchAssigned(
                    match_id=mid, seat=seat, seat_token=tokens[seat],
                    server_address=address, game_id=spec.game_id,
                    num_players=spec.num_players, tournament_id=snap.tid))

    async def _finish(self, snap: Snapshot, status: int = tpb.TOURNAMENT_FINISHED,
                      detail: str = "") -> None:
        await self.store.finish(snap.tid, status, detail)
        log.info("tournament_over", tournament=snap.tid, status=tpb.TournamentStatus.Name(
            status), games=len(snap.results))


# -- the service -----------------------------------------------------------------------


def normalize(spec: tpb.TournamentSpec) -> str:
    """Fill in defaults; a sentence naming the problem, or ''."""
    if spec.game_id not in engine.GAME_IDS:
        return f"unknown game {shown(spec.game_id)}; games: {', '.join(engine.GAME_IDS)}"
    info = engine.game(spec.game_id)
    if not spec.num_players:
        spec.num_players = info.min_players
    if not info.min_players <= spec.num_players <= info.max_players:
        return (f"{spec.game_id} is for {info.min_players}-{info.max_players} players, "
                f"got {spec.num_players}")
    if spec.format == tpb.TOURNAMENT_FORMAT_UNSPECIFIED:
        spec.format = tpb.ROUND_ROBIN
    if spec.format == tpb.SWISS and not spec.rounds:
        spec.rounds = 3
    if spec.format != tpb.SWISS:
        spec.rounds = 1
    spec.games_per_pairing = spec.games_per_pairing or 1
    spec.parallel = min(spec.parallel or 4, 64)
    if not spec.HasField("seed"):
        spec.seed = secrets.randbits(63)
    entrants = list(spec.entrants)
    if len(set(entrants)) != len(entrants):
        return "entrant names must be distinct (use 'heuristic#2' for a second one)"
    if len(entrants) < spec.num_players:
        return f"{len(entrants)} entrants cannot fill a table of {spec.num_players}"
    if spec.format == tpb.GAUNTLET and len(entrants) < spec.num_players:
        return "a gauntlet needs the hero and at least num_players - 1 others"
    total = planned_games(spec)
    if total > MAX_GAMES:
        return f"{total} games planned; at most {MAX_GAMES}"
    if total == 0:
        return "no game to play"
    return ""


class Tournaments(tgrpc.TournamentsServicer):
    """The Tournaments service: create, get, list, watch and cancel tournaments."""

    def __init__(self, cluster: Cluster, config: ServerConfig, agents: Agents,
                 director: Director, quotas: Quotas) -> None:
        self.quotas = quotas
        self.hub = cluster.hub
        self.store = cluster.store.tournaments
        self.config = config
        self.agents = agents
        self.director = director

    async def _snapshot(self, tid: str, context: aio.ServicerContext[Any, Any]) -> Snapshot:
        snap = await load(self.store, tid) if tid else None
        if snap is None:
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_TOURNAMENT",
                       f"no tournament with id {shown(tid)}")
        return snap

    async def CreateTournament(self, request: tpb.CreateTournamentRequest,
                               context: aio.ServicerContext[Any, Any]) -> tpb.Tournament:
        """Admin only: check and store a tournament; a node with its lease drives it."""
        await require_admin(context, self.config)
        if self.hub.draining:
            await fail(context, grpc.StatusCode.UNAVAILABLE, "DRAINING",
                       "server draining; create the tournament on another server")
        spec = tpb.TournamentSpec()
        spec.CopyFrom(request.spec)
        problem = normalize(spec)
        if not problem:
            agents = [e for e in spec.entrants if strategy_of(e) is None]
            known = await self.agents.exists([agent_of(e) for e in agents]) if agents else []
            missing = [a for a, ok in zip(agents, known, strict=True) if not ok]
            if missing:
                problem = (f"unknown entrants {missing}: name a house bot strategy "
                           "(random, heuristic, ismcts), a registered agent id, or "
                           "agent:ID for a hosted agent")
            else:
                problem = await self.director.runners.unplayable(
                    [a for e in agents if (a := hosted_agent(e)) is not None])
        if problem:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", problem)
        creator = await self.quotas.admit_creation(context, makes_match=False)
        tid = secrets.token_hex(6)
        self.quotas.created(creator, f"tournament:{tid}")
        now = int(time.time() * 1000)
        await self.store.create(tid, spec, tpb.TOURNAMENT_RUNNING, now)
        await self.director.try_drive(tid)
        log.info("tournament_created", tournament=tid, game=spec.game_id,
                 format=tpb.TournamentFormat.Name(spec.format), entrants=list(spec.entrants),
                 games=planned_games(spec))
        return to_proto(await self._snapshot(tid, context), admin=is_admin(context, self.config))

    async def GetTournament(self, request: tpb.GetTournamentRequest,
                            context: aio.ServicerContext[Any, Any]) -> tpb.Tournament:
        """The tournament as it stands (a game still sealed shows its seed to admins only)."""
        record = to_proto(await self._snapshot(request.tournament_id, context),
                          admin=is_admin(context, self.config))
        await self._drivers([record])
        return record

    async def ListTournaments(self, request: tpb.ListTournamentsRequest,
                              context: aio.ServicerContext[Any, Any]
                              ) -> tpb.ListTournamentsResponse:
        """The newest tournaments, newest first."""
        size = min(request.page_size or 50, 500)
        admin = is_admin(context, self.config)
        out = []
        for tid in await self.store.newest(size):
            snap = await load(self.store, tid)
            if snap is not None:
                out.append(to_proto(snap, with_games=False, admin=admin))
        await self._drivers(out)
        return tpb.ListTournamentsResponse(tournaments=out)

    async def _drivers(self, records: list[tpb.Tournament]) -> None:
        """Name the node driving each tournament (which holds its lease)."""
        leases = await self.store.leases.read([r.tournament_id for r in records])
        for record, lease in zip(records, leases, strict=True):
            record.driver = driver(lease)

    async def WatchTournament(self, request: tpb.WatchTournamentRequest,
                              context: aio.ServicerContext[Any, Any]) -> None:
        """The tournament again each time a result comes in or its status changes, until it ends."""
        snap = await self._snapshot(request.tournament_id, context)
        admin = is_admin(context, self.config)
        last: tuple[int, int] | None = None
        while True:
            key = (len(snap.results), snap.status)
            if key != last:
                last = key
                await context.write(to_proto(snap, admin=admin))
            if snap.status in wire.TOURNAMENT_OVER:
                return
            await asyncio.sleep(0.3)
            fresh = await load(self.store, request.tournament_id)
            if fresh is not None:
                snap = fresh

    async def CancelTournament(self, request: tpb.CancelTournamentRequest,
                               context: aio.ServicerContext[Any, Any]) -> tpb.Tournament:
        """Admin only: end the tournament as cancelled, and its matches with it."""
        await require_admin(context, self.config)
        snap = await self._snapshot(request.tournament_id, context)
        if snap.status in wire.TOURNAMENT_OVER:
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENT_OVER",
                       f"tournament {snap.tid} is already over")
        await self.director._finish(snap, tpb.TOURNAMENT_CANCELLED,
                                    request.reason or "cancelled")
        # This node's games end now; every other node's at its next sweep.
        await self.director.end_games_of_over_tournaments()
        return to_proto(await self._snapshot(snap.tid, context),
                        admin=is_admin(context, self.config))
