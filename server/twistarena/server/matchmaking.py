"""Registered agents, the matchmaking queue, practice matches and agent ratings.

Keys (agents share the hash tag ``{agents}``; each queue has its own tag so
that its Lua scripts touch one cluster slot):

``{agents}:agent:<id>``     hash: ``name``, ``mu``, ``sigma``, ``matches``, ``created_ms``
``{agents}:tokens``         hash: sha256 of an api token -> agent id
``{agents}:inbox:<id>``     list: MatchAssigned messages waiting for the agent's Queue stream
``{agents}:queued``         hash: agent id -> the queue it waits in (one queue at a time)
``{agents}:rate``           sorted set: match ids whose result updates agents' ratings
``{agents}:seats:<match>``  hash: seat -> agent id (``house:<strategy>`` for house bots)
``{mmq:<game>:<n>}:order``  sorted set: waiting agent -> enqueue time (ms, Redis TIME)
``{mmq:<game>:<n>}:alive``  sorted set: waiting agent -> until when its stream vouches for it
``{mmq:<game>:<n>}:fill``   sorted set: waiting agent -> when house bots may fill its match
``{mmq:<game>:<n>}:rating`` hash: waiting agent -> its mu
``{mmq:<game>:<n>}:bot``    hash: waiting agent -> house bot strategy for filled seats

Forming a match is one Lua script (``POP_LUA``) that removes the agents it
returns from the queue, so two nodes can never place the same agent twice; a
node whose Queue streams wait on a queue runs it every tick. The node that
popped creates the match and pushes each agent's MatchAssigned into its
inbox, which the agent's stream (on whatever node) delivers. An agent whose
stream vanished (its node died) stops being vouched for and is dropped by the
next pop.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from grpc import aio
from prometheus_client import Counter
from redis.exceptions import NoScriptError, RedisError, WatchError
from twistarena import engine
from twistarena.bots import LADDER, STRATEGIES
from twistarena.league import PlackettLuce, Rating
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.v1 import tournaments_pb2 as tpb

from . import auth, cluster, logs, metrics
from .config import ServerConfig, is_loopback
from .creation import new_match
from .disclosure import redact
from .limits import Quotas
from .rpc import fail, is_admin, peer_host, require_admin, shown
from .runner import Hub

log = logs.get("twistarena.matchmaking")

MATCHMADE = Counter("twistarena_matchmade_total", "Matches formed from the queue")
PRACTICE = Counter("twistarena_practice_matches_total", "Practice matches created")

AGENTS = "{agents}"
TOKENS = f"{AGENTS}:tokens"
QUEUED = f"{AGENTS}:queued"
RATE = f"{AGENTS}:rate"
#: A Queue stream re-vouches for its agent every second; after this long without
#: it (its node died) the agent leaves the queue.
ALIVE_MS = 5000
#: A matchmade match is abandoned if a seated agent has not joined within this
#: (its agents were connected and waiting when it formed).
MATCHMADE_JOIN_MS = 60_000
TICK_S = 0.1
STATUS_EVERY_S = 1.0
#: Fill time of an entry that never wants house bots (ms; far future).
STRENGTHS = LADDER  # practice strengths: the rungs of the house ladder
OVER = (mpb.MATCH_STATUS_FINISHED, mpb.MATCH_STATUS_CANCELLED)

# KEYS: order, alive, fill, rating, bot. ARGV: agent, fill after ms (-1: never),
# mu, bot, alive ms. Returns 1 (queued) or 0 (already in this queue).
ENQUEUE_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local added = redis.call('ZADD', KEYS[1], 'NX', now, ARGV[1])
local fill = tonumber(ARGV[2])
if fill < 0 then fill = 1125899906842624 else fill = now + fill end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[1])
redis.call('ZADD', KEYS[3], fill, ARGV[1])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[4])
return added
"""

# KEYS: order, alive, fill, rating, bot. ARGV: seats, mode ('fifo' | 'rating').
# Drops agents nobody vouches for, then takes one match's worth: the oldest
# agents (or the oldest and those closest to it in rating), or, when fewer
# wait, everyone waiting if one of them may have house bots by now. Returns a
# flat list agent, bot, agent, bot... (empty: no match yet).
POP_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function drop(a)
  redis.call('ZREM', KEYS[1], a)
  redis.call('ZREM', KEYS[2], a)
  redis.call('ZREM', KEYS[3], a)
  redis.call('HDEL', KEYS[4], a)
  redis.call('HDEL', KEYS[5], a)
end
for _, a in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)) do drop(a) end
local n = tonumber(ARGV[1])
local all = redis.call('ZRANGE', KEYS[1], 0, -1)
if #all == 0 then return {} end
local picked = {}
if #all >= n then
  if ARGV[2] == 'rating' and #all > n then
    local r0 = tonumber(redis.call('HGET', KEYS[4], all[1]) or '0') or 0
    local others = {}
    for i = 2, #all do
      local r = tonumber(redis.call('HGET', KEYS[4], all[i]) or '0') or 0
      table.insert(others, {math.abs(r - r0), i, all[i]})
    end
    table.sort(others, function(x, y)
      if x[1] == y[1] then return x[2] < y[2] end
      return x[1] < y[1]
    end)
    picked = {all[1]}
    for i = 1, n - 1 do table.insert(picked, others[i][3]) end
  else
    for i = 1, n do picked[i] = all[i] end
  end
else
  local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 1)
  if #due == 0 then return {} end
  picked = {due[1]}
  for i = 1, #all do
    if all[i] ~= due[1] then table.insert(picked, all[i]) end
  end
end
local out = {}
for _, a in ipairs(picked) do
  table.insert(out, a)
  table.insert(out, redis.call('HGET', KEYS[5], a) or '')
  drop(a)
end
return out
"""


def agent_key(agent_id: str) -> str:
    return f"{AGENTS}:agent:{agent_id}"


def inbox_key(agent_id: str) -> str:
    return f"{AGENTS}:inbox:{agent_id}"


def seats_key(match_id: str) -> str:
    return f"{AGENTS}:seats:{match_id}"


def queue_keys(game_id: str, players: int) -> list[str]:
    tag = f"{{mmq:{game_id}:{players}}}"
    return [f"{tag}:{part}" for part in ("order", "alive", "fill", "rating", "bot")]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)



class RateLimiter:
    """A token bucket per key: ``per_minute`` calls, bursts of up to a third of that."""

    def __init__(self, per_minute: int) -> None:
        self.rate = max(1, per_minute) / 60.0
        self.burst = max(1.0, per_minute / 3)
        self.buckets: dict[str, tuple[float, float]] = {}

    def allow(self, key: str) -> bool:
        now = time.monotonic()
        tokens, last = self.buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if len(self.buckets) > 10_000:
            self.buckets.clear()
        if tokens < 1.0:
            self.buckets[key] = (tokens, now)
            return False
        self.buckets[key] = (tokens - 1.0, now)
        return True


@dataclass(slots=True)
class AgentRecord:
    agent_id: str
    name: str
    mu: float
    sigma: float
    matches: int


class Agents:
    """Agent accounts, inboxes and ratings in Redis."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.redis = hub.store.redis
        #: Local Queue streams waiting for their agent's inbox, woken on delivery.
        self.waiters: dict[str, asyncio.Event] = {}

    async def register(self, name: str) -> tuple[str, str]:
        model = PlackettLuce()
        agent_id = "ag_" + secrets.token_hex(6)
        token = auth.new_token(auth.AGENT_TOKEN_PREFIX)
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(agent_key(agent_id), mapping={
            "name": name, "mu": repr(model.mu), "sigma": repr(model.sigma), "matches": 0,
            "created_ms": int(time.time() * 1000)})
        pipe.hset(TOKENS, auth.token_hash(token), agent_id)
        await pipe.execute()
        return agent_id, token

    async def by_token(self, token: str) -> str | None:
        if not token:
            return None
        raw: Any = await self.redis.hget(TOKENS, auth.token_hash(token))
        return _text(raw) if raw else None

    async def get(self, agent_id: str) -> AgentRecord | None:
        raw: Any = await self.redis.hgetall(agent_key(agent_id))
        if not raw:
            return None
        return _agent_from_hash(agent_id, raw)

    async def exists(self, agent_ids: Iterable[str]) -> list[bool]:
        pipe = self.redis.pipeline(transaction=False)
        for agent_id in agent_ids:
            pipe.exists(agent_key(agent_id))
        return [bool(x) for x in await pipe.execute()]

    async def assign(self, agent_id: str, assigned: kpb.MatchAssigned) -> None:
        """Hand a seat to the agent (its Queue stream delivers it)."""
        await self.redis.rpush(inbox_key(agent_id), assigned.SerializeToString())
        waiter = self.waiters.get(agent_id)
        if waiter is not None:
            waiter.set()

    async def take_assignment(self, agent_id: str) -> kpb.MatchAssigned | None:
        raw: Any = await self.redis.lpop(inbox_key(agent_id))
        return kpb.MatchAssigned.FromString(raw) if raw else None

    async def track(self, match_id: str, seat_agents: dict[int, str]) -> None:
        """Rate the agents of this match once it is over."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(seats_key(match_id), mapping={
            str(s): a for s, a in seat_agents.items()})
        pipe.zadd(RATE, {match_id: int(time.time() * 1000)})
        await pipe.execute()

    async def rate_finished(self) -> int:
        """Apply the rating updates of tracked matches that ended; returns how many."""
        raw: Any = await self.redis.zrange(RATE, 0, 199)
        ids = [_text(m) for m in raw]
        if not ids:
            return 0
        records = await self.hub.store.load_many(ids)
        done = 0
        for mid, record in zip(ids, records, strict=True):
            if record is not None and record.status not in OVER:
                continue
            # Whoever removes the match from the set applies its update (once).
            if not await self.redis.zrem(RATE, mid):
                continue
            seats_raw: Any = await self.redis.hgetall(seats_key(mid))
            await self.redis.delete(seats_key(mid))
            if record is None or record.status != mpb.MATCH_STATUS_FINISHED:
                continue
            assert record.result is not None
            seats = {int(k): _text(v) for k, v in seats_raw.items()}
            await self.apply_result(seats, list(record.result.places))
            done += 1
        return done

    async def apply_result(self, seats: dict[int, str], places: list[int]) -> None:
        """One match's Plackett-Luce update of the agents in it (house bots: fixed)."""
        model = PlackettLuce()
        agents = sorted({a for a in seats.values() if not a.startswith("house:")})
        if not agents:
            return
        keys = [agent_key(a) for a in agents]
        for _attempt in range(20):
            async with self.redis.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(*keys)
                    current: dict[str, Rating] = {}
                    for agent_id, key in zip(agents, keys, strict=True):
                        row: Any = await pipe.hmget(key, "mu", "sigma")
                        if row[0] is None:
                            current[agent_id] = model.rating()
                        else:
                            current[agent_id] = Rating(float(row[0]), float(row[1]))
                    order = sorted(seats)
                    before = [current.get(seats[s]) or model.rating() for s in order]
                    after = model.rate(before, [places[s] for s in order])
                    news: dict[str, list[Rating]] = {}
                    for s, new in zip(order, after, strict=True):
                        if seats[s] in current:
                            news.setdefault(seats[s], []).append(new)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    for agent_id, items in news.items():
                        mu = sum(r.mu for r in items) / len(items)
                        sigma = sum(r.sigma for r in items) / len(items)
                        pipe.hset(agent_key(agent_id), mapping={
                            "mu": repr(mu), "sigma": repr(sigma)})
                        pipe.hincrby(agent_key(agent_id), "matches", 1)
                    await pipe.execute()
                    return
                except WatchError:
                    await asyncio.sleep(0.01 * random.random())
        log.warning("rating_update_gave_up", agents=agents)


def _agent_from_hash(agent_id: str, raw: dict[bytes, bytes]) -> AgentRecord:
    return AgentRecord(agent_id, _text(raw.get(b"name", b"")), float(raw.get(b"mu", b"25")),
                       float(raw.get(b"sigma", b"8.333")), int(raw.get(b"matches", b"0")))


class Matchmaker:
    """This node's part in forming matches: pops the queues its streams wait on."""

    def __init__(self, hub: Hub, agents: Agents, config: ServerConfig,
                 address: Any) -> None:
        self.hub = hub
        self.agents = agents
        self.config = config
        self.address = address
        self.redis = hub.store.redis
        self.active: dict[tuple[str, int], int] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._sha: dict[str, str] = {}

    async def start(self) -> None:
        await self._load()
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._form_loop()), loop.create_task(self._rate_loop())]

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    async def _load(self) -> None:
        self._sha = {"enqueue": await self.redis.script_load(ENQUEUE_LUA),
                     "pop": await self.redis.script_load(POP_LUA)}

    async def _eval(self, name: str, keys: list[str], args: list[Any]) -> Any:
        try:
            return await self.redis.evalsha(self._sha[name], len(keys), *keys, *args)
        except NoScriptError:
            await self._load()
            return await self.redis.evalsha(self._sha[name], len(keys), *keys, *args)

    # -- queue entries -----------------------------------------------------------

    async def enqueue(self, agent_id: str, game_id: str, players: int, fill_after_ms: int,
                      bot: str, mu: float) -> bool:
        res = await self._eval("enqueue", queue_keys(game_id, players),
                               [agent_id, fill_after_ms, repr(mu), bot, ALIVE_MS])
        return bool(res)

    async def vouch(self, agent_id: str, game_id: str, players: int) -> None:
        keys = queue_keys(game_id, players)
        now_ms = int(time.time() * 1000)
        await self.redis.zadd(keys[1], {agent_id: now_ms + ALIVE_MS}, xx=True)

    async def leave(self, agent_id: str, game_id: str, players: int) -> None:
        keys = queue_keys(game_id, players)
        pipe = self.redis.pipeline(transaction=False)
        for key in keys[:3]:
            pipe.zrem(key, agent_id)
        for key in keys[3:]:
            pipe.hdel(key, agent_id)
        await pipe.execute()

    async def waiting(self, game_id: str, players: int) -> int:
        return int(await self.redis.zcard(queue_keys(game_id, players)[0]))

    def attach(self, game_id: str, players: int) -> None:
        key = (game_id, players)
        self.active[key] = self.active.get(key, 0) + 1
        self._wake.set()

    def detach(self, game_id: str, players: int) -> None:
        key = (game_id, players)
        self.active[key] -= 1
        if self.active[key] <= 0:
            del self.active[key]

    # -- forming matches -----------------------------------------------------------

    async def _form_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK_S)
            self._wake.clear()
            for game_id, players in list(self.active):
                try:
                    while await self.form_one(game_id, players):
                        pass
                except (RedisError, OSError) as exc:
                    log.warning("matchmaking_failed", game=game_id, players=players,
                                error=repr(exc))
                except Exception as exc:  # keep forming other queues' matches
                    metrics.ERRORS.labels("matchmaking").inc()
                    log.error("matchmaking_failed", game=game_id, players=players,
                              error=repr(exc))

    async def form_one(self, game_id: str, players: int) -> bool:
        """Pop one match's worth of agents and seat them; False when none is due."""
        mode = "rating" if self.config.match_by_rating else "fifo"
        raw = await self._eval("pop", queue_keys(game_id, players), [players, mode])
        if not raw:
            return False
        items = [_text(x) for x in raw]
        picked = list(zip(items[0::2], items[1::2], strict=True))
        house = picked[0][1] or "heuristic"
        names: dict[str, str] = {}
        pipe = self.redis.pipeline(transaction=False)
        for agent_id, _bot in picked:
            pipe.hget(agent_key(agent_id), "name")
        for (agent_id, _bot), name in zip(picked, await pipe.execute(), strict=True):
            names[agent_id] = _text(name) if name else agent_id
        seats: list[str] = [a for a, _ in picked] + [""] * (players - len(picked))
        random.shuffle(seats)
        opts = mpb.MatchOptions(game_id=game_id, num_players=players)
        opts.time_control.join_timeout_ms = MATCHMADE_JOIN_MS
        for agent_id in seats:
            if agent_id:
                opts.seats.append(mpb.SeatSpec(name=names[agent_id]))
            else:
                opts.seats.append(mpb.SeatSpec(name=f"house {house}", house_bot=house))
        match, tokens = await new_match(self.hub, opts)
        mid = match.match_id
        seat_of = {a: s for s, a in enumerate(seats) if a}
        await self.agents.track(mid, {s: (a or f"house:{house}") for s, a in enumerate(seats)})
        address = await cluster.serving_address(self.hub, mid, self.address())
        for agent_id, seat in seat_of.items():
            await self.agents.assign(agent_id, kpb.MatchAssigned(
                match_id=mid, seat=seat, seat_token=tokens[seat],
                server_address=address, game_id=game_id, num_players=players))
        MATCHMADE.inc()
        log.info("match_formed", match_id=mid, game=game_id, players=players,
                 agents=len(seat_of), house=players - len(seat_of))
        return True

    async def _rate_loop(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            try:
                await self.agents.rate_finished()
            except (RedisError, OSError) as exc:
                log.warning("rating_failed", error=repr(exc))
            except Exception as exc:
                metrics.ERRORS.labels("rating").inc()
                log.error("rating_failed", error=repr(exc))


class Matchmaking(kgrpc.MatchmakingServicer):
    def __init__(self, hub: Hub, config: ServerConfig, agents: Agents,
                 matchmaker: Matchmaker, quotas: Quotas) -> None:
        self.hub = hub
        self.config = config
        self.quotas = quotas
        self.agents = agents
        self.matchmaker = matchmaker
        self.limiter = RateLimiter(config.practice_per_minute)

    async def RegisterAgent(self, request: kpb.RegisterAgentRequest,
                            context: aio.ServicerContext[Any, Any]) -> kpb.RegisterAgentResponse:
        await require_admin(context, self.config)
        name = request.name.strip()
        if not 1 <= len(name) <= 100:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE",
                       "an agent name has 1-100 characters")
        await self.quotas.admit_creation(context, makes_match=False)
        agent_id, token = await self.agents.register(name)
        log.info("agent_registered", agent_id=agent_id, name=name)
        return kpb.RegisterAgentResponse(agent_id=agent_id, api_token=token)

    async def GetAgent(self, request: kpb.GetAgentRequest,
                       context: aio.ServicerContext[Any, Any]) -> kpb.AgentInfo:
        record = await self.agents.get(request.agent_id) if request.agent_id else None
        if record is None:
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_AGENT",
                       f"no agent with id {shown(request.agent_id)}")
        return kpb.AgentInfo(agent_id=record.agent_id, name=record.name, mu=record.mu,
                             sigma=record.sigma, matches=record.matches)

    async def _agent(self, context: aio.ServicerContext[Any, Any]) -> str:
        token = auth.bearer(context.invocation_metadata())
        if not token:
            await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                       "Queue needs an api token: metadata 'authorization: Bearer <token>' "
                       "(Matchmaking.RegisterAgent gives one)")
        agent_id = await self.agents.by_token(token)
        if agent_id is None:
            await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                       "the api token belongs to no registered agent")
        return agent_id

    async def Queue(self, request: kpb.QueueRequest,
                    context: aio.ServicerContext[Any, Any]) -> None:
        agent_id = await self._agent(context)
        game_id, players = request.game_id, request.num_players
        problem = _check_game(game_id, players)
        if problem:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", problem)
        bot = request.house_bot or "heuristic"
        if bot not in STRATEGIES:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS",
                       f"unknown house bot {shown(bot)}; known: {', '.join(STRATEGIES)}")
        if self.hub.draining:
            await fail(context, grpc.StatusCode.UNAVAILABLE, "DRAINING",
                       "server draining; queue on another server")
        if request.HasField("house_fill_after_ms"):
            fill_ms = int(request.house_fill_after_ms)
        elif self.config.house_fill_after_s is not None:
            fill_ms = int(self.config.house_fill_after_s * 1000)
        else:
            fill_ms = -1
        redis = self.hub.store.redis
        claim = f"{game_id}:{players}:{time.time() * 1000:.0f}"
        held: Any = await redis.hget(QUEUED, agent_id)
        if held and int(_text(held).rsplit(":", 1)[1]) + ALIVE_MS > time.time() * 1000:
            await fail(context, grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_QUEUED",
                       f"agent {agent_id} already waits in a queue ({_text(held)})")
        await redis.hset(QUEUED, agent_id, claim)
        waiter = asyncio.Event()
        self.agents.waiters[agent_id] = waiter
        queued = False
        started = time.monotonic()
        try:
            assigned = await self.agents.take_assignment(agent_id)
            if assigned is None and not request.tournament_only:
                record = await self.agents.get(agent_id)
                mu = record.mu if record is not None else 25.0
                queued = await self.matchmaker.enqueue(agent_id, game_id, players, fill_ms,
                                                       bot, mu)
                self.matchmaker.attach(game_id, players)
            last_status = 0.0
            while assigned is None:
                now = time.monotonic()
                if now - last_status >= STATUS_EVERY_S:
                    last_status = now
                    over = await self._tournament_over(request, context)
                    if over is not None:
                        assigned = await self.agents.take_assignment(agent_id)
                        if assigned is None:
                            await context.write(kpb.QueueUpdate(tournament_over=over))
                            return
                        break
                    await redis.hset(QUEUED, agent_id,
                                     f"{game_id}:{players}:{time.time() * 1000:.0f}")
                    if queued:
                        await self.matchmaker.vouch(agent_id, game_id, players)
                    waiting = await self.matchmaker.waiting(game_id, players)
                    waited = now - started
                    detail = (f"waiting for a tournament match ({waited:.0f} s)"
                              if request.tournament_only else
                              _status_line(waiting, players, waited, fill_ms))
                    await context.write(kpb.QueueUpdate(status=kpb.QueueStatus(
                        waiting=waiting, waited_ms=int(waited * 1000), detail=detail)))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter.wait(), TICK_S * 2)
                waiter.clear()
                assigned = await self.agents.take_assignment(agent_id)
            queued = False
            await context.write(kpb.QueueUpdate(assigned=assigned))
        finally:
            if self.agents.waiters.get(agent_id) is waiter:
                del self.agents.waiters[agent_id]
            with contextlib.suppress(RedisError, OSError):
                await redis.hdel(QUEUED, agent_id)
                if queued:
                    await self.matchmaker.leave(agent_id, game_id, players)
            if not request.tournament_only and (game_id, players) in self.matchmaker.active:
                self.matchmaker.detach(game_id, players)

    async def _tournament_over(self, request: kpb.QueueRequest,
                               context: aio.ServicerContext[Any, Any],
                               ) -> kpb.TournamentOver | None:
        """For a tournament_only wait on ``request.tournament_id``: how it ended, or
        None while it runs (NOT_FOUND if there is no such tournament)."""
        tid = request.tournament_id
        if not request.tournament_only or not tid:
            return None
        from .tournaments import OVER_STATUSES, meta_key  # tournaments imports this module

        status, detail = await self.hub.store.redis.hmget(meta_key(tid), "status", "detail")
        if status is None:
            await fail(context, grpc.StatusCode.NOT_FOUND, "UNKNOWN_TOURNAMENT",
                       f"no tournament {tid!r}")
        if int(status) not in OVER_STATUSES:
            return None
        name = tpb.TournamentStatus.Name(int(status)).removeprefix("TOURNAMENT_")
        return kpb.TournamentOver(tournament_id=tid, status=name,
                                  detail=_text(detail) if detail else "")

    async def Practice(self, request: kpb.PracticeRequest,
                       context: aio.ServicerContext[Any, Any]) -> kpb.PracticeResponse:
        token = auth.bearer(context.invocation_metadata())
        host = peer_host(context)
        who = host
        admin = is_admin(context, self.config)
        if token:
            agent_id = await self.agents.by_token(token)
            if agent_id is None and not admin:
                await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                           "the token is neither an api token nor the admin token")
            who = agent_id or "admin"
        elif not is_loopback(host):
            await fail(context, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN",
                       "practice from another machine needs an api token: metadata "
                       "'authorization: Bearer <token>'")
        if who != "admin" and not self.limiter.allow(who):
            await fail(context, grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED",
                       f"at most {self.config.practice_per_minute} practice matches a minute; "
                       "wait a little")
        if self.hub.draining:
            await fail(context, grpc.StatusCode.UNAVAILABLE, "DRAINING",
                       "server draining; practice on another server")
        game_id = request.game_id
        players = request.num_players
        if game_id in engine.GAME_IDS and not players:
            players = engine.game(game_id).min_players
        problem = _check_game(game_id, players)
        strength = request.strength or "heuristic"
        if not problem and strength not in STRENGTHS:
            problem = f"unknown strength {shown(strength)}; known: {', '.join(STRENGTHS)}"
        if problem:
            await fail(context, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS", problem)
        if request.HasField("seed") and self.config.admin_token and not admin:
            await fail(context, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED_ADMIN",
                       "seed needs the admin token: whoever picks the seed knows every hand")
        seed = request.seed if request.HasField("seed") else secrets.randbits(63)
        seat = seed % players
        opts = mpb.MatchOptions(game_id=game_id, num_players=players, seed=seed,
                                time_control=request.time_control)
        for s in range(players):
            opts.seats.append(mpb.SeatSpec(name="you") if s == seat else
                              mpb.SeatSpec(name=f"house {strength}", house_bot=strength))
        creator = await self.quotas.admit_creation(context, makes_match=True)
        match, tokens = await new_match(self.hub, opts)
        self.quotas.created(creator, f"match:{match.match_id}")
        PRACTICE.inc()
        log.info("practice_created", match_id=match.match_id, game=game_id, players=players,
                 strength=strength, peer=host)
        if not admin:
            redact(match)
        address = await cluster.serving_address(self.hub, match.match_id,
                                                self.matchmaker.address())
        return kpb.PracticeResponse(match=match, seat=seat, seat_token=tokens[seat],
                                    server_address=address)


def _check_game(game_id: str, players: int) -> str:
    if game_id not in engine.GAME_IDS:
        return f"unknown game {shown(game_id)}; games: {', '.join(engine.GAME_IDS)}"
    info = engine.game(game_id)
    if not info.min_players <= players <= info.max_players:
        return f"{game_id} is for {info.min_players}-{info.max_players} players, got {players}"
    return ""


def _status_line(waiting: int, players: int, waited: float, fill_ms: int) -> str:
    line = f"{min(waiting, players)} of {players} players"
    if fill_ms >= 0:
        left = max(0.0, fill_ms / 1000 - waited)
        line += f"; house bots in {left:.0f} s" if left else "; house bots now"
    return line
