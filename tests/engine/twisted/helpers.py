"""Build Twisted positions directly: set hands, row and draw pile on a fresh match."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from twistarena import engine
from twistarena.engine.twisted.cards import DECK
from twistarena.engine.twisted.state import PLAY, TwistedState


def table(
    hands: Sequence[Iterable[int]],
    row: Iterable[int] = (),
    pile: Iterable[int] | None = None,
    turn: int = 0,
    options: dict[str, Any] | None = None,
    seed: int = 0,
) -> TwistedState:
    """A match of ``len(hands)`` players at the given position, seat ``turn`` to act.

    ``pile`` lists the draw pile bottom to top (top = last). By default it holds
    every card not in a hand or the row, so all 79 cards stay accounted for.
    """
    state = engine.make("twisted", len(hands), seed, options)
    assert isinstance(state, TwistedState)
    state.hands = [sorted(h) for h in hands]
    state.row = list(row)
    used = {c for h in state.hands for c in h} | set(state.row)
    assert len(used) == sum(len(h) for h in state.hands) + len(state.row), "a card twice"
    state.pile = [c for c in DECK if c not in used] if pile is None else list(pile)
    state.plus = [[] for _ in hands]
    state.minus = [[] for _ in hands]
    state.turn = turn
    state.phase = PLAY
    state._legal = None
    return state


def kinds(state: TwistedState, since: int = 0) -> list[str]:
    """Kinds of the events logged from index ``since`` on."""
    return [e.kind for e in state.events[since:]]
