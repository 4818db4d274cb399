"""The arena scheduler: continuous rated play, one node at a time per arena.

Every node supervises the arenas; the one that holds an arena's lease (the
same lease as a tournament driver's, ``storage.arenas.LEASE_MS``) schedules
it: it rates the arena's matches that ended (``arenas.Ladder``), then, unless
the arena is paused, seats new tables as ``twistarena.league.ladder.pick_tables``
forms them, within the arena's matches per minute. Hosted agents' seats go to
the runners (``RunnerHub.seat_hosted``), a network agent's (enrolled without a
hosted version, holding a Queue for the arena's game) to its Queue stream;
house rungs are the server's bots.

What it needs to go on lives in the store: the arena's live matches (noted
before each match is created, with its players) and the ratings. A node that
dies loses nothing: the next node to claim the lease rates what ended
meanwhile (each match once) and carries on.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from twistarena import wire
from twistarena.league import Rating, Rung, next_version_rating, pick_tables
from twistarena.storage import FencedError, Store, StoreError
from twistarena.storage.arenas import house_bot, house_player, player_key, split_player
from twistarena.v1 import arenas_pb2 as apb
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import matchmaking_pb2 as kpb

from .. import logs
from ..cluster import Cluster
from ..hostedagents.runnerhub import RunnerHub
from ..match.creation import CreationError, new_match
from .agents import Agents
from .arenas import Ladder, anchors_of
from .leased import LeasedTasks
from .matchmaker import ALIVE_MS

log = logs.get("twistarena.arenas")

#: How often a scheduler looks at its arena's matches and forms tables.
TICK_S = 1.0
#: Enrolments and active versions are read again this often (they change rarely;
#: reading a thousand agents' versions is most of a tick's cost).
ENROLLED_REFRESH_S = 10.0
#: How often every node looks for arenas nobody schedules.
SUPERVISE_S = 1.0
#: The scheduler renews its lease this often (the lease lasts three times longer).
RENEW_S = 1.0
#: Decision time of arena matches (ms): the server's default clock, bounded.
ARENA_DECISION_MS = 5000


@dataclass(slots=True)
class _Clock:
    """A scheduler's timing: when it last renewed and ticked, matches it may create."""

    renewed: float
    ticked: float
    budget: float


class ArenaPlanner:
    """What an arena's scheduler decides each tick, from the store alone: the
    ratings of what ended, and who may be seated at which table."""

    def __init__(self, store: Store, ladder: Ladder) -> None:
        self.store = store
        self.ladder = ladder
        self.rng = random.Random()
        #: arena id -> (when read, its enrolled agents' player keys: version 0 for
        #: a network agent, one without an active hosted version)
        self._enrolled: dict[str, tuple[float, list[str]]] = {}
        #: arena id -> player key of a hosted version -> its version id, as last
        #: read: what the runners play for a seat the planner gave that key (the
        #: version rated is the version played, whatever was activated since).
        self.version_ids: dict[str, dict[str, str]] = {}

    async def enrolled_players(self, arena_id: str) -> list[str]:
        """``AGENT@VERSION`` of the enrolled agents (version 0: no hosted version, a
        network agent), read again every ENROLLED_REFRESH_S (at once while fewer
        than two are enrolled)."""
        read, keys = self._enrolled.get(arena_id, (-ENROLLED_REFRESH_S, []))
        if len(keys) < 2 or time.monotonic() - read >= ENROLLED_REFRESH_S:
            enrolled = await self.store.arenas.enrolled(arena_id)
            versions = await self.store.versions.active_versions(enrolled)
            keys = [player_key(a, n) for a, (n, _vid) in zip(enrolled, versions, strict=True)]
            self.version_ids[arena_id] = {k: vid for k, (_n, vid)
                                          in zip(keys, versions, strict=True) if vid}
            self._enrolled[arena_id] = (time.monotonic(), keys)
        return keys

    async def waiting_network_agents(self, arena: apb.Arena, keys: list[str],
                                     playing: Counter[str]) -> set[str]:
        """The network agents (version 0) among ``keys`` that hold a Queue for the
        arena's game and player count now and play none of its matches."""
        network = [a for a, version in map(split_player, keys) if not version]
        holds = await self.store.agents.queued_many(network)
        now_ms = time.time() * 1000
        return {agent_id for agent_id, hold in zip(network, holds, strict=True)
                if hold and (hold.game_id, hold.players) == (arena.game_id, arena.num_players)
                and not playing.get(agent_id) and hold.alive(now_ms, ALIVE_MS)}

    async def rate_ended(self, arena_id: str) -> Counter[str]:
        """Rate the arena's matches that ended; how many live matches each agent is in."""
        live = await self.store.arenas.live(arena_id)
        ids = list(live)
        records = await self.store.matches.load_many(ids) if ids else []
        playing: Counter[str] = Counter()
        for mid, record in zip(ids, records, strict=True):
            players = live[mid]
            if record is None:
                await self.store.arenas.drop_live(arena_id, mid)  # never created
                continue
            if record.status not in wire.MATCH_OVER:
                playing.update(split_player(p)[0] for p in players)
                continue
            finished = record.status == mpb.MATCH_STATUS_FINISHED and record.result is not None
            places = list(record.result.places) if record.result is not None else []
            await self.ladder.record(arena_id, mid, players, places or [1] * len(players),
                                     finished)
            await self.store.arenas.drop_live(arena_id, mid)
        return playing

    async def rungs(self, arena: apb.Arena, playing: Counter[str]) -> list[Rung]:
        """Everyone the arena may seat now: enrolled agents with an active hosted
        version, at their rating (a new version: its head start), and the house rungs."""
        arena_id = arena.arena_id
        enrolled = await self.enrolled_players(arena_id)
        waiting = await self.waiting_network_agents(arena, enrolled, playing)
        keys = [*(k for k in enrolled if split_player(k)[1] or split_player(k)[0] in waiting),
                *(house_player(bot) for bot in arena.house_bots)]
        agents = [split_player(k)[0] for k in keys]
        rows = await self.store.arenas.rows(arena_id, keys)
        # The version each agent played last: a new version starts from its rating.
        last = await self.store.arenas.current_versions(arena_id, agents)
        last_keys = [player_key(a, v) if v is not None else "-"
                     for a, v in zip(agents, last, strict=True)]
        last_rows = await self.store.arenas.rows(arena_id, last_keys)
        anchored = anchors_of(arena)
        out: list[Rung] = []
        for key, agent_id, row, before in zip(keys, agents, rows, last_rows, strict=True):
            if key in anchored:
                rating, games = anchored[key], row.games if row is not None else 0
            elif row is not None:
                rating, games = Rating(row.mu, row.sigma), row.games
            else:
                rating = next_version_rating(
                    None if before is None else Rating(before.mu, before.sigma),
                    self.ladder.model)
                games = 0
            # A network agent's Queue call takes one seat: one table per wait.
            house = bool(house_bot(agent_id))
            busy = (arena.max_concurrent_per_agent - 1 if not split_player(key)[1]
                    and not house else playing.get(agent_id, 0))
            out.append(Rung(key, rating, games, busy, house=house, agent_id=agent_id))
        return out

    async def plan(self, arena: apb.Arena, playing: Counter[str], most: int) -> list[list[str]]:
        """Up to ``most`` new tables (player keys per seat) of the arena."""
        return pick_tables(await self.rungs(arena, playing), arena.num_players,
                           arena.max_concurrent_per_agent, most, self.rng)


class ArenaScheduler:
    """Schedules the arenas whose lease this node holds; takes over orphaned ones."""

    def __init__(self, cluster: Cluster, ladder: Ladder, runners: RunnerHub, agents: Agents,
                 address: Any) -> None:
        self.cluster = cluster
        self.agents = agents
        self.store = cluster.store
        self.hub = cluster.hub
        self.planner = ArenaPlanner(cluster.store, ladder)
        self.runners = runners
        self.address = address
        #: The schedulers this node runs, one per arena it holds the lease of.
        self.schedulers = LeasedTasks("arena", self.store.arenas.leases, self._arena_ids,
                                      self._run, self.hub, SUPERVISE_S)
        self.running = self.schedulers.running

    async def start(self) -> None:
        """Start supervising: schedule arenas that no live node holds."""
        await self.schedulers.start()

    async def close(self) -> None:
        """Stop scheduling and release the leases, so another node takes over at once."""
        await self.schedulers.close()

    async def _arena_ids(self) -> list[str]:
        return [arena.arena_id for arena in await self.store.arenas.all()]

    async def _run(self, arena_id: str) -> None:
        """Tick until the arena is gone or the lease lost; a store error skips a
        tick (the next one reads everything again from the store)."""
        log.info("arena_scheduling", arena=arena_id, node=self.cluster.node_id)
        clock = _Clock(time.monotonic(), time.monotonic(), 1.0)
        while True:
            try:
                if not await self._tick(arena_id, clock):
                    return
            except FencedError:
                raise
            except StoreError as exc:
                log.warning("arena_tick_failed", arena=arena_id, error=repr(exc))
            await asyncio.sleep(TICK_S)

    async def _tick(self, arena_id: str, clock: _Clock) -> bool:
        """Renew the lease when due, rate what ended, seat what the rate allows;
        False when the scheduler should stop (lease lost, arena gone)."""
        now = time.monotonic()
        if now - clock.renewed > RENEW_S:
            if not await self.schedulers.renew(arena_id):
                return False
            clock.renewed = now
        arena = await self.store.arenas.get(arena_id)
        if arena is None:
            return False
        playing = await self.planner.rate_ended(arena_id)
        per_second = arena.matches_per_minute / 60.0
        # Matches allowed now: the rate's share of the time since the last tick,
        # with at most one tick's worth saved up (a paused arena does not burst).
        clock.budget = min(clock.budget + (now - clock.ticked) * per_second,
                           per_second * TICK_S + 1.0)
        clock.ticked = now
        if arena.status == apb.ARENA_STATUS_RUNNING and clock.budget >= 1.0:
            clock.budget -= await self.seat_tables(arena, playing, int(clock.budget))
        return True

    async def seat_tables(self, arena: apb.Arena, playing: Counter[str], most: int) -> int:
        """Form and create up to ``most`` tables; returns how many were created."""
        tables = await self.planner.plan(arena, playing, most)
        for table in tables:
            await self.create(arena, table)
        return len(tables)

    async def create(self, arena: apb.Arena, players: list[str]) -> None:
        """Note the match as live, then create it and hand its seats to their agents:
        a hosted version's to the runners, a network agent's to its Queue stream."""
        mid = f"a-{arena.arena_id}-{secrets.token_hex(6)}"
        await self.store.arenas.add_live(arena.arena_id, mid, players)
        opts = mpb.MatchOptions(game_id=arena.game_id, num_players=arena.num_players)
        opts.time_control.decision_ms = ARENA_DECISION_MS
        names = await self.store.agents.names(
            [a for a, _ in map(split_player, players) if not house_bot(a)])
        for key in players:
            agent_id, version = split_player(key)
            if house_bot(agent_id):
                opts.seats.append(mpb.SeatSpec(name=house_bot(agent_id),
                                               house_bot=house_bot(agent_id)))
            else:
                opts.seats.append(mpb.SeatSpec(
                    name=f"{names[agent_id]} v{version}" if version else names[agent_id]))
        templates = {}
        for seat, key in enumerate(players):
            agent_id, version = split_player(key)
            if version and not house_bot(agent_id):
                planned = self.planner.version_ids.get(arena.arena_id, {}).get(key, "")
                template = await self.runners.hosted_template(agent_id, version_id=planned)
                if template is not None:
                    templates[seat] = template
        try:
            match, tokens = await new_match(self.cluster, opts, match_id=mid, hosted=templates)
        except CreationError as exc:
            log.warning("arena_match_not_created", arena=arena.arena_id, error=str(exc))
            await self.store.arenas.drop_live(arena.arena_id, mid)
            return
        address = await self.cluster.serving_address(mid, self.address())
        for seat, key in enumerate(players):
            agent_id, version = split_player(key)
            if house_bot(agent_id):
                continue
            if version:
                planned = self.planner.version_ids.get(arena.arena_id, {}).get(key, "")
                await self.runners.seat_hosted(match.options, mid, seat, tokens[seat], address,
                                               agent_id, "arena", version_id=planned,
                                               template=templates.get(seat))
            else:
                await self.agents.assign(agent_id, kpb.MatchAssigned(
                    match_id=mid, seat=seat, seat_token=tokens[seat], server_address=address,
                    game_id=arena.game_id, num_players=arena.num_players))
        log.info("arena_match_created", arena=arena.arena_id, match_id=mid, players=players)
