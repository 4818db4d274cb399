"""A rule-based Twhist bot (docs/rules/twhist.md): one-trick lookahead on the FLIP cards.

It values a play by the trick as it stands with that card added (players still
to play are ignored): who would pick (the engine's own ``resolve_trick``), what
the picker would take, and what the bot would flip. Flipping a card to its star
side gains its stars, flipping a star side back loses them (TH-5.4). Twhist
cards are a resource: spending one early costs a little, while the tricks left
still exceed the Twhist cards left. As picker it takes the 1 or 2 cards that
are best for itself and worst for the others (TH-5.1, TH-5.2).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from twistarena.engine import Action
from twistarena.engine.twhist.cards import (
    PICK_BASE,
    STOP,
    TWHIST_BASE,
    TWHIST_NAMES,
    Tables,
    resolve_trick,
    tables,
)

from .. import Bot, SeededBot

#: How much an opponent's gain hurts the bot, relative to its own gain.
OPPONENT_WEIGHT = 0.8
#: What holding a Twhist card is worth while it need not be played yet.
TWHIST_KEEP = 3.0


class _View:
    """The parts of one observation the bot reasons with."""

    def __init__(self, obs: Mapping[str, Any]) -> None:
        self.seat: int = obs["seat"]
        self.n = len(obs["players"])
        self.t: Tables = tables(obs["rules"])
        self.star_side = [set(p["star_side"]) for p in obs["players"]]
        self.leader: int = obs["leader"]
        self.plays = [TWHIST_BASE + TWHIST_NAMES.index(p["twhist"]) if p["twhist"]
                      else p["card"]["id"] for p in obs["trick"]]
        self.twhist_left = len(obs["twhist_hand"])
        self.tricks_left: int = obs["tricks_total"] - obs["tricks_done"]

    def delta(self, seat: int, total: int) -> int:
        """Stars ``seat`` gains (or loses) by flipping the FLIP card of ``total``."""
        t = self.t
        bit = t.flip_index(total)
        value = bit + t.flip_min
        return -t.stars[bit] if value in self.star_side[seat] else t.stars[bit]

    def pick_value(self, picker: int, taken: Sequence[int], rest: Sequence[int],
                   sit_out: int) -> tuple[float, float]:
        """(picker's gain, the others' average gain) for one choice of cards."""
        v = self.t.value_of
        own = self.delta(picker, sum(v[c] for c in taken))
        others = [s for s in range(self.n) if s != picker and not sit_out >> s & 1]
        if not rest or not others:
            return float(own), 0.0
        total = sum(v[c] for c in rest)
        return float(own), sum(self.delta(s, total) for s in others) / len(others)

    def best_pick(self, picker: int, pool: Sequence[int], sit_out: int,
                  fixed: Sequence[int] = ()) -> tuple[tuple[int, ...], float]:
        """The picker's best extra cards (by its own gain, and as the bot also by the
        others' loss) and what that choice is worth to the bot."""
        if fixed:
            options: list[tuple[int, ...]] = [(), *((c,) for c in pool)]
        else:
            options = [(c,) for c in pool] + list(combinations(pool, 2))
        me = picker == self.seat
        best: tuple[float, tuple[int, ...], float] | None = None
        for extra in options:
            rest = [c for c in pool if c not in extra]
            own, others = self.pick_value(picker, (*fixed, *extra), rest, sit_out)
            score = own - OPPONENT_WEIGHT * others if me else own
            if best is None or score > best[0]:
                best = (score, extra, score if me else self._mine(rest, sit_out))
        assert best is not None
        return best[1], best[2]

    def _mine(self, rest: Sequence[int], sit_out: int) -> float:
        if not rest or sit_out >> self.seat & 1:
            return 0.0
        return float(self.delta(self.seat, sum(self.t.value_of[c] for c in rest)))

    def play_value(self, action: int) -> float:
        plays = [*self.plays, action]
        picker, _, sit_out, _ = resolve_trick(plays, self.leader, self.n, self.t)
        pool = [a for a in plays if a < TWHIST_BASE]
        value = self.best_pick(picker, pool, sit_out)[1] if pool and picker >= 0 else 0.0
        if action >= TWHIST_BASE:
            spare = self.tricks_left - self.twhist_left
            value -= TWHIST_KEEP * spare / max(self.tricks_left, 1)
        return value


def make(seed: int | None = None) -> Bot:
    """The Twhist heuristic bot; ``seed`` only breaks ties between equal choices."""
    return SeededBot(_choose, seed)


def _choose(observation: Mapping[str, Any], legal_actions: Sequence[Action],
            rng: random.Random) -> int:
    ids = [a.id for a in legal_actions]
    if len(ids) == 1:
        return ids[0]
    view = _View(observation)
    if ids[0] >= PICK_BASE:
        return _pick(view, observation, ids)
    scored = [(view.play_value(a) + rng.random() * 1e-6, a) for a in ids]
    return max(scored)[1]


def _pick(view: _View, obs: Mapping[str, Any], ids: list[int]) -> int:
    pool = [c["id"] for c in obs["pool"]]
    picked = [c["id"] for c in obs["picked"]]
    _, _, sit_out, _ = resolve_trick(view.plays, view.leader, view.n, view.t)
    extra, _ = view.best_pick(view.seat, pool, sit_out, picked)
    if not extra:
        return STOP
    return PICK_BASE + extra[0]
