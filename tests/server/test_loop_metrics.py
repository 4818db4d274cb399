"""The event loop's lock-free metrics export what prometheus_client's own would."""

from __future__ import annotations

import random

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from twistarena.storage.metrics import LoopCounter, LoopHistogram


def _samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample but the ``_created`` timestamps, by name and labels."""
    out = {}
    for family in registry.collect():
        for s in family.samples:
            if not s.name.endswith("_created"):
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_a_loop_histogram_exports_the_librarys_samples() -> None:
    buckets = (0.001, 0.01, 0.1, 1)
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    fast = LoopHistogram("x_seconds", "x", buckets, registry=ours)
    slow = Histogram("x_seconds", "x", buckets=buckets, registry=theirs)
    rng = random.Random(3)
    # Values on the bounds belong to their bound's bucket (le).
    for value in [0.001, 0.01, 1.0, 5.0, 0.0] + [rng.expovariate(20) for _ in range(500)]:
        fast.observe(value)
        slow.observe(value)
    assert _samples(ours) == pytest.approx(_samples(theirs))
    bounds = LoopHistogram("b", "b", (1, 2), registry=(alone := CollectorRegistry()))
    for value in (1, 1, 2, 3):
        bounds.observe(value)
    text = generate_latest(alone)
    assert b'b_bucket{le="1.0"} 2.0' in text and b'b_bucket{le="2.0"} 3.0' in text
    assert b'b_bucket{le="+Inf"} 4.0' in text and b"b_sum 7.0" in text


def test_a_loop_counter_exports_the_librarys_samples() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    fast = LoopCounter("y_total", "y", ["how"], registry=ours)
    slow = Counter("y_total", "y", ["how"], registry=theirs)
    for how, amount in [("answer", 1), ("timeout", 1), ("answer", 2.5)]:
        fast.labels(how).inc(amount)
        slow.labels(how).inc(amount)
    assert _samples(ours) == _samples(theirs)
    with pytest.raises(ValueError):
        fast.labels("answer", "extra")


def test_a_loop_histogram_refuses_buckets_out_of_order() -> None:
    with pytest.raises(ValueError):
        LoopHistogram("z", "z", (1, 0.5), registry=CollectorRegistry())
