"""The runner: a process that plays hosted agents' seats (``twistarena runner``).

``Runner`` holds one Connect session with the server (runners.proto) and plays
each seat it is handed with the version's program (``seatstats``); versions
are fetched once and kept by content hash (``cache``).
"""

from .cache import CacheError, VersionCache
from .runner import Runner, RunnerOptions

__all__ = ["CacheError", "Runner", "RunnerOptions", "VersionCache"]
