"""Clock rules: defaults, deadlines and the seeded fallback choice."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from twistarena.v1 import match_pb2 as mpb

DEFAULT_DECISION_MS = 5_000
DEFAULT_FORFEIT_AFTER = 3
DEFAULT_RECONNECT_GRACE_MS = 30_000
#: Bounds a match creator may choose.
MIN_DECISION_MS = 10
MAX_DECISION_MS = 24 * 3600 * 1000
MAX_GRACE_MS = 24 * 3600 * 1000
MAX_JOIN_MS = 7 * 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class Clock:
    """A match's time control in seconds, resolved from its options once."""

    decision_s: float
    forfeit_after: int  # 0: never forfeit
    grace_s: float
    #: How long the seats have to join after creation (``join_timeout_ms``);
    #: 0: the server's waiting timeout applies.
    waiting_s: float = 0.0

    @classmethod
    def from_proto(cls, tc: mpb.TimeControl) -> Clock:
        """The clock of a match from its (resolved) TimeControl."""
        return cls(
            decision_s=tc.decision_ms / 1000.0,
            forfeit_after=tc.forfeit_after if tc.fallback == mpb.FALLBACK_FORFEIT else 0,
            grace_s=tc.reconnect_grace_ms / 1000.0,
            waiting_s=tc.join_timeout_ms / 1000.0,
        )


def resolve(tc: mpb.TimeControl) -> mpb.TimeControl:
    """The clock with every "server default" zero filled in; ValueError when out of range."""
    out = mpb.TimeControl()
    out.CopyFrom(tc)
    if out.decision_ms == 0:
        out.decision_ms = DEFAULT_DECISION_MS
    if not MIN_DECISION_MS <= out.decision_ms <= MAX_DECISION_MS:
        raise ValueError(
            f"time_control.decision_ms must be within {MIN_DECISION_MS}..{MAX_DECISION_MS}")
    if out.fallback == mpb.FALLBACK_UNSPECIFIED:
        out.fallback = mpb.FALLBACK_RANDOM
    if out.fallback not in (mpb.FALLBACK_RANDOM, mpb.FALLBACK_FORFEIT):
        raise ValueError(f"unknown time_control.fallback {out.fallback}")
    if out.forfeit_after == 0:
        out.forfeit_after = DEFAULT_FORFEIT_AFTER
    if out.reconnect_grace_ms == 0:
        out.reconnect_grace_ms = DEFAULT_RECONNECT_GRACE_MS
    if out.reconnect_grace_ms > MAX_GRACE_MS:
        raise ValueError(f"time_control.reconnect_grace_ms must be at most {MAX_GRACE_MS}")
    if out.join_timeout_ms > MAX_JOIN_MS:
        raise ValueError(f"time_control.join_timeout_ms must be at most {MAX_JOIN_MS}")
    return out


def fallback_action(seed: int, decision_id: int, legal_ids: Sequence[int]) -> int:
    """The action the fallback plays: random, but fixed by (match seed, decision id)."""
    digest = hashlib.sha256(b"%d:%d" % (seed, decision_id)).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    return legal_ids[rng.randrange(len(legal_ids))]
