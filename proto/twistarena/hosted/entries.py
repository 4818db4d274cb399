"""A hosted version's entry command: the program to start and the form of the
messages it reads.

``--entry "python3 bot.py"`` starts ``python3 bot.py`` and talks JSON lines to
it; an entry that starts with ``text:`` (``--entry "text: ./bot"``) gets the
plain-text form instead, as ``twistarena bot --exec ./bot --text`` would
(docs/bots.md has both forms); ``json:`` names the default. The server reads it
to check the program is in the archive, the runner to start it: one reading.
"""

from __future__ import annotations

import shlex

#: The prefix of an entry -> the message form it names ("json" or "text").
FORM_PREFIXES = {"text:": "text", "json:": "json"}


def split_entry(entry: str) -> tuple[str, list[str]]:
    """(message form, argv) of an entry command; ValueError if it does not split
    (an unbalanced quote)."""
    for prefix, form in FORM_PREFIXES.items():
        if entry.startswith(prefix):
            return form, shlex.split(entry[len(prefix):])
    return "json", shlex.split(entry)
