"""Hosted seats and the runners that play them, in the store.

Keys (tag ``{runners}``, see ``keys``): ``pending`` (seats waiting for a
runner, oldest first), ``seats`` (each seat's SeatAssignment), ``held`` and
``holder`` (which runner holds a seat, until when without a heartbeat),
``tokens`` (minted runner tokens), ``session:<hash>``,
``played:<seat>:<runner>`` and ``handout:<seat>``. A seat key is
``<match id>:<seat>``.

Every node reads and writes the same keys, so a seat created on one node is
taken by whichever node has a runner with a free slot, and a seat whose runner
stopped renewing it (the runner died, or the node it talked to did) goes back
to the front of the line on any node's sweep. Taking, renewing, giving back and
finishing a seat are one script each, so two nodes never hand one seat to two
runners at once.

A seat handed out again (its runner lost it) has a higher hand-out number
(``Join.handout``). The latest one is kept per seat in the store, so every
node, a restarted one too, fences off the runners that had the seat before:
their Joins and their reports are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import keys
from .connection import Connections, StorePart
from .errors import driver_errors
from .replies import text
from .scripts import Scripts

#: A report of a seat may come this long after the runner took it (and the seat's
#: latest hand-out fences off older ones that long).
PLAYED_TTL_S = 86_400
#: At most this many expired seats move per sweep.
SWEEP_BATCH = 200
_SEAT_KEYS = (keys.RUNNER_PENDING, keys.RUNNER_SEATS, keys.RUNNER_HELD, keys.RUNNER_HOLDER)


def seat_key(match_id: str, seat: int) -> str:
    """The key of one seat of one match."""
    return f"{match_id}:{seat}"


def parse_seat_key(key: str) -> tuple[str, int]:
    """(match id, seat) of a seat key."""
    match_id, _, seat = key.rpartition(":")
    return match_id, int(seat)


@dataclass(frozen=True, slots=True)
class PlayedSeat:
    """What a runner played a seat with: the agent, the version's hash and the
    seat's hand-out it got; and the seat's latest hand-out when it reported."""

    agent_id: str
    version_hash: str
    handout: int
    latest: int

    @property
    def handed_over(self) -> bool:
        """The seat went to another runner since this one was given it."""
        return bool(self.handout) and self.handout < self.latest


@dataclass(frozen=True, slots=True)
class TakenSeat:
    """A seat a runner was just given: its key, its SeatAssignment (bytes), and how
    many runners had it before."""

    key: str
    assignment: bytes
    handoffs: int


class RunnerStore(StorePart):
    """Hosted seats waiting for or held by runners; runner tokens and sessions."""

    def __init__(self, conn: Connections, scripts: Scripts) -> None:
        super().__init__(conn)
        self.scripts = scripts

    async def _run(self, script: Any, script_keys: tuple[str, ...], args: list[Any]) -> Any:
        with driver_errors():
            return await self.scripts.run(self._redis, script, script_keys, args)

    # -- seats ---------------------------------------------------------------------

    async def add_seat(self, key: str, assignment: bytes, lost: bool = False) -> bool:
        """A hosted seat that needs a runner: stored, and at the end of the line,
        unless it waits there or a runner holds it already (False then). ``lost``:
        the store lost the seat's entry, and may have lost a hand-out of it with it:
        its next hand-out skips one, so that a runner given it then is refused."""
        seat_keys = (keys.RUNNER_PENDING, keys.RUNNER_SEATS, keys.RUNNER_HOLDER,
                     keys.runner_handout(key))
        return bool(await self._run(self.scripts.runner_add, seat_keys,
                                    [key, assignment, int(lost)]))

    async def keep_with_match(self, match_id: str, seat: int, assignment: bytes) -> None:
        """A copy of a hosted seat's SeatAssignment in its match's metadata
        (``hosted:<seat>``), written before the seat joins the line: a store that
        lost the line's entry but kept the match has it there, and the node that
        opens the match next puts the seat back (``add_seat(lost=True)``)."""
        await self._run(self.scripts.hset_existing, (keys.match_meta(match_id),),
                        [f"hosted:{seat}", assignment])

    async def take(self, runner_id: str, hold_ms: int) -> TakenSeat | None:
        """Give the oldest waiting seat to ``runner_id`` (held ``hold_ms`` without a
        heartbeat), or None when no seat waits."""
        raw = await self._run(self.scripts.runner_take, _SEAT_KEYS, [runner_id, hold_ms])
        if not raw:
            return None
        return TakenSeat(text(raw[0]), bytes(raw[1]), int(raw[2]))

    async def note_played(self, key: str, runner_id: str, agent_id: str,
                          version_hash: str, handout: int) -> None:
        """Remember which agent's version the runner plays the seat with, and as which
        hand-out, until it reports; the seat's latest hand-out rises to it."""
        await self._run(self.scripts.runner_handed,
                        (keys.runner_played(key, runner_id), keys.runner_handout(key)),
                        [f"{agent_id} {version_hash} {handout}", handout, PLAYED_TTL_S])

    async def latest_handout(self, key: str) -> int:
        """The seat's latest hand-out to a runner (0: never handed to one)."""
        with driver_errors():
            raw: Any = await self._redis.get(keys.runner_handout(key))
        return int(raw or 0)

    async def take_played(self, key: str, runner_id: str) -> PlayedSeat | None:
        """What the runner played the seat with, once (None: the seat was never given
        to it, or it already reported), read with the seat's latest hand-out in one
        step."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=True)
            pipe.getdel(keys.runner_played(key, runner_id))
            pipe.get(keys.runner_handout(key))
            raw, latest = await pipe.execute()
        if not raw:
            return None
        agent_id, _, rest = text(raw).partition(" ")
        version, _, handout = rest.partition(" ")
        return PlayedSeat(agent_id, version, int(handout or 0), int(latest or 0))

    async def renew(self, runner_id: str, seat_keys: list[str], hold_ms: int) -> list[str]:
        """Hold the runner's seats for another ``hold_ms``; returns the keys among
        them that are not the runner's any more (revoke them)."""
        if not seat_keys:
            return []
        raw = await self._run(self.scripts.runner_renew,
                              (keys.RUNNER_HELD, keys.RUNNER_HOLDER),
                              [runner_id, hold_ms, *seat_keys])
        return [text(k) for k in raw or ()]

    async def give_back(self, runner_id: str, seat_keys: list[str]) -> int:
        """The runner is gone: its seats go to the front of the line; how many moved."""
        if not seat_keys:
            return 0
        return int(await self._run(self.scripts.runner_requeue, _SEAT_KEYS,
                                   [runner_id, *seat_keys]))

    async def expire(self) -> list[str]:
        """Seats whose runner stopped renewing them go to the front of the line."""
        raw = await self._run(self.scripts.runner_expire, _SEAT_KEYS, [SWEEP_BATCH])
        return [text(k) for k in raw or ()]

    async def done(self, runner_id: str, key: str) -> bool:
        """The runner finished the seat: forget it (False: it is not the runner's)."""
        return bool(await self._run(self.scripts.runner_done,
                                    (keys.RUNNER_SEATS, keys.RUNNER_HELD, keys.RUNNER_HOLDER),
                                    [runner_id, key]))

    async def assignment(self, key: str) -> tuple[str, bytes] | None:
        """(holder runner id, SeatAssignment bytes) of a seat held by a runner."""
        with driver_errors():
            pipe = self._redis.pipeline(transaction=False)
            pipe.hget(keys.RUNNER_HOLDER, key)
            pipe.hget(keys.RUNNER_SEATS, key)
            holder, raw = await pipe.execute()
        if not holder or not raw:
            return None
        return text(holder), bytes(raw)

    async def waiting(self) -> int:
        """Seats waiting for a runner."""
        with driver_errors():
            return int(await self._redis.llen(keys.RUNNER_PENDING))

    # -- tokens and sessions ----------------------------------------------------------

    async def add_token(self, token_hash: str, name: str) -> None:
        """Store a minted runner token (its hash only)."""
        with driver_errors():
            await self._redis.hset(keys.RUNNER_TOKENS, token_hash, name)

    async def token_known(self, token_hash: str) -> bool:
        """Whether a minted runner token has this hash."""
        with driver_errors():
            return bool(await self._redis.hexists(keys.RUNNER_TOKENS, token_hash))

    async def open_session(self, key_hash: str, runner_id: str, ttl_ms: int) -> None:
        """A runner's session key (its hash) names the runner for ``ttl_ms``."""
        with driver_errors():
            await self._redis.set(keys.runner_session(key_hash), runner_id, px=ttl_ms)

    async def renew_session(self, key_hash: str, runner_id: str, ttl_ms: int) -> None:
        """Keep a live runner's session key valid for ``ttl_ms`` more: stored again,
        not only extended, so that a key the store lost (a restart, an eviction, an
        expiry while the node was cut off) comes back with the next heartbeat."""
        await self.open_session(key_hash, runner_id, ttl_ms)

    async def session_runner(self, key_hash: str) -> str | None:
        """The runner a session key (by its hash) belongs to."""
        with driver_errors():
            raw: Any = await self._redis.get(keys.runner_session(key_hash))
        return text(raw) if raw else None
