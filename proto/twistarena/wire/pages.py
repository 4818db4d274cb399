"""Page tokens of the List calls: what a ``next_page_token`` holds, read back once.

Two kinds: an offset into a listing (``ListAgents``, ``GetLeaderboard``, the
arena filters of ``ListMatches``), which clients may also build to jump to a
page, and a cursor ``<created ms>:<match id>`` (``ListMatches``), which stays
put while new matches arrive. A token that is neither is refused with one
status message, ``BAD_PAGE_TOKEN``, whatever the call.
"""

from __future__ import annotations

#: The status message (INVALID_ARGUMENT) of a page_token that is no token.
BAD_PAGE_TOKEN = "page_token must be empty or a next_page_token of an earlier response"
#: Digits of the longest number a token holds: offsets and times fit a 64-bit integer.
MAX_DIGITS = 18


def _number(text: str) -> int | None:
    """A non-negative number written in ASCII digits, None for anything else (signs,
    spaces, underscores and non-ASCII digits that ``int`` would take included)."""
    if not text or len(text) > MAX_DIGITS or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def offset_token(offset: int) -> str:
    """The token of the page that starts ``offset`` rows in ("" for the first)."""
    return str(offset) if offset else ""


def parse_offset(token: str) -> int | None:
    """The offset an ``offset_token`` holds (0 for ""); None for a token that is none."""
    return 0 if not token else _number(token)


def cursor_token(created_ms: int, match_id: str) -> str:
    """The token of the page after the match ``match_id`` created at ``created_ms``."""
    return f"{created_ms}:{match_id}"


def parse_cursor(token: str) -> tuple[int, str] | None:
    """``(created ms, match id)`` a ``cursor_token`` holds; None for a token that is none."""
    created, separator, match_id = token.partition(":")
    number = _number(created)
    return None if number is None or not separator else (number, match_id)
