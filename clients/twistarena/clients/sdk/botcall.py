"""Calling a bot author's code: the forms a bot may take, sync or async, in the
reading loop or a thread, and the one answer to a bot that raises."""

from __future__ import annotations

import asyncio
import inspect
import time
import weakref
from collections.abc import Callable
from typing import Any

import structlog
from twistarena.engine import Action

from .convert import Decision, Rejection

log = structlog.get_logger("twistarena.sdk")

#: A sync bot call slower than this moves the agent's later calls to a thread.
SLOW_CALL_S = 0.005


class NoAnswer(Exception):
    """Raised by a bot that has no answer for this decision (a bridged program that
    crashed, hung or printed garbage): the agent asks the server to settle it with
    the match's fallback at once (``Answer.fallback``), as a missed deadline would,
    without waiting for the deadline."""


def _resolve(bot: Any) -> tuple[Callable[..., Any], Callable[[Rejection], Any] | None]:
    """A bot is a callable or an object with ``act`` (and optionally ``on_rejected``)."""
    act = getattr(bot, "act", None)
    if callable(act):
        hook = getattr(bot, "on_rejected", None)
        return act, hook if callable(hook) else None
    if callable(bot):
        return bot, None
    raise TypeError(f"a bot must be callable or have an act() method, got {bot!r}")


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes the keyword argument ``name``. Read once per function:
    reading a signature costs more than many decisions, and a host seats bots of
    one class (bound methods of one function) in match after match. Kept weakly,
    so a bot's code is never held alive by this."""
    target = getattr(fn, "__func__", fn)
    try:
        known = _ACCEPTS.setdefault(target, {})
    except TypeError:  # unhashable, or no weak reference to it: read every time
        return _reads_keyword(target, name)
    answer = known.get(name)
    if answer is None:
        answer = known[name] = _reads_keyword(target, name)
    return answer


#: function -> {keyword: whether it takes it}
_ACCEPTS: weakref.WeakKeyDictionary[Any, dict[str, bool]] = weakref.WeakKeyDictionary()


def _reads_keyword(fn: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == name or p.kind is p.VAR_KEYWORD for p in params)


def action_id(value: Any) -> int:
    """A bot may return an ``Action`` or its id."""
    return value.id if isinstance(value, Action) else int(value)


class BotCall:
    """One bot and how to call it.

    ``threaded``: True runs a sync bot in a thread, False in the reading loop,
    None starts in the loop and moves to a thread once a call is slow."""

    def __init__(self, bot: Any, threaded: bool | None, agent_name: str) -> None:
        self.act, self.on_rejected = _resolve(bot)
        self.is_async = inspect.iscoroutinefunction(self.act)
        self.takes_rejection = _accepts(self.act, "rejection")
        #: A bot whose act takes ``decision`` gets the whole Decision (id, time left).
        self.takes_decision = _accepts(self.act, "decision")
        self.threaded = bool(threaded)
        self.adaptive = threaded is None
        self.agent_name = agent_name
        #: Decisions on which the bot raised (``NoAnswer`` aside), and the first error.
        self.errors = 0
        self.first_error: str | None = None

    @property
    def inline(self) -> bool:
        """Whether a first call may run in the reading loop (no task, no thread)."""
        return not (self.is_async or self.threaded or self.takes_decision)

    def call(self, decision: Decision, **kwargs: Any) -> Any:
        """Call a sync bot here and now (timed, for ``threaded=None``); its return value."""
        start = time.perf_counter()
        value = self.act(decision.observation, decision.legal_actions, **kwargs)
        if self.adaptive and time.perf_counter() - start > SLOW_CALL_S:
            self.threaded = True
        return value

    async def ask(self, decision: Decision, rejection: Rejection | None) -> int:
        """The bot's action id for ``decision`` (after ``rejection``, if it is a retry)."""
        kwargs: dict[str, Any] = {}
        if self.takes_decision:
            kwargs["decision"] = decision
        if rejection is not None:
            if self.on_rejected is not None:
                self.on_rejected(rejection)
            if self.takes_rejection:
                kwargs["rejection"] = rejection
        if self.is_async:
            value = await self.act(decision.observation, decision.legal_actions, **kwargs)
        elif self.threaded:
            value = await asyncio.to_thread(self.act, decision.observation,
                                            decision.legal_actions, **kwargs)
        else:
            value = self.call(decision, **kwargs)
        if inspect.isawaitable(value):
            value = await value
        return action_id(value)

    def failed(self, decision: Decision, error: Exception) -> int | None:
        """The one answer to a bot that raised: ``NoAnswer`` gives the decision to
        the fallback (None); any other error plays the first legal action, so that a bot
        bug does not cost the seat its match."""
        if isinstance(error, NoAnswer):
            return None
        self.errors += 1
        if self.first_error is None:
            self.first_error = f"{type(error).__name__}: {error}"
        log.warning("bot raised; playing the first legal action", agent=self.agent_name,
                    decision=decision.decision_id, error=repr(error))
        return decision.legal_actions[0].id
