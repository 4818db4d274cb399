"""Metrics the store records itself; the server's ``metrics`` module re-exports them.

``ERRORS`` is the service's one error counter (by kind); it is declared here,
below the server, so the store can count its own errors in it.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

APPEND_LATENCY = Histogram(
    "twistarena_redis_append_seconds",
    "From an append being queued to Redis confirming it (batched pipelines)",
    buckets=(0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1),
)
APPEND_BATCH = Histogram(
    "twistarena_redis_append_batch_size",
    "Log appends sent to Redis together in one pipeline",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
ERRORS = Counter("twistarena_errors_total", "Errors by kind", ["kind"])
