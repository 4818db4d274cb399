"""One lease mechanism for everything a single node must drive: matches and tournaments.

A lease is a hash (``{m:<id>}:owner``, ``{t:<id>}:owner``): ``node``,
``epoch`` (the fencing epoch, +1 on every claim), ``token``
(``<node>:<epoch>:<nonce>``, what fenced writes present: the nonce, drawn by
the claimer, keeps a token unique when a store that lost a claim hands the same
epoch out again), ``until`` (expiry, ms of the
Redis server's TIME), ``addr`` (the holder's advertised address),
``claimed_ms``; after a release ``released_ms``, ``prev`` and ``next`` /
``next_addr`` (the successor chosen by a drain).

- **claim**: take the lease (``lease_claim.lua``); refused while another
  node's lease is valid unless forced; the epoch goes up by one.
- **renew**: extend a lease that is still ours and valid (``lease_renew.lua``).
- **release**: give it up at once, naming a successor (``lease_release.lua``).
- **fence**: a write presents the token and is refused once it changed or the
  lease expired (``append.lua`` for the action log, ``fenced_hset.lua`` for
  hashes), so two holders can never both write; and refused for good once
  the match's end is stored (``ended``, set by ``finish.lua``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .connection import Connections
from .errors import FencedError, StoreError, driver_errors, translate
from .replies import integer, text
from .resp import Arg
from .scripts import Script, Scripts


@dataclass(frozen=True, slots=True)
class Holder:
    """Who claims leases, as what, for how long."""

    node_id: str
    #: The advertised address written into a claimed lease ('' when none).
    address: str = ""
    lease_ms: int = 2000


@dataclass(frozen=True, slots=True)
class Grant:
    """A lease won: the token fenced writes present, and its expiry (Redis TIME ms)."""

    token: str
    until_ms: int


@dataclass(frozen=True, slots=True)
class LeaseState:
    """What a lease key says (empty strings and 0 when unset)."""

    node: str
    until: int
    address: str
    next: str
    next_address: str


@dataclass(frozen=True, slots=True)
class Handoff:
    """Release a lease, naming the successor ('' when none)."""

    key_id: str
    token: str
    next_node: str = ""
    next_address: str = ""


class Leases:
    """Leases of one kind of thing (``lease_key`` maps its id to the lease key)."""

    def __init__(self, conn: Connections, scripts: Scripts, holder: Holder,
                 lease_key: Callable[[str], str]) -> None:
        self.conn = conn
        self.scripts = scripts
        self.holder = holder
        self.key = lease_key

    def _claim_args(self, force: bool) -> list[Arg]:
        h = self.holder
        return [h.node_id, h.address, h.lease_ms, 1 if force else 0, secrets.token_hex(4)]

    async def claim(self, key_id: str, force: bool = False) -> Grant:
        """Take the lease; ``FencedError`` while another node's lease is valid
        (unless ``force``)."""
        with driver_errors():
            res = await self.scripts.run(self.conn.redis, self.scripts.lease_claim,
                                         [self.key(key_id)], self._claim_args(force))
        if int(res[0]) != 1:
            raise FencedError(f"{key_id}: held by {text(res[1])} (lease valid)")
        return Grant(text(res[1]), int(res[2]))

    async def claim_many(self, key_ids: Sequence[str], force: bool = False,
                         ) -> list[Grant | StoreError | None]:
        """Claim each in one pipeline: a Grant, None (held by another node) or the
        error of that claim."""
        with driver_errors():
            replies = await self.scripts.run_many(
                self.conn, [self.claim_call(k, force) for k in key_ids])
        return [self.granted(res) for res in replies]

    def claim_call(self, key_id: str, force: bool = False) -> tuple[Script, list[str], list[Arg]]:
        """The claim of one lease as a script call, to share a pipeline."""
        return (self.scripts.lease_claim, [self.key(key_id)], self._claim_args(force))

    @staticmethod
    def granted(reply: Any) -> Grant | StoreError | None:
        """A claim's reply: a Grant, None (held by another node) or its error."""
        if isinstance(reply, Exception):
            return translate(reply)
        if int(reply[0]) == 1:
            return Grant(text(reply[1]), int(reply[2]))
        return None

    def renew_call(self, key_id: str, token: str) -> tuple[Any, list[str], list[Arg]]:
        """The renewal of one lease as a script call, to share a pipeline."""
        return (self.scripts.lease_renew, [self.key(key_id)], [token, self.holder.lease_ms])

    @staticmethod
    def renewed(reply: Any) -> int | StoreError:
        """A renewal's reply: the new expiry (ms), 0 (not ours), -1 (expired) or an error."""
        return translate(reply) if isinstance(reply, Exception) else int(reply)

    async def renew(self, key_id: str, token: str) -> int:
        """Extend the lease: its new expiry (ms), 0 (not ours) or -1 (expired)."""
        script, keys, args = self.renew_call(key_id, token)
        with driver_errors():
            return int(await self.scripts.run(self.conn.redis, script, keys, args))

    async def release(self, key_id: str, token: str) -> bool:
        """Give the lease up at once (another node may claim it immediately)."""
        with driver_errors():
            res = await self.scripts.run(self.conn.redis, self.scripts.lease_release,
                                         [self.key(key_id)], [token, "", ""])
        return bool(res)

    async def release_many(self, handoffs: Sequence[Handoff]) -> None:
        """Release several leases in one pipeline, each naming its successor."""
        with driver_errors():
            await self.scripts.run_many(self.conn, [
                (self.scripts.lease_release, [self.key(h.key_id)],
                 [h.token, h.next_node, h.next_address]) for h in handoffs])

    async def read(self, key_ids: Sequence[str]) -> list[LeaseState]:
        """What each lease says (a key of another type, e.g. a pre-lease string
        owner, reads as unset)."""
        out: list[LeaseState] = []
        for i in range(0, len(key_ids), 1000):
            with driver_errors():
                pipe = self.conn.redis.pipeline(transaction=False)
                for key_id in key_ids[i:i + 1000]:
                    pipe.hmget(self.key(key_id), "node", "until", "addr", "next", "next_addr")
                rows = await pipe.execute(raise_on_error=False)
            for row in rows:
                if isinstance(row, Exception):
                    out.append(LeaseState("", 0, "", "", ""))
                    continue
                node, until, address, nxt, nxt_address = (text(v) for v in row)
                out.append(LeaseState(node, integer(until), address, nxt, nxt_address))
        return out

    async def fenced_hset(self, key_id: str, token: str, hash_key: str,
                          fields: Mapping[str, Arg], only_new: bool = False) -> None:
        """Write fields of a hash of the same hash tag while ``token`` holds the
        lease (``only_new``: keep fields already set); ``FencedError`` otherwise."""
        args: list[Arg] = [token, "nx" if only_new else ""]
        for name, value in fields.items():
            args += [name, value]
        with driver_errors():
            ok = await self.scripts.call(self.conn, self.scripts.fenced_hset,
                                         [hash_key, self.key(key_id)], args)
        if not ok:
            raise FencedError(f"{key_id}: this node no longer holds the lease")
