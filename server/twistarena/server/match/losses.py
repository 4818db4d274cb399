"""What this node acknowledged, to notice a store that comes back with less.

A store can lose writes it had confirmed: an OS crash under ``appendfsync
everysec`` loses up to about a second, a failover to a replica that missed the
latest writes loses what it missed. The node remembers, per match it ran, the
log length it acknowledged and the end it announced; a referee that finds less
in the store (an append or an end refused for a shorter log, a match opened
from a shorter log, the check of every remembered match after the store
restarted) applies the ``LossPolicy``: never in silence. Only this memory
shows a loss: no number a client sends (a resume seq) is taken for one.
"""

from __future__ import annotations

import enum
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from twistarena.v1 import play_pb2 as ppb


class LossPolicy(enum.Enum):
    """What a referee does when the store lost actions it had acknowledged."""

    #: Go back to what the store kept and tell every seat and spectator (Rewound).
    REWIND = "rewind"
    #: End the match with END_REASON_VOIDED.
    VOID = "void"


#: How long the end of a match that ended here is remembered: a store that lost
#: it (a crash within its fsync window, a failover to a replica that missed it)
#: is back well within this, and a node that remembered every end for good
#: would grow with every match it ever ran.
ENDED_KEPT_S = 3600.0


#: The longest reason an owed Rewound keeps: a seat away for several rewinds is
#: told of them in one, their reasons joined, and what is stored with the match
#: stays bounded however many there were.
REASON_CAP = 400


def capped_reason(reason: str) -> str:
    """``reason`` cut to ``REASON_CAP`` characters (an ellipsis says so)."""
    return reason if len(reason) <= REASON_CAP else reason[:REASON_CAP - 1] + "\u2026"


def owed_after(owed: Mapping[int, ppb.Rewound], message: ppb.Rewound,
               away: Iterable[int]) -> dict[int, ppb.Rewound]:
    """The Rewound each seat is owed after the rewind ``message``: the seats
    ``away`` (not told now), each back to the earliest rewind it missed; the
    others are told now and owe nothing.

    A seat away for several rewinds is owed one going back to the earliest of
    them (the oldest seq wins, every loss counted): told only of the latest, it
    would keep as accepted an answer that an earlier one took back."""
    out: dict[int, ppb.Rewound] = {}
    for seat in away:
        earlier = owed.get(seat)
        out[seat] = message if earlier is None else _earliest(earlier, message)
    return out


def _earliest(earlier: ppb.Rewound, later: ppb.Rewound) -> ppb.Rewound:
    """One Rewound for a seat that missed ``earlier`` and then ``later``: back to
    the shorter of the two logs, every action lost in either counted."""
    actions = min(earlier.actions, later.actions)
    acknowledged = max(earlier.actions + earlier.lost_actions, later.actions + later.lost_actions)
    return ppb.Rewound(to_seq=min(earlier.to_seq, later.to_seq), actions=actions,
                       lost_actions=acknowledged - actions,
                       reason=capped_reason(f"{earlier.reason}; then {later.reason}"))


@dataclass(slots=True)
class Acknowledged:
    """What this node told the seats of one match: its log length, and its end
    (and when it ended, by the monotonic clock)."""

    actions: int
    result: bytes = b""
    status: int = 0
    ended_at: float = 0.0


class AckMemory:
    """The latest acknowledged log length (and announced end) of the matches this
    node ran. Bounded: a match's end is forgotten ``ended_kept_s`` after it, and
    past ``limit`` matches the least recently noted go first (a loss shows within
    seconds of the fault)."""

    def __init__(self, limit: int = 50_000, ended_kept_s: float = ENDED_KEPT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.ended_kept_s = ended_kept_s
        self._clock = clock
        self._items: OrderedDict[str, Acknowledged] = OrderedDict()
        #: (when, match id) of every end noted, oldest first.
        self._ended: deque[tuple[float, str]] = deque()

    def __len__(self) -> int:
        return len(self._items)

    def ids(self) -> list[str]:
        """Every match this node remembers acknowledging (ended ones included)."""
        return list(self._items)

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

    def note_end(self, match_id: str, actions: int, result: bytes, status: int) -> None:
        """This node announced the match's end (stored first); ends older than
        ``ended_kept_s`` are forgotten now."""
        now = self._clock()
        item = self.note(match_id, actions)
        item.result, item.status, item.ended_at = result, status, now
        ended = self._ended
        ended.append((now, match_id))
        while ended and now - ended[0][0] > self.ended_kept_s:
            when, old = ended.popleft()
            gone = self._items.get(old)
            if gone is not None and gone.ended_at == when:  # not ended again since
                del self._items[old]
