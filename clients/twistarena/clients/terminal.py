"""The command line's rich console: tables keep their full width when piped.

Rich lays out for 80 columns when stdout is not a terminal, which cuts table
cells (``(0.30-0.…``, ``heuristi…``). Here a table printed to a pipe or a
file is as wide as its content instead; on a terminal nothing changes.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

#: The widest a piped table may grow (a guard against runaway cells).
PIPED_MAX_WIDTH = 1000


class FitConsole(Console):
    """A Console that sizes tables to their content when output is not a terminal."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        tables = [o for o in objects if isinstance(o, Table)]
        if self.is_terminal or not tables:
            super().print(*objects, **kwargs)
            return
        options = self.options.update(max_width=PIPED_MAX_WIDTH)
        wanted = max(Measurement.get(self, options, t).maximum for t in tables)
        width = self.width
        self.width = max(width, wanted)
        try:
            super().print(*objects, **kwargs)
        finally:
            self.width = width


def make_console(**kwargs: Any) -> Console:
    """The console every command prints with."""
    return FitConsole(**kwargs)
