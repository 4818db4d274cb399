"""What the store confirms before the server acknowledges anything.

The sync commands ride on the same connection right after the writes they
cover (a pipeline), so their replies speak for those writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import NotDurableError


@dataclass(frozen=True, slots=True)
class Durability:
    """What the server waits for before it acknowledges anything.

    ``fsync_each``: every acknowledged action is in the store's AOF on disk
    (``--durability always``: the embedded Valkey runs ``appendfsync always``;
    an external store is asked ``WAITAOF 1 0`` after each batch). Without it
    (``everysec``) an OS crash of the store's machine can lose about the last
    second of actions. The end of a match always waits for the AOF (when the
    store keeps one). ``replicas``: every acknowledgement also waits (``WAIT``)
    until this many replicas have the write, at most ``wait_ms``."""

    fsync_each: bool = False
    replicas: int = 0
    wait_ms: int = 1000

    def sync_commands(self, aof: bool, end: bool) -> list[tuple[Any, ...]]:
        """Commands that make the writes sent before them on the same connection
        durable as asked (``aof``: the store keeps an append-only file; ``end``:
        the end of a match, which always waits for the AOF). Their replies: see
        ``check``."""
        out: list[tuple[Any, ...]] = []
        if aof and (end or self.fsync_each):
            out.append(("WAITAOF", 1, 0, self.wait_ms))
        if self.replicas:
            out.append(("WAIT", self.replicas, self.wait_ms))
        return out

    def check(self, replies: Sequence[Any]) -> None:
        """Raise NotDurableError unless every sync command got what it asked for."""
        for reply in replies:
            if isinstance(reply, Exception):
                raise NotDurableError(f"durability not confirmed: {reply}")
            if isinstance(reply, list):  # WAITAOF: [local fsyncs, replicas]
                if int(reply[0]) < 1:
                    raise NotDurableError("the store did not fsync its AOF in time")
            elif int(reply) < self.replicas:
                raise NotDurableError(
                    f"{int(reply)} of {self.replicas} replicas confirmed in time")
