"""The agent SDK: write ``act(observation, legal_actions) -> action id``, the SDK plays.

A complete bot (``python my_bot.py HOST:PORT MATCH_ID TOKEN``)::

    import sys

    from twistarena.clients.sdk import run_agent

    def act(observation, legal_actions):
        # observation: this seat's view (the engine's dict);
        # legal_actions: twistarena.engine.Action(id, label, payload) values.
        plays = [a for a in legal_actions if a.payload.get("kind") == "play"]
        return (plays or legal_actions)[0].id

    server, match_id, token = sys.argv[1:4]
    result = run_agent(act, server=server, match_id=match_id, token=token)
    print("scores", result.scores, "places", result.places)

``act`` may also be ``async``, or a method of an object (then an optional
``on_rejected(rejection)`` method hears about refused answers). Inside an event
loop use ``await play(...)``; for the records (events seen, acknowledged
decisions, reconnects) keep an ``Agent`` and ``await agent.run()``. A trained
policy ``(tensor, mask) -> index`` (docs/rl.md) plays as
``policy_agent(load_policy("module:callable"), server=..., match_id=..., token=...)``.
``server`` may list several addresses, comma-separated: the agent moves on to
the next one when a server fails, with exponential backoff and jitter, and
resumes where it stopped. The rest (TLS, backoff, events, threading, ...) are
the fields of ``AgentOptions``, given as keywords or as ``options=``.
"""

from .agent import Agent, AgentOptions, NoAnswer, Tracer, play, run_agent
from .client import MatchClient
from .connection import AgentError, Backoff, parse_servers
from .convert import Decision, MatchEvent, MatchResult, Rejection
from .kept import KeptStreams
from .matchmaking import (
    ArenaMatch,
    TournamentEnded,
    get_agent,
    join_arena,
    play_arena,
    practice,
    queue,
    queue_and_play,
    register_agent,
    run_queue_and_play,
)
from .policies import load_policy, policy_agent
from .tournaments import TournamentClient

__all__ = [
    "Agent",
    "AgentError",
    "AgentOptions",
    "ArenaMatch",
    "Backoff",
    "Decision",
    "KeptStreams",
    "MatchClient",
    "MatchEvent",
    "MatchResult",
    "NoAnswer",
    "Rejection",
    "TournamentClient",
    "TournamentEnded",
    "Tracer",
    "get_agent",
    "join_arena",
    "load_policy",
    "parse_servers",
    "play",
    "play_arena",
    "policy_agent",
    "practice",
    "queue",
    "queue_and_play",
    "register_agent",
    "run_agent",
    "run_queue_and_play",
]
