"""A bot that is an HTTP endpoint, Battlesnake style.

Each decision is POSTed as the JSON decision message (docs/bots.md) to
``URL/move``; the response body is the action id (``16`` or ``{"id": 16}``).
At the end, the result goes to ``URL/end`` (its response is ignored). An
endpoint that fails, times out or answers garbage gets no answer sent: the
match's fallback settles the decision and a log line says why. An id that is
not legal goes to the server, and the endpoint gets the decision again with
the refusal in ``rejected`` (``seat.py``).
"""

from __future__ import annotations

import asyncio
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

import structlog
from twistarena.clients.sdk import Decision, MatchResult, NoAnswer, Rejection
from twistarena.engine import Action

from .seat import BridgedSeat

log = structlog.get_logger("twistarena.bridge")

#: Longest response body read.
BODY_LIMIT = 1 << 20
#: How long the check before a match waits for the endpoint to take a connection.
CONNECT_TIMEOUT_S = 3.0


def _connect(host: str, port: int, timeout: float) -> None:
    socket.create_connection((host, port), timeout).close()


def _post(url: str, body: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, data=body.encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data: bytes = response.read(BODY_LIMIT)
        return data


class HttpBot(BridgedSeat):
    """Plays a seat by POSTing decisions to ``url`` (see the module docstring)."""

    def __init__(self, url: str) -> None:
        super().__init__()
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.url = url.rstrip("/")

    async def act(self, observation: Mapping[str, Any], legal_actions: Sequence[Action], *,
                  decision: Decision, rejection: Rejection | None = None) -> int:
        body, timeout = self.decision_text(decision, observation, legal_actions, rejection)
        try:
            reply = await asyncio.wait_for(
                asyncio.to_thread(_post, f"{self.url}/move", body, timeout), timeout + 0.01)
        except (TimeoutError, OSError, urllib.error.URLError) as error:
            self._fail(decision, f"POST {self.url}/move failed: {error!r}")
        action, why = self.judge(reply.decode(errors="replace"), legal_actions, rejection)
        if action is None:
            self._fail(decision, why)
        assert action is not None
        return action

    async def unusable(self) -> str:
        """An endpoint that takes no connection does not answer."""
        address = urllib.parse.urlsplit(self.url)
        port = address.port or (443 if address.scheme == "https" else 80)
        try:
            await asyncio.to_thread(_connect, address.hostname or "", port, CONNECT_TIMEOUT_S)
        except OSError as error:
            return f"the endpoint {self.url} does not answer: {error}"
        return ""

    async def close(self, result: MatchResult | None) -> None:
        """POST the result to ``URL/end``; failures are logged and ignored."""
        if result is None:
            return
        try:
            await asyncio.to_thread(_post, f"{self.url}/end", self.over_text(result), 5.0)
        except (OSError, urllib.error.URLError) as error:
            log.info("POST /end failed", url=self.url, error=repr(error))

    def _fail(self, decision: Decision, why: str) -> None:
        self.failures += 1
        log.warning("bot endpoint failed a decision; the match's fallback decides it",
                    url=self.url, decision=decision.decision_id, why=why)
        raise NoAnswer(why)
