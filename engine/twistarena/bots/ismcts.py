"""A search bot: single-observer information-set Monte Carlo tree search (SO-ISMCTS,
Cowling, Powley & Whitehouse 2012), on the engine's own rules.

Each iteration samples one deal of everything the bot's seat cannot see
(``State.determinize``), descends one shared tree keyed by action ids, choosing
with UCB among the children legal in *that* deal (availability counts), adds one
node, plays on with a cheap rollout policy to the end of the round (in Twisted,
whose score is exact after every move, only a few moves: less noise) and backs
up every seat's reward (its score gain over the others' mean, squashed into
0..1), so opponents' nodes are chosen for the opponents' benefit.

Hidden information. The bot sees what its seat was sent and nothing more: the
root of every search is ``engine.sample_state`` of the seat's observation (one
state consistent with everything the seat knows, the rest dealt at random), and
every simulation starts from ``determinize`` of that. So the bot plays the same
at full strength wherever it runs: over the network through the SDK or the
bridge, as a house bot on the server, or in-process (``act_with_state`` only
takes the seat's observation out of the state).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from twistarena.engine import JSON, Action, State, sample_state
from twistarena.engine.twhist.cards import PICK_BASE as TH_PICK_BASE
from twistarena.engine.twhist.cards import STOP as TH_STOP
from twistarena.engine.twhist.state import PICK as TH_PICK
from twistarena.engine.twisted.cards import DECK as TW_DECK
from twistarena.engine.twisted.cards import IS_TOAD as TW_IS_TOAD
from twistarena.engine.twisted.state import TAKE as TW_TAKE
from twistarena.engine.twisted.state import TWIST_BASE as TW_TWIST_BASE

#: Attribute holding the round number, per game: simulations stop at the end of
#: the current round, whose score change is what the decision can influence.
ROUND_ATTR: Mapping[str, str] = {"tricky_twist": "round_no", "twisted": "round"}

#: Default simulation depth (moves after the root) for games whose running score
#: is exact at every move: the near future carries the decision's effect with far
#: less noise than the rest of the round.
DEPTH: Mapping[str, int] = {"twisted": 6}

#: Score margin (points) that the reward maps to about 0.73 (logistic scale), per game.
REWARD_SCALE: Mapping[str, float] = {"tricky_twist": 12.0, "twisted": 4.0, "twhist": 4.0}


@dataclass(frozen=True, slots=True)
class IsmctsConfig:
    """Search budget and knobs. ``time_ms`` is optional so that tests can rely on
    ``iterations`` alone and stay deterministic; with both, the first one reached stops."""

    iterations: int | None = 300
    time_ms: float | None = None
    exploration: float = 0.7
    #: "greedy": cheap per-game rollout rules where the game has them; "random": uniform.
    rollout: str = "greedy"
    #: "round": simulate to the end of the current round; "game": to the end of the match.
    horizon: str = "round"
    #: Stop simulations this many moves after the root and score them there (None: the
    #: game's default; 0: no limit). Only for games whose score is kept up to date.
    depth: int | None = None
    #: Try every root move on each sampled deal with shared rollout dice (variance
    #: reduction); the budget still counts simulations. Off by default: no gain measured.
    paired: bool = False

    def __post_init__(self) -> None:
        if self.iterations is None and self.time_ms is None:
            raise ValueError("give an iteration budget, a time budget, or both")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError("iterations must be at least 1")
        if self.rollout not in ("greedy", "random"):
            raise ValueError("rollout must be 'greedy' or 'random'")
        if self.horizon not in ("round", "game"):
            raise ValueError("horizon must be 'round' or 'game'")
        if self.depth is not None and self.depth < 0:
            raise ValueError("depth must be at least 0 (0: no limit)")


class _Node:
    """Statistics of the edge into this node, from the view of the seat that chose it."""

    __slots__ = ("avail", "children", "reward", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.avail = 1
        self.reward = 0.0
        self.children: dict[int, _Node] = {}


# -- rollout policies ----------------------------------------------------------------

Policy = Callable[[Any, int, Sequence[int], random.Random], int]


def _random_policy(state: Any, seat: int, ids: Sequence[int], rng: random.Random) -> int:
    return ids[int(rng.random() * len(ids))]


#: TW: how many other deck cards lie within the extend distance of each card: a card
#: with few leaves the next player few ways to extend (the heuristic's main idea).
_TW_ESCAPES: tuple[int, ...] = tuple(
    sum(1 for d in TW_DECK if d != c and abs(d - c) <= 10) if c in TW_DECK else 99
    for c in range(100))


def _greedy_twisted(state: Any, seat: int, ids: Sequence[int], rng: random.Random) -> int:
    """TW rollouts: twist when possible (sure plus points), take only when forced,
    otherwise mostly play the card that leaves the next player fewest ways out,
    toads first (a toad in the row hurts whoever takes it)."""
    if ids[-1] == TW_TAKE and ids[-2] > TW_TWIST_BASE:
        return ids[-2]
    cards = ids[:-1] if ids[-1] == TW_TAKE else ids
    if rng.random() < 0.25:
        return cards[int(rng.random() * len(cards))]
    best, pick = 1000, cards[0]
    for c in cards:
        value = _TW_ESCAPES[c] - (8 if TW_IS_TOAD[c] else 0)
        if value < best:
            best, pick = value, c
    return pick


def _greedy_tricky_twist(state: Any, seat: int, ids: Sequence[int], rng: random.Random) -> int:
    """TT rollouts: random, except that a bonus pick always takes a card (TT-5.4)
    and the reserve window takes a card when the hand runs low (TT-4.1)."""
    phase = state.phase
    if phase == "bonus_pick" and len(ids) > 1:
        return ids[1 + int(rng.random() * (len(ids) - 1))]
    if phase == "reserve_window":
        return ids[0] if len(state.hands[seat]) <= 2 else ids[1]
    return ids[int(rng.random() * len(ids))]


def _greedy_twhist(state: Any, seat: int, ids: Sequence[int], rng: random.Random) -> int:
    """TH rollouts: random cards, but the picker takes the 1 or 2 trick cards that
    are best for itself against the others (TH-5.1, TH-5.2): picks swing the most stars."""
    if state.phase != TH_PICK:
        return ids[int(rng.random() * len(ids))]
    t = state.t
    value, stars, flips = t.value_of, t.stars, state.flips
    pool, picked = state.pool, state.picked
    others = [o for o in range(state.num_players)
              if o != seat and not state.sit_out >> o & 1]

    def gain(who: int, total: int) -> int:
        bit: int = t.flip_index(total)
        star: int = stars[bit]
        return -star if flips[who] >> bit & 1 else star

    have = sum(value[c] for c in picked)
    options: list[tuple[int, ...]] = [(c,) for c in pool]
    if picked:
        options.append(())
    else:
        options += [(a, b) for i, a in enumerate(pool) for b in pool[i + 1:]]
    best, choice = -1e9, options[0]
    for extra in options:
        mine = gain(seat, have + sum(value[c] for c in extra))
        rest = [c for c in pool if c not in extra]
        theirs = (sum(gain(o, sum(value[c] for c in rest)) for o in others) / len(others)
                  if rest and others else 0.0)
        score = mine - theirs + rng.random() * 1e-6
        if score > best:
            best, choice = score, extra
    return TH_PICK_BASE + choice[0] if choice else TH_STOP


_GREEDY: dict[str, Policy] = {
    "twisted": _greedy_twisted,
    "tricky_twist": _greedy_tricky_twist,
    "twhist": _greedy_twhist,
}


# -- the bot -------------------------------------------------------------------------


class IsmctsBot:
    """SO-ISMCTS for any engine game; see the module docstring."""

    def __init__(self, game_id: str, seed: int | None = None,
                 config: IsmctsConfig | None = None,
                 options: Mapping[str, Any] | None = None) -> None:
        self.game_id = game_id
        self.config = config or IsmctsConfig()
        self.rng = random.Random(seed)
        self.seed = seed
        #: the match's options (an agent gets them when it joins); None: the defaults
        self.options: JSON | None = dict(options) if options else None
        self.policy: Policy = (_GREEDY.get(game_id, _random_policy)
                               if self.config.rollout == "greedy" else _random_policy)
        self.round_attr = ROUND_ATTR.get(game_id) if self.config.horizon == "round" else None
        self.scale = REWARD_SCALE.get(game_id, 10.0)
        depth = self.config.depth if self.config.depth is not None else DEPTH.get(game_id, 0)
        self.depth = depth or 1 << 30
        #: iterations and root statistics (action -> visits, mean reward) of the last search
        self.last_iterations = 0
        self.last_stats: dict[int, tuple[int, float]] = {}

    def __call__(self, observation: Mapping[str, Any], legal_actions: Sequence[Action]) -> int:
        """Search from a state sampled from the seat's observation (see the module
        docstring): what an agent is sent is all the bot needs."""
        return self.decide(observation, [a.id for a in legal_actions], self.options)

    def act_with_state(self, state: State, seat: int) -> int:
        """The same decision, for a caller holding the state: only the seat's
        observation is taken out of it."""
        return self.decide(state.observation(seat), state.legal_action_ids(seat), state.options)

    def decide(self, observation: Mapping[str, Any], legal: Sequence[int],
               options: Mapping[str, Any] | None) -> int:
        if not legal:
            raise ValueError("no legal action to choose from")
        if len(legal) == 1:
            return legal[0]
        seat = observation["seat"]
        root = sample_state(self.game_id, observation, self.rng, options)
        choice = self.search(root, seat)
        return choice if choice in legal else legal[0]

    def search(self, root_state: State, seat: int) -> int:
        """Run the budget from ``root_state`` (already seat-safe) and return the most
        visited action of ``seat``."""
        cfg = self.config
        rng = self.rng
        root = _Node()
        base = root_state.scores()
        deadline = (time.perf_counter() + cfg.time_ms / 1000.0
                    if cfg.time_ms is not None else math.inf)
        budget = cfg.iterations if cfg.iterations is not None else 1 << 62
        done = 0
        own = list(root_state.legal_action_ids(seat))
        while done < budget:
            det = root_state.determinize(seat, rng)
            if cfg.paired:
                # Every root action on the same deal with the same rollout dice: their
                # differences then carry far less luck (common random numbers).
                dice = rng.getrandbits(64)
                for a in own:
                    self._iterate(root, det.clone(), seat, base, random.Random(dice), a)
                done += len(own)
            else:
                self._iterate(root, det, seat, base, rng, -1)
                done += 1
            if deadline != math.inf and time.perf_counter() >= deadline:
                break
        self.last_iterations = done
        self.last_stats = {key & 0xFFFF: (node.visits, node.reward / max(node.visits, 1))
                           for key, node in root.children.items() if key >> 16 == seat}
        if cfg.paired:  # equal visits: the best mean wins
            return max(self.last_stats.items(), key=lambda kv: (kv[1][1], -kv[0]))[0]
        return max(self.last_stats.items(), key=lambda kv: (kv[1], -kv[0]))[0]

    def _iterate(self, root: _Node, state: Any, seat: int, base: Sequence[int],
                 rng: random.Random, first_action: int) -> None:
        """One simulation on the determinized ``state``; ``first_action`` (if >= 0)
        is the root move to try instead of the UCB choice."""
        round_attr = self.round_attr
        start_round = getattr(state, round_attr) if round_attr else 0
        c = self.config.exploration
        path: list[tuple[_Node, int]] = []  # (edge node, seat that chose it)
        node = root
        first = True
        plies = self.depth
        # Selection and expansion: one shared tree, children legal in this deal only.
        while True:
            acting = state.to_act()
            if not acting or (round_attr and getattr(state, round_attr) != start_round):
                break
            plies -= 1
            player = seat if first or seat in acting else acting[0]
            first = False
            ids = state.legal_action_ids(player)
            if len(ids) == 1:  # forced moves take no tree level
                state.apply(player, ids[0])
                continue
            children = node.children
            high = player << 16
            if first_action >= 0:
                a, first_action = first_action, -1
                child = children.get(high | a)
                path.append((child or children.setdefault(high | a, _Node()), player))
                state.apply(player, a)
                if child is None:
                    break
                node = child
                continue
            untried = [a for a in ids if (high | a) not in children]
            if untried:
                a = untried[int(rng.random() * len(untried))]
                child = children[high | a] = _Node()
                path.append((child, player))
                state.apply(player, a)
                break
            best = -1.0
            best_a = ids[0]
            chosen: _Node | None = None
            for a in ids:
                ch = children[high | a]
                ch.avail += 1
                value = ch.reward / ch.visits + c * math.sqrt(math.log(ch.avail) / ch.visits)
                if value > best:
                    best, best_a, chosen = value, a, ch
            assert chosen is not None
            path.append((chosen, player))
            state.apply(player, best_a)
            node = chosen
        # Rollout to the end of the round (or match).
        policy = self.policy
        while plies > 0:
            acting = state.to_act()
            if not acting or (round_attr and getattr(state, round_attr) != start_round):
                break
            plies -= 1
            player = acting[0]
            ids = state.legal_action_ids(player)
            state.apply(player, ids[0] if len(ids) == 1 else policy(state, player, ids, rng))
        rewards = self._rewards(state.scores(), base)
        for edge, player in path:
            edge.visits += 1
            edge.reward += rewards[player]

    def _rewards(self, scores: Sequence[int], base: Sequence[int]) -> list[float]:
        """Each seat's gain minus the others' mean gain, squashed into 0..1."""
        gains = [s - b for s, b in zip(scores, base, strict=True)]
        n = len(gains)
        total = sum(gains)
        scale = self.scale
        out = []
        for g in gains:
            margin = g - (total - g) / (n - 1) if n > 1 else g
            out.append(1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, margin / scale)))))
        return out


def ismcts_bot(game_id: str, seed: int | None = None, iterations: int | None = 300,
               time_ms: float | None = None, options: Mapping[str, Any] | None = None,
               **knobs: Any) -> IsmctsBot:
    """An ISMCTS bot with a budget per decision; ``knobs`` go to ``IsmctsConfig``."""
    return IsmctsBot(game_id, seed, IsmctsConfig(iterations=iterations, time_ms=time_ms, **knobs),
                     options)
