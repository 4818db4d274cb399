"""A token bucket per key, in memory (per node): how often one caller may do a thing."""

from __future__ import annotations

import time


class RateLimiter:
    """A token bucket per key: ``per_minute`` calls, bursts of up to a third of that."""

    def __init__(self, per_minute: int) -> None:
        self.rate = max(1, per_minute) / 60.0
        self.burst = max(1.0, per_minute / 3)
        self.buckets: dict[str, tuple[float, float]] = {}

    def allow(self, key: str) -> bool:
        """Take a token for ``key``; False when its bucket is empty."""
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
