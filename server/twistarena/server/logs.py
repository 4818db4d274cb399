"""structlog setup: JSON lines when stdout is not a terminal, readable otherwise."""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_configured = False


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
        logger_factory=structlog.PrintLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )
    _configured = True


def get(name: str = "twistarena") -> Any:
    """The structlog logger ``name`` (one event per line, key=value)."""
    return structlog.get_logger(name)
