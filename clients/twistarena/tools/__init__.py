"""Benchmarks: measured figures, never timed asserts (``twistarena bench ...``)."""
