"""structlog setup: JSON lines when stdout is not a terminal, readable otherwise.

Every line this process puts on stdout goes through ``write_line``: one
``write`` of the whole line under one lock. ``serve`` passes on its runners' and
workers' lines from threads of its own while its event loop logs; ``print``
writes a message and its newline apart, so another thread's line could land
between the two and two records would share a line that no reader can parse.
"""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any, TextIO

import structlog

_configured = False
#: One lock for stdout and stderr alike: ``serve``'s two streams often go to one file.
_lock = threading.Lock()


def write_line(line: str, out: TextIO | None = None) -> None:
    """Write ``line`` (a newline is added when missing) to ``out`` (stdout) whole,
    and flush it, so that lines written from several threads never mix."""
    if not line.endswith("\n"):
        line += "\n"
    stream = sys.stdout if out is None else out
    with _lock:
        stream.write(line)
        stream.flush()


class LineLogger:
    """A structlog logger that writes each event to the current stdout with
    ``write_line``."""

    def msg(self, message: str) -> None:
        """Write one rendered event (every level ends here)."""
        write_line(message)

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def line_logger_factory(*_args: Any) -> LineLogger:
    """structlog's ``logger_factory``: events to the current stdout, whole lines."""
    return LineLogger()


def configure(json: bool | None = None, level: int = logging.INFO) -> None:
    """One event per line on stdout; ``json=None`` picks by whether stdout is a TTY."""
    global _configured
    if json is None:
        json = not sys.stdout.isatty()
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if json
        else structlog.dev.ConsoleRenderer(colors=sys.stdout.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=line_logger_factory,
        cache_logger_on_first_use=True,
    )
    _configured = True


def get(name: str = "twistarena") -> Any:
    """The structlog logger ``name`` (one event per line, key=value)."""
    return structlog.get_logger(name)
