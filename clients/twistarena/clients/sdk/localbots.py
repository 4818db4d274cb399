"""Run the sample bots as agents: every seat of a match in one process.

Hosts (``twistarena match create --bots``, the demo, tests and the service
benchmark) use this to fill the seats of a match with real network agents.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

import structlog
from twistarena.bots import STRATEGIES, Bot, make_bot
from twistarena.engine import Action
from twistarena.v1 import match_pb2

from .agent import Agent
from .convert import MatchEvent, MatchResult


class StrategyBot:
    """A sample bot by strategy name, built once the game and its options are known
    (at Joined). Search strategies sample states from the observations they are
    sent (``engine.sample_state``), so they play at full strength here too."""

    def __init__(self, strategy: str, seed: int | None,
                 game: Callable[[], tuple[str, Mapping[str, Any]]]) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
        self.strategy = strategy
        self.seed = seed
        self._game = game
        self._bot: Bot | None = None

    def act(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        if self._bot is None:
            game_id, options = self._game()
            self._bot = make_bot(self.strategy, game_id, self.seed, options)
        return self._bot(observation, legal_actions)


def strategy_agent(strategy: str, seed: int | None, **agent_options: Any) -> Agent:
    """An Agent playing a sample strategy; the game comes from the server's Joined."""
    holder: list[Agent] = []
    agent = Agent(StrategyBot(strategy, seed, lambda: (holder[0].game_id,
                                                       holder[0].game_options)),
                  **agent_options)
    holder.append(agent)
    return agent


def seat_agents(server: str | Sequence[str], created: match_pb2.CreateMatchResponse,
                strategies: Sequence[str], seed: int | None = None,
                on_event: Callable[[int, MatchEvent], Any] | None = None,
                **agent_options: Any) -> list[Agent]:
    """One agent per remote seat of a new match, strategies cycled over the seats."""
    if not strategies:
        raise ValueError("at least one strategy is needed")
    match_id = created.match.match_id
    agents = []
    for token in sorted(created.seat_tokens, key=lambda t: t.seat):
        strategy = strategies[token.seat % len(strategies)]
        bot_seed = None if seed is None else seed * 101 + token.seat
        callback = None if on_event is None else _seat_callback(on_event, token.seat)
        agents.append(strategy_agent(strategy, bot_seed, server=server, match_id=match_id,
                                     token=token.token, on_event=callback,
                                     name=f"{match_id}/seat{token.seat}", **agent_options))
    return agents


def _seat_callback(on_event: Callable[[int, MatchEvent], Any],
                   seat: int) -> Callable[[MatchEvent], Any]:
    def callback(event: MatchEvent) -> Any:
        return on_event(seat, event)

    return callback


async def run_agents(agents: Sequence[Agent]) -> MatchResult:
    """Run the agents of one match together; the first failure cancels the rest."""
    results = await asyncio.gather(*(a.run() for a in agents))
    return results[0]


#: The log event of a line a bridged bot wrote to its stderr: logged at info, and shown
#: without ``-v`` too (the author's own output, not the command's chatter).
BOT_OUTPUT = "bot output (stderr)"


def _quiet_unless_bot_output(_logger: Any, method: str,
                             event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """Without ``-v``: warnings and errors, and what bots wrote to their stderr."""
    if method in ("debug", "info") and event.get("event") != BOT_OUTPUT:
        raise structlog.DropEvent
    return event


def configure_logging(verbose: bool = False, *, lines: str | None = None,
                      level: int = logging.INFO) -> None:
    """The one logging set-up of the command line, the tools and local play.

    By default readable lines on stderr, so that stdout stays for results (and
    ``--json``); without ``verbose`` only warnings, errors and what bots wrote to
    their stderr. ``lines`` ("keyvalue" or "json") is for a long-running process
    whose output is collected (``twistarena runner``): one event per line on
    stdout, ISO UTC timestamps, each line in one write, so that nothing written to
    the same pipe can land between an event and its newline. ``level`` drops the
    events below it (a command whose own report would drown in them)."""
    if lines is not None:
        renderer: Any = (structlog.processors.JSONRenderer() if lines == "json" else
                         structlog.processors.KeyValueRenderer(
                             key_order=["timestamp", "level", "event"]))
        structlog.configure(
            processors=[structlog.processors.add_log_level,
                        structlog.processors.TimeStamper(fmt="iso", utc=True), renderer],
            wrapper_class=structlog.make_filtering_bound_logger(level),
            logger_factory=structlog.WriteLoggerFactory(sys.stdout),
            cache_logger_on_first_use=False)
        return
    quiet: list[structlog.typing.Processor] = [] if verbose else [_quiet_unless_bot_output]
    structlog.configure(
        processors=[
            *quiet,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="%H:%M:%S"),
            structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )
