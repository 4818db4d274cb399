"""``twistarena bench engine``: random full games per game and player count,
against a minimal trick-taking loop as the yardstick.

The reference loop is the least a Python trick-taking game can do per
decision (48 cards, 4 players, follow suit, uniform random play, no
bookkeeping); the ratio engine/reference tells how much the real rules,
validation, event log and observation-ready state cost on top of that.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from twistarena import engine


@dataclass(frozen=True)
class Figure:
    """One measured line: ``games`` full games of ``game_id`` with ``players`` seats."""

    game_id: str
    players: int
    games: int
    decisions: int
    seconds: float

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds

    @property
    def us_per_decision(self) -> float:
        return 1e6 * self.seconds / self.decisions

    def to_json(self) -> dict[str, float | int | str]:
        return {
            "game": self.game_id,
            "players": self.players,
            "games": self.games,
            "decisions": self.decisions,
            "seconds": round(self.seconds, 4),
            "games_per_s": round(self.games_per_s, 2),
            "decisions_per_s": round(self.decisions_per_s, 1),
            "us_per_decision": round(self.us_per_decision, 3),
        }


def reference_game(rng: random.Random) -> int:
    """One hand of the minimal loop; returns the number of decisions made."""
    deck = list(range(48))
    rng.shuffle(deck)
    hands = [deck[i::4] for i in range(4)]
    leader = 0
    decisions = 0
    choice = rng.choice
    for _ in range(12):
        led = -1
        best_seat, best_value = leader, -1
        for k in range(4):
            seat = (leader + k) % 4
            hand = hands[seat]
            legal = [c for c in hand if c // 12 == led] if led >= 0 else hand
            card = choice(legal or hand)
            hand.remove(card)
            decisions += 1
            if led < 0:
                led = card // 12
            if card // 12 == led and card % 12 > best_value:
                best_seat, best_value = seat, card % 12
        leader = best_seat
    return decisions


def engine_game(game_id: str, players: int, seed: int) -> int:
    """One random full game through the public engine API; returns decisions made."""
    state = engine.make(game_id, players, seed)
    rng = random.Random(seed)
    choice = rng.choice
    decisions = 0
    to_act = state.to_act
    legal = state.legal_action_ids
    apply = state.apply
    acting = to_act()
    while acting:
        seat = acting[0]
        apply(seat, choice(legal(seat)))
        decisions += 1
        acting = to_act()
    return decisions


def measure(label: tuple[str, int], play: Callable[[int], int], min_games: int,
            min_seconds: float, on_game: Callable[[], None] | None = None) -> Figure:
    """Play until both ``min_games`` and ``min_seconds`` are reached."""
    games = decisions = 0
    start = time.process_time()
    elapsed = 0.0
    while games < min_games or elapsed < min_seconds:
        decisions += play(games)
        games += 1
        elapsed = time.process_time() - start
        if on_game is not None:
            on_game()
    return Figure(label[0], label[1], games, decisions, elapsed)


def reference(min_games: int, min_seconds: float) -> Figure:
    rng = random.Random(1)
    return measure(("reference_loop", 4), lambda _: reference_game(rng), min_games, min_seconds)


def cases(game_ids: list[str] | None = None) -> list[tuple[str, int]]:
    infos = [engine.game(g) for g in game_ids] if game_ids else engine.games()
    return [(i.id, n) for i in infos for n in range(i.min_players, i.max_players + 1)]
