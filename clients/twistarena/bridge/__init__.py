"""The bridge: any program (stdin/stdout) or HTTP endpoint plays a seat, no gRPC stubs.

``ProgramBot`` runs a command (in the sandbox, for programs someone else wrote)
and talks to it one line per message; ``HttpBot`` POSTs the same JSON messages
to an endpoint. Both are ordinary SDK bots: ``play_bridged`` plays one seat with
either, starts a program as soon as the seat is assigned (joining once it is
ready), and tells it the result. docs/bots.md describes the messages.
"""

from __future__ import annotations

from typing import Any

from twistarena.clients.sdk import Agent, MatchResult, NoAnswer

from .messages import FORMS, JSON_FORM, TEXT_FORM, decision_message, over_message, parse_answer
from .program import ProgramBot, ProgramStats
from .web import HttpBot

Bridged = ProgramBot | HttpBot

__all__ = [
    "FORMS",
    "JSON_FORM",
    "TEXT_FORM",
    "Bridged",
    "HttpBot",
    "ProgramBot",
    "ProgramStats",
    "UnstartableProgram",
    "bridged_agent",
    "decision_message",
    "over_message",
    "parse_answer",
    "play_bridged",
    "play_unstartable",
    "run_bridged",
]


def bridged_agent(bot: Bridged, **agent_options: Any) -> Agent:
    """An SDK agent that asks ``bot`` (which learns game and seat from it)."""
    agent = Agent(bot, **agent_options)
    bot.bind(agent)
    return agent


async def run_bridged(agent: Agent, bot: Bridged) -> MatchResult:
    """Run ``agent`` (from ``bridged_agent``) to the end; the program or endpoint hears
    the result, and a program is stopped, whatever happens."""
    result: MatchResult | None = None
    try:
        if isinstance(bot, ProgramBot):
            await bot.prepare()  # its seat is assigned: start it, join when it is ready
        result = await agent.run()
    finally:
        await bot.close(result)
    return result


async def play_bridged(bot: Bridged, **agent_options: Any) -> MatchResult:
    """Play one seat with ``bot`` to the end (see ``Agent`` for the options)."""
    return await run_bridged(bridged_agent(bot, **agent_options), bot)


class UnstartableProgram:
    """The bot of a seat whose program could not be started: it has no answer to
    any decision, so the match's fallback settles each one at once."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.decisions = 0

    def act(self, observation: Any, legal_actions: Any) -> int:
        """No answer: the fallback decides (and counts a missed decision)."""
        self.decisions += 1
        raise NoAnswer(f"the program could not be started: {self.why}")


async def play_unstartable(bot: UnstartableProgram, **agent_options: Any) -> MatchResult:
    """Join the seat of a program that could not be started and play it to the end
    on the match's fallback, so that the match does not wait for it."""
    return await Agent(bot, **agent_options).run()
