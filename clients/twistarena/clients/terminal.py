"""The command line's rich console: tables keep their full width when piped, and
what strangers wrote is shown as text, never run by the terminal.

Rich lays out for 80 columns when stdout is not a terminal, which cuts table
cells (``(0.30-0.…``, ``heuristi…``). Here a table printed to a pipe or a
file is as wide as its content instead; on a terminal nothing changes.

Agent and seat names, entry and build commands, build logs, a program's
stderr, narration: every string that came from a client goes through
``safe`` (in markup) or ``plain`` (printed with ``markup=False``) before a
console prints it. Control characters (escape sequences that retitle,
clear or link a terminal, carriage returns that overwrite a line, bidi
overrides that reorder it) become visible ``\\xNN`` text, and Rich markup
(``[link=...]``, ``[blink]``) is escaped.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

#: The widest a piped table may grow (a guard against runaway cells).
PIPED_MAX_WIDTH = 1000
#: C0 and C1 controls, DEL, and the bidi embeddings, overrides and isolates.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def plain(text: str, *, lines: bool = False) -> str:
    """A client's text with every control character shown as ``\\xNN`` (newlines
    and tabs kept when ``lines``): printable, never interpreted by a terminal."""

    def visible(match: re.Match[str]) -> str:
        char = match.group()
        if lines and char in "\n\t":
            return char
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _CONTROLS.sub(visible, text)


def safe(text: str, *, lines: bool = False) -> str:
    """A client's text for a console that reads markup: ``plain``, markup escaped."""
    return escape(plain(text, lines=lines))


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
