"""What the program bridge and the HTTP bridge share: the seat they play for, and the
message and time budget of each decision."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from twistarena.engine import Action

from ..sdk import Decision, MatchResult, Rejection
from .messages import JSON_FORM, decision_message, over_message

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
        self._agent: Any = None

    def bind(self, agent: Any) -> None:
        self._agent = agent

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
        text = decision_message(
            self.form, decision_id=decision.decision_id, game=self.game, seat=decision.seat,
            time_left_ms=decision.time_left_ms, observation=observation,
            legal_actions=legal_actions, game_options=self.game_options,
            rejected=f"{rejection.reason}: {rejection.message}" if rejection else "")
        return text, max(0.01, decision.time_left_ms / 1000 - DEADLINE_MARGIN_S)

    def over_text(self, result: MatchResult) -> str:
        self._refresh()
        return over_message(self.form, seat=self.seat, scores=result.scores,
                            places=result.places, reason=result.reason)
