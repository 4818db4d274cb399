"""Redis replies as Python values, one behaviour everywhere: a missing value
(None) reads as '' or 0, never as the text "None"."""

from __future__ import annotations

from typing import Any


def text(value: Any) -> str:
    """A reply value as text ('' for None)."""
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def integer(value: Any) -> int:
    """A reply value as an int (0 for None or anything not a number)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
