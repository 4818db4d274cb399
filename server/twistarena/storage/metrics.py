"""Metrics the store records itself; the server's ``metrics`` module re-exports them.

``ERRORS`` is the service's one error counter (by kind); it is declared here,
below the server, so the store can count its own errors in it.

``LoopCounter`` and ``LoopHistogram`` serve the metrics counted on every
decision: prometheus_client's own take a lock per increment or observation
(about 0.7 and 1.5 µs), a cost paid several times per decision. These are
written by the event loop's thread only (the one thread that runs matches and
the store's calls), so plain numbers serve; the scrape reads them from the
metrics thread.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterator, Sequence

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry


class LoopCounter(Collector):
    """A counter (optionally labelled) incremented by the event loop's thread only."""

    def __init__(self, name: str, documentation: str, labelnames: Sequence[str] = (),
                 registry: CollectorRegistry = REGISTRY) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._children: dict[tuple[str, ...], LoopCounter.Child] = {}
        registry.register(self)

    class Child:
        """One series of the counter."""

        __slots__ = ("value",)

        def __init__(self) -> None:
            self.value = 0.0

        def inc(self, amount: float = 1.0) -> None:
            """Add ``amount`` (the event loop's thread only)."""
            self.value += amount

    def labels(self, *values: str) -> LoopCounter.Child:
        """The series of these label values (made on first use)."""
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name} takes labels {self.labelnames}, got {values}")
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = LoopCounter.Child()
        return child

    def collect(self) -> Iterator[CounterMetricFamily]:
        """The series as a scrape sees them."""
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, child in list(self._children.items()):
            family.add_metric(list(values), child.value)
        yield family


class LoopHistogram(Collector):
    """A histogram observed by the event loop's thread only."""

    def __init__(self, name: str, documentation: str, buckets: Sequence[float],
                 registry: CollectorRegistry = REGISTRY) -> None:
        self.name = name
        self.documentation = documentation
        self._bounds = tuple(float(b) for b in buckets)
        if list(self._bounds) != sorted(set(self._bounds)) or math.inf in self._bounds:
            raise ValueError("buckets must be finite and increasing")
        #: Observations per bucket (not cumulative); the last one is +Inf's.
        self._counts = [0] * (len(self._bounds) + 1)
        self._sum = 0.0
        registry.register(self)

    def observe(self, value: float) -> None:
        """Count ``value``: one equal to a bound is in that bound's bucket (le)."""
        self._counts[bisect_left(self._bounds, value)] += 1
        self._sum += value

    def collect(self) -> Iterator[HistogramMetricFamily]:
        """Cumulative buckets, count and sum, as a scrape sees them."""
        counts, total, buckets = list(self._counts), 0, []
        for bound, count in zip((*self._bounds, math.inf), counts, strict=True):
            total += count
            buckets.append((repr(bound) if bound != math.inf else "+Inf", total))
        yield HistogramMetricFamily(self.name, self.documentation, buckets=buckets,
                                    sum_value=self._sum)


APPEND_LATENCY = LoopHistogram(
    "twistarena_redis_append_seconds",
    "From an append being queued to Redis confirming it (batched pipelines)",
    buckets=(0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1),
)
APPEND_BATCH = LoopHistogram(
    "twistarena_redis_append_batch_size",
    "Log appends sent to Redis together in one pipeline",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
ERRORS = Counter("twistarena_errors_total", "Errors by kind", ["kind"])
