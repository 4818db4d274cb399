"""A match taken one seat at a time, for the sequential APIs (AEC, OpenSpiel).

Where the rules have several seats choose at once (Tricky Twist's reserve,
TT-3.3: every seat picks its reserve cards in the same step), the engine lists
them all in ``to_act()``. Here they are asked one after the other, and each
choice is held back until every seat of the step has chosen: only then are
they applied, in seat order. A seat is therefore never shown what the others
chose in the same step (their reserve counts would tell it), as at the table.
"""

from __future__ import annotations

from typing import Any

from twistarena.engine import IllegalAction, State, replay


class Turns:
    """``state`` with simultaneous choices buffered (see the module docstring)."""

    __slots__ = ("pending", "state")

    def __init__(self, state: State) -> None:
        self.state = state
        #: seat -> its held-back action id, for the step in progress
        self.pending: dict[int, int] = {}

    def current(self) -> int:
        """The seat to choose next, or -1 when the match is over."""
        acting = self.state.to_act()
        if not self.pending:  # all but a simultaneous step under way
            return acting[0] if acting else -1
        for seat in acting:
            if seat not in self.pending:
                return seat
        return -1

    def play(self, seat: int, action_id: int) -> int:
        """Choose ``action_id`` for ``seat`` (``IllegalAction`` if it may not); the
        seat to choose next (``current``)."""
        state = self.state
        acting = state.to_act()
        if len(acting) == 1:  # nothing is pending: the next seat is the first to act
            state.apply(seat, action_id)  # it validates first and changes nothing if refused
            acting = state.to_act()
            return acting[0] if acting else -1
        if seat in self.pending:
            raise IllegalAction(IllegalAction.NOT_TO_ACT,
                                f"seat {seat} has already chosen in this step")
        error = state.check(seat, action_id)
        if error is not None:
            raise error
        self.pending[seat] = action_id
        if len(self.pending) == len(acting):
            held, self.pending = self.pending, {}
            for s in sorted(held):
                state.apply(s, held[s])
        return self.current()

    def clone(self) -> Turns:
        out = Turns.__new__(Turns)  # OpenSpiel's clones and searches call this often
        out.state = self.state.clone()
        out.pending = dict(self.pending) if self.pending else {}
        return out

    def __deepcopy__(self, memo: dict[int, object]) -> Turns:
        """``clone``: OpenSpiel copies a Python game's state attribute by attribute."""
        return self.clone()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as what replays it: options, seed and moves (OpenSpiel serializes)."""
        s = self.state
        return (_replayed, (s.game_id, s.num_players, s.seed, s.options, list(s.history),
                            dict(self.pending)))


def _replayed(game_id: str, num_players: int, seed: int, options: dict[str, Any],
              history: list[tuple[int, int]], pending: dict[int, int]) -> Turns:
    out = Turns(replay(game_id, num_players, seed, options, history))
    out.pending = pending
    return out


def final_rewards(state: State, reward: str) -> list[float]:
    """Each seat's reward at the end of a match (docs/rl.md):

    - ``score``: its final score in game points;
    - ``place``: +1 for first place, -1 for last, evenly between (shared places
      share the value), so ``1 - 2 (place - 1) / (players - 1)``;
    - ``win``: 1 if it is among the winners (first place), else 0.
    """
    if check_reward(reward) == "score":
        return [float(s) for s in state.scores()]
    places = state.places()
    if reward == "place":
        n = state.num_players
        return [1.0 - 2.0 * (p - 1) / (n - 1) for p in places]
    return [1.0 if p == 1 else 0.0 for p in places]


REWARDS = ("place", "score", "win")


def check_reward(reward: str) -> str:
    """``reward`` if it is one of ``REWARDS``, else ``ValueError`` naming them."""
    if reward not in REWARDS:
        raise ValueError(f"unknown reward {reward!r}; use one of {', '.join(REWARDS)}")
    return reward
