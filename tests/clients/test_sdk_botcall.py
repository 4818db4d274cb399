"""How the SDK calls a bot: which keywords its ``act`` takes is read once per function."""

from __future__ import annotations

import gc
import weakref
from typing import Any

from twistarena.clients.sdk import botcall
from twistarena.clients.sdk.botcall import BotCall


class Plain:
    def act(self, observation: Any, legal_actions: Any) -> int:
        return 0


class WantsDecision:
    def act(self, observation: Any, legal_actions: Any, decision: Any = None) -> int:
        return 0


def test_the_keywords_a_bot_takes_are_read_from_its_signature() -> None:
    def with_rejection(observation: Any, legal_actions: Any, rejection: Any = None) -> int:
        return 0

    def with_kwargs(observation: Any, legal_actions: Any, **extra: Any) -> int:
        return 0

    plain, wants = BotCall(Plain(), None, "a"), BotCall(WantsDecision(), None, "b")
    assert (plain.takes_decision, plain.takes_rejection, plain.inline) == (False, False, True)
    assert (wants.takes_decision, wants.takes_rejection, wants.inline) == (True, False, False)
    assert BotCall(with_rejection, None, "c").takes_rejection
    assert not BotCall(with_rejection, None, "c").takes_decision
    kwargs = BotCall(with_kwargs, None, "d")
    assert kwargs.takes_decision and kwargs.takes_rejection


def test_a_signature_is_read_once_per_function_and_not_kept_alive(monkeypatch: Any) -> None:
    """Bots of one class share their act's function: its signature is read once for
    all of them (a host seats one per match), and dropping the class frees it."""
    reads: list[Any] = []
    read = botcall._reads_keyword

    def counting(fn: Any, name: str) -> bool:
        reads.append((fn.__qualname__, name))
        return read(fn, name)

    monkeypatch.setattr(botcall, "_reads_keyword", counting)

    class Seated:
        def act(self, observation: Any, legal_actions: Any, rejection: Any = None) -> int:
            return 0

    calls = [BotCall(Seated(), None, f"seat{i}") for i in range(50)]
    assert all(c.takes_rejection and not c.takes_decision for c in calls)
    assert [name for _, name in reads] == ["rejection", "decision"]
    assert {fn for fn, _ in reads} == {Seated.act.__qualname__}
    function = weakref.ref(Seated.act)
    del calls, Seated
    gc.collect()
    assert function() is None, "the signature cache holds a bot's code alive"


def test_a_callable_bot_that_cannot_be_kept_is_read_every_time() -> None:
    """Unhashable, or without a weak reference (``__slots__``): not kept, still read."""
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, observation: Any, legal_actions: Any, decision: Any = None) -> int:
            return 0

    class Slotted:
        __slots__ = ()

        def __call__(self, observation: Any, legal_actions: Any, rejection: Any = None) -> int:
            return 0

    kept = len(botcall._ACCEPTS)
    assert BotCall(Unhashable(), None, "e").takes_decision
    assert BotCall(Slotted(), None, "f").takes_rejection
    assert not BotCall(Slotted(), None, "f").takes_decision
    assert len(botcall._ACCEPTS) == kept
