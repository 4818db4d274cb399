"""An answer that is an action id but not a legal one reaches the server, and the
bridged program reads the refusal, with the rule it breaks, in the same decision
sent again (docs/bots.md, ``rejected``); it answers again before the deadline and
the fallback plays nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from twistarena.bridge import TEXT_FORM, ProgramBot, play_bridged
from twistarena.clients.sdk import MatchClient

from tests.clients.helpers import run

HERE = Path(__file__).resolve().parent


def _blocks(transcript: str) -> list[list[str]]:
    """The decision blocks the program read, each a list of its lines."""
    blocks: list[list[str]] = []
    for line in transcript.splitlines():
        if line.startswith("decision "):
            blocks.append([])
        if blocks:
            blocks[-1].append(line)
    return blocks


def test_a_refused_answer_is_delivered_and_answered_again(server: Any, tmp_path: Path) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match("twisted", 2, seed=8, decision_ms=4000,
                                            house_bots=["", "random"])
        transcript = tmp_path / "transcript"
        bot = ProgramBot([sys.executable, str(HERE / "refused_bot.py"), str(transcript)],
                         form=TEXT_FORM)
        result = await play_bridged(bot, server=server.target,
                                    match_id=created.match.match_id,
                                    token=created.seat_tokens[0].token, no_events=True)
        assert result.reason == "COMPLETED"
        first, again, *rest = _blocks(transcript.read_text())
        assert rest, "the match went on after the refusal"
        # The same decision, with the server's refusal as its second line and no more
        # time than the first time.
        head, head_again = (dict(w.split("=") for w in b[0].split(" ")[1:])
                            for b in (first, again))
        assert head_again["id"] == head["id"]
        assert int(head_again["time_left_ms"]) <= int(head["time_left_ms"])
        assert again[1].startswith("rejected ILLEGAL_ACTION:_")
        assert " " not in again[1].removeprefix("rejected ")
        assert not any(line.startswith("rejected") for b in rest for line in b)
        assert again[2:] == first[1:]
        # kind first in every action line (docs/bots.md: "action 43 kind=extend card=43").
        actions = [line.split(" ") for b in (first, *rest) for line in b
                   if line.startswith("action ")]
        assert actions and all(words[2].startswith("kind=") for words in actions)
        assert bot.failures == 0 and bot.restarts == 0
        match = await client.get_match(created.match.match_id)
        assert match.seats[0].timeouts == 0

    run(scenario(), 120)
