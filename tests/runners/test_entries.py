"""An entry command names its program and, with a prefix, the form of its messages."""

from __future__ import annotations

import pytest
from twistarena.hosted.entries import split_entry


@pytest.mark.parametrize(("entry", "form", "argv"), [
    ("python3 bot.py heuristic", "json", ["python3", "bot.py", "heuristic"]),
    ("text: ./bot", "text", ["./bot"]),
    ("text:java -cp build Bot", "text", ["java", "-cp", "build", "Bot"]),
    ("json: node 'my bot.js'", "json", ["node", "my bot.js"]),
    ("./text: x", "json", ["./text:", "x"]),
    ("text:", "text", []),
])
def test_an_entry_is_split_into_its_form_and_argv(entry: str, form: str,
                                                  argv: list[str]) -> None:
    assert split_entry(entry) == (form, argv)


def test_an_unbalanced_quote_is_refused() -> None:
    with pytest.raises(ValueError):
        split_entry("text: ./bot 'unclosed")
