"""What this node acknowledged, to notice a store that comes back with less.

A store can lose writes it had confirmed: an OS crash under ``appendfsync
everysec`` loses up to about a second, a failover to a replica that missed the
latest writes loses what it missed. The node remembers, per match it ran, the
log length it acknowledged and the end it announced; a runner that finds less
in the store (an append refused for a shorter log, a match opened from a
shorter log, a seat or spectator resuming past the stored events) applies the
``LossPolicy``: never in silence.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from dataclasses import dataclass, field

from twistarena.v1 import play_pb2 as ppb


class LossPolicy(enum.Enum):
    """What a runner does when the store lost actions it had acknowledged."""

    #: Go back to what the store kept and tell every seat and spectator (Rewound).
    REWIND = "rewind"
    #: End the match with END_REASON_VOIDED.
    VOID = "void"


@dataclass(slots=True)
class Acknowledged:
    """What this node told the seats of one match: its log length, its end, and
    its latest rewind (with the seats already told of it)."""

    actions: int
    result: bytes = b""
    status: int = 0
    rewound: ppb.Rewound | None = None
    told: set[int] = field(default_factory=set)


class AckMemory:
    """The latest acknowledged log length (and announced end) of the matches this
    node ran. Bounded: the oldest entries go first (a loss shows within seconds
    of the fault)."""

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self._items: OrderedDict[str, Acknowledged] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, match_id: str) -> Acknowledged | None:
        """What this node acknowledged of ``match_id``, if it remembers the match."""
        return self._items.get(match_id)

    def note(self, match_id: str, actions: int) -> Acknowledged:
        """This node acknowledged the match's log up to ``actions`` entries."""
        items = self._items
        item = items.get(match_id)
        if item is None:
            item = items[match_id] = Acknowledged(actions)
            while len(items) > self.limit:
                items.popitem(last=False)
        else:
            item.actions = actions
            items.move_to_end(match_id)
        return item
