"""Every Lua script of the store: one ``.lua`` file each, registered once; a check
several scripts make is one fragment of ``lua/lib/`` they include.

A script's SHA1 is known from its text, so calls name it by ``EVALSHA`` from
the start; ``Scripts.load`` sends every script to the server at connect time,
and ``Scripts.reload`` is the one way back after a ``NOSCRIPT`` reply (a
restarted or failed-over server forgot them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError

from .resp import Arg

if TYPE_CHECKING:
    from .connection import Connections

#: A script's line that stands for a shared fragment of ``lua/lib/`` (``Script.read``).
INCLUDE = "--#include "


@dataclass(frozen=True, slots=True)
class Script:
    """One Lua script: its file name, text and SHA1."""

    name: str
    source: str
    sha: str

    @classmethod
    def read(cls, name: str) -> Script:
        """The script ``name`` from the package's ``lua/`` folder, with its SHA1 for EVALSHA.
        A line ``--#include NAME`` stands for ``lua/lib/NAME.lua``: a check several
        scripts make (the lease fence) is written once."""
        folder = resources.files(__package__).joinpath("lua")
        lines = folder.joinpath(f"{name}.lua").read_text().splitlines(keepends=True)
        source = "".join(
            folder.joinpath("lib", f"{line.removeprefix(INCLUDE).strip()}.lua").read_text()
            if line.startswith(INCLUDE) else line for line in lines)
        return cls(name, source, hashlib.sha1(source.encode()).hexdigest())

    def command(self, keys: Sequence[str], args: Sequence[Arg]) -> tuple[Arg, ...]:
        """The EVALSHA command, for a pipeline."""
        return ("EVALSHA", self.sha, len(keys), *keys, *args)


def is_noscript(reply: Any) -> bool:
    """Whether a reply (or an exception) says the server does not know the script."""
    return isinstance(reply, NoScriptError) or (
        isinstance(reply, Exception) and str(reply).startswith("NOSCRIPT"))


class Scripts:
    """The store's scripts as typed attributes (see each ``.lua`` file for its contract)."""

    def __init__(self) -> None:
        self.append = Script.read("append")
        self.lease_claim = Script.read("lease_claim")
        self.lease_renew = Script.read("lease_renew")
        self.lease_release = Script.read("lease_release")
        self.fenced_hset = Script.read("fenced_hset")
        self.finish = Script.read("finish")
        self.heartbeat = Script.read("heartbeat")
        self.queue_enqueue = Script.read("queue_enqueue")
        self.queue_pop = Script.read("queue_pop")
        self.runner_take = Script.read("runner_take")
        self.runner_renew = Script.read("runner_renew")
        self.runner_requeue = Script.read("runner_requeue")
        self.runner_expire = Script.read("runner_expire")
        self.runner_done = Script.read("runner_done")
        self.runner_handed = Script.read("runner_handed")
        self.runner_add = Script.read("runner_add")
        self.hset_existing = Script.read("hset_existing")
        self.version_put = Script.read("version_put")
        self.version_delete = Script.read("version_delete")
        self.version_activate = Script.read("version_activate")
        self.archive_put = Script.read("archive_put")
        self.archive_release = Script.read("archive_release")
        self.version_stats = Script.read("version_stats")

    def all(self) -> list[Script]:
        """Every script, to load them all at once."""
        return [v for v in vars(self).values() if isinstance(v, Script)]

    async def load(self, client: aioredis.Redis) -> None:
        """Send every script to the server (at connect time, and after NOSCRIPT)."""
        for script in self.all():
            await client.script_load(script.source)

    async def reload(self, client: aioredis.Redis) -> None:
        """The server forgot the scripts (restart, failover): send them again."""
        await self.load(client)

    async def run(self, client: aioredis.Redis, script: Script, keys: Sequence[str],
                  args: Sequence[Arg]) -> Any:
        """EVALSHA one script, reloading the scripts once if the server lost them."""
        try:
            return await client.evalsha(script.sha, len(keys), *keys, *args)
        except NoScriptError:
            await self.reload(client)
            return await client.evalsha(script.sha, len(keys), *keys, *args)

    async def call(self, conn: Connections, script: Script, keys: Sequence[str],
                   args: Sequence[Arg]) -> Any:
        """``run`` on ``conn.batch()`` (``run_many`` of one call): the lean connection
        when there is one, for the scripts a match runs once or a few times; an
        error reply is raised."""
        [reply] = await self.run_many(conn, [(script, keys, args)])
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def run_many(self, conn: Connections,
                       calls: Sequence[tuple[Script, Sequence[str], Sequence[Arg]]],
                       ) -> list[Any]:
        """Many EVALSHAs in one pipeline (``conn.batch()``: on the lean connection
        when there is one); each reply, or the exception of a failed call. Calls
        the server did not know the script of are retried once after a reload."""
        replies = await self._pipeline(conn, calls)
        lost = [i for i, reply in enumerate(replies) if is_noscript(reply)]
        if lost:
            await self.reload(conn.redis)
            again = await self._pipeline(conn, [calls[i] for i in lost])
            for i, reply in zip(lost, again, strict=True):
                replies[i] = reply
        return replies

    @staticmethod
    async def _pipeline(conn: Connections,
                        calls: Sequence[tuple[Script, Sequence[str], Sequence[Arg]]],
                        ) -> list[Any]:
        if not calls:
            return []
        pipe = conn.batch()
        for script, keys, args in calls:
            # execute_command: cluster pipelines refuse the evalsha() helper.
            pipe.execute_command(*script.command(keys, args))
        return list(await pipe.execute(raise_on_error=False))
