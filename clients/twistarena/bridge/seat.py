"""What the program bridge and the HTTP bridge share: the seat they play for, the
message and time budget of each decision, and how an answer is judged.

An answer that is an action id but not a legal one is sent to the server as it
is: the server refuses it with the rule it breaks, and the bot gets the same
decision again with that refusal in ``rejected`` and the time left until the
original deadline. A second illegal answer to the same decision, or an answer
that is no action id at all, is a failed decision (the match's fallback
settles it).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from twistarena.clients.sdk import Decision, MatchResult, Rejection
from twistarena.engine import Action

from .messages import JSON_FORM, decision_message, over_message, parse_id

#: Answers are expected this long before the server's deadline (network, scheduling).
DEADLINE_MARGIN_S = 0.05


class BridgedSeat:
    """Base of the bridges: ``bind(agent)`` before the agent runs, so that messages
    can name the game and the seat (known once the server has seated the agent)."""

    form = JSON_FORM

    def __init__(self) -> None:
        self.game = ""
        self.seat = -1
        #: The match's game options (every rule, defaults included), from the agent.
        self.game_options: dict[str, Any] = {}
        #: Decisions the bot failed (settled by the match's fallback).
        self.failures = 0
        #: Answers the bot gave that were action ids (legal or not).
        self.answers = 0
        self._agent: Any = None
        #: {decision id: its deadline in monotonic seconds} of the decision asked last: a
        #: decision sent again after a refusal keeps its first deadline.
        self._deadlines: dict[int, float] = {}

    def bind(self, agent: Any) -> None:
        self._agent = agent

    async def unusable(self) -> str:
        """Why this bot cannot play at all (a program that cannot be started, an endpoint
        that does not answer), asked before a match: "" when nothing is known wrong."""
        return ""

    def answered_nothing(self) -> bool:
        """The bot failed decisions and answered none: it never played (the fallback did)."""
        return self.failures > 0 and self.answers == 0

    def _refresh(self) -> None:
        agent = self._agent
        if agent is not None:
            self.game = agent.game_id
            self.seat = agent.seat if agent.seat is not None else -1
            self.game_options = dict(agent.game_options)

    def decision_text(self, decision: Decision, observation: Mapping[str, Any],
                      legal_actions: Sequence[Action],
                      rejection: Rejection | None) -> tuple[str, float]:
        """(the decision message, seconds the bot has to answer it)."""
        self._refresh()
        now = time.monotonic()
        deadline = self._deadlines.get(decision.decision_id)
        if deadline is None or rejection is None:
            deadline = now + decision.time_left_ms / 1000
            self._deadlines = {decision.decision_id: deadline}
        time_left_ms = max(0, round((deadline - now) * 1000))
        text = decision_message(
            self.form, decision_id=decision.decision_id, game=self.game, seat=decision.seat,
            time_left_ms=time_left_ms, observation=observation,
            legal_actions=legal_actions, game_options=self.game_options,
            rejected=f"{rejection.reason}: {rejection.message}" if rejection else "")
        return text, max(0.01, time_left_ms / 1000 - DEADLINE_MARGIN_S)

    def judge(self, answer: str, legal_actions: Sequence[Action],
              rejection: Rejection | None) -> tuple[int | None, str]:
        """(the id to send, "") for an answer, or (None, why it is a failed decision).
        An illegal id is sent once, so that the bot hears the server's refusal (see the
        module docstring)."""
        action = parse_id(answer)
        shown = answer[:120].rstrip()
        if action is None:
            return None, f"its answer {shown!r} is not a legal action id"
        self.answers += 1
        if rejection is not None and action not in {a.id for a in legal_actions}:
            return None, f"its answer {shown!r} is not a legal action id, again after a refusal"
        return action, ""

    def over_text(self, result: MatchResult) -> str:
        self._refresh()
        return over_message(self.form, seat=self.seat, scores=result.scores,
                            places=result.places, reason=result.reason)
