"""A search bot on the engine's own rules, from what its seat may see. Two searches:

- ``rollout="heuristic"`` (the default, and the ladder's): flat determinized Monte
  Carlo over the seat's legal moves. Each simulation samples one deal of
  everything the seat cannot see (``State.determinize``), tries *every* legal
  move on it, then lets every seat play the game's heuristic bot for a few moves
  (``HEURISTIC_DEPTH``) and scores the position as it stands then (``STANDING``).
  All moves share the deal and the dice, so their differences carry little
  luck; the best mean margin wins, and ties keep the heuristic's own choice. It
  is a rollout improvement of the heuristic (Tesauro & Galperin 1996): it plays
  the heuristic's move unless simulations of the heuristic show a better one.
  Per game, simulations may also stop at a settled position (``SETTLED``; in
  Twisted: once the row is emptied, up to 40 moves on), play several rollouts per
  budgeted simulation (``SIMULATION_SCALE``) and overrule the heuristic only by a
  margin of standard errors (``CONFIDENCE``). Twisted uses all three: six moves
  were too short to see who ends up taking the row, and its best-mean moves were
  then worse than the heuristic's own.
- ``rollout="greedy"`` or ``"random"``: single-observer information-set MCTS
  (SO-ISMCTS, Cowling, Powley & Whitehouse 2012). One shared tree keyed by
  action ids, UCB among the children legal in the sampled deal (availability
  counts), one node added per iteration, then a cheap rollout policy to the end
  of the round (in Twisted, whose score is exact after every move, only a few
  moves), every seat's reward (its score gain over the others' mean, squashed
  into 0..1) backed up, so opponents' nodes are chosen for their own benefit.

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
from twistarena.engine.twisted.state import START_ROW as TW_START_ROW
from twistarena.engine.twisted.state import TAKE as TW_TAKE
from twistarena.engine.twisted.state import TWIST_BASE as TW_TWIST_BASE

from .heuristic import heuristic_bot
from .heuristic.twisted import choose_in_state as twisted_choose_in_state

#: Attribute holding the round number, per game: simulations stop at the end of
#: the current round, whose score change is what the decision can influence.
ROUND_ATTR: Mapping[str, str] = {"tricky_twist": "round_no", "twisted": "round"}

#: Default simulation depth (moves after the root) for games whose running score
#: is exact at every move: the near future carries the decision's effect with far
#: less noise than the rest of the round.
DEPTH: Mapping[str, int] = {"twisted": 6}

#: Simulation depth of heuristic rollouts (moves after the root move), per game: they
#: cost a heuristic decision per move, and the near future carries most of a move's
#: effect; the score at the end is the game's ``STANDING``. In Twisted it is only a
#: cap: its rollouts stop at the first settled position (``SETTLED``), since within
#: six moves the row's fate, the bulk of the points, was mostly still open.
HEURISTIC_DEPTH: Mapping[str, int] = {"twisted": 40, "twhist": 8, "tricky_twist": 8}


def _tricky_twist_standing(state: Any) -> list[int]:
    """TT totals as if the round were scored now (TT-7.2..7.6): the scores themselves
    move only at the end of a round."""
    return [row["total"] for row in state.round_rows()]


#: Each seat's score as it stands, for simulations cut before the score is settled
#: (default: ``State.scores``).
STANDING: Mapping[str, Callable[[Any], list[int]]] = {"tricky_twist": _tricky_twist_standing}


def _twisted_settled(state: Any) -> bool:
    """TW: the row was just emptied by a take (TW-3.3) or a twist (TW-3.2): every card
    played so far is in a pile, so the score then carries what the moves did."""
    return state.phase == TW_START_ROW or not state.row


#: Positions where heuristic rollouts may stop early, per game: the score as it
#: stands there is settled, and later moves depend little on the root move.
SETTLED: Mapping[str, Callable[[Any], bool]] = {"twisted": _twisted_settled}

#: Heuristic rollouts per budgeted simulation, per game (default 1): a game whose
#: simulated moves are cheap buys less noise with the same rung budgets.
SIMULATION_SCALE: Mapping[str, int] = {"twisted": 4}

#: Standard errors by which a simulated move must beat the heuristic's own move before
#: the flat search plays it, per game (default 0: the best mean wins).
CONFIDENCE: Mapping[str, float] = {"twisted": 2.0}

#: Score margin (points) that the reward maps to about 0.73 (logistic scale), per game.
REWARD_SCALE: Mapping[str, float] = {"tricky_twist": 12.0, "twisted": 4.0, "twhist": 4.0}


#: The game's heuristic read straight from a simulated state (``(state, seat, rng) ->
#: action id``, the same choice as the heuristic bot seeded alike given the seat's
#: observation): far cheaper than building an observation for every simulated move.
STATE_HEURISTIC: Mapping[str, Callable[[Any, int, random.Random], int]] = {
    "twisted": twisted_choose_in_state}

#: Rollout policies ``IsmctsConfig.rollout`` accepts.
ROLLOUTS: tuple[str, ...] = ("heuristic", "greedy", "random")


@dataclass(frozen=True, slots=True)
class IsmctsConfig:
    """Search budget and knobs. ``time_ms`` is optional so that tests can rely on
    ``iterations`` alone and stay deterministic; with both, the first one reached stops."""

    #: simulations per decision (one per legal move and sampled deal in the flat search)
    iterations: int | None = 100
    time_ms: float | None = None
    exploration: float = 0.7
    #: "heuristic": every seat plays the game's heuristic bot in the simulations (with
    #: ``epsilon`` random moves) and the root moves are compared flat on shared deals;
    #: "greedy": cheap per-game rollout rules under a UCB tree; "random": uniform.
    rollout: str = "heuristic"
    #: Share of random moves in heuristic rollouts.
    epsilon: float = 0.0
    #: "round": simulate to the end of the current round; "game": to the end of the match.
    horizon: str = "round"
    #: Stop simulations this many moves after the root and score them there (None: the
    #: game's default; 0: no limit). Only for games whose score is kept up to date.
    depth: int | None = None
    #: Try every root move on each sampled deal with shared rollout dice (variance
    #: reduction); the budget still counts simulations. Off by default: no gain measured.
    paired: bool = False
    #: Flat search: overrule the heuristic's move only when the best move's mean margin
    #: beats it by this many standard errors (None: the game's ``CONFIDENCE``; 0: any gain).
    confidence: float | None = None
    #: Heuristic rollouts: also stop at the first position the game calls settled
    #: (``SETTLED``), within the depth (None: when the game defines settled positions).
    settle: bool | None = None

    def __post_init__(self) -> None:
        if self.iterations is None and self.time_ms is None:
            raise ValueError("give an iteration budget, a time budget, or both")
        if self.iterations is not None and self.iterations < 1:
            raise ValueError("iterations must be at least 1")
        if self.rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError("epsilon must be within 0..1")
        if self.horizon not in ("round", "game"):
            raise ValueError("horizon must be 'round' or 'game'")
        if self.depth is not None and self.depth < 0:
            raise ValueError("depth must be at least 0 (0: no limit)")
        if self.confidence is not None and self.confidence < 0:
            raise ValueError("confidence must be at least 0")


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
        depths = HEURISTIC_DEPTH if self.config.rollout == "heuristic" else DEPTH
        depth = self.config.depth if self.config.depth is not None else depths.get(game_id, 0)
        self.depth = depth or 1 << 30
        settle = self.config.settle if self.config.settle is not None else True
        #: stops heuristic rollouts early at a settled position (None: never)
        self.settled = SETTLED.get(game_id) if settle else None
        self.confidence = (self.config.confidence if self.config.confidence is not None
                           else CONFIDENCE.get(game_id, 0.0))
        #: the game's heuristic bot, whose choice the flat search keeps on ties
        self._heuristic = heuristic_bot(game_id, seed)
        #: iterations and root statistics (action -> visits, mean reward) of the last search
        self.last_iterations = 0
        self.last_stats: dict[int, tuple[int, float]] = {}
        #: CPU seconds of every decision that searched (for benchmarks and evaluations)
        self.search_seconds: list[float] = []

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
        started = time.process_time()
        seat = observation["seat"]
        root = sample_state(self.game_id, observation, self.rng, options)
        choice = self.search(root, seat)
        self.search_seconds.append(time.process_time() - started)
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
        if cfg.rollout == "heuristic":
            scale = SIMULATION_SCALE.get(self.game_id, 1)
            return self._flat(root_state, seat, own, budget * scale, deadline)
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

    def _flat(self, root_state: State, seat: int, own: Sequence[int], budget: int,
              deadline: float) -> int:
        """Flat Monte Carlo with heuristic play: on each sampled deal every root move is
        tried, then every seat plays the game's heuristic bot to the horizon. All moves
        share the deal and the dice, so their differences carry little luck; the one
        with the best mean score margin wins (a rollout improvement of the heuristic),
        but with ``confidence`` > 0 only if it beats the heuristic's own move by that
        many standard errors of their paired difference."""
        rng = self.rng
        eps = self.config.epsilon
        anchor = self._heuristic(root_state.observation(seat), root_state.legal_actions(seat))
        totals = dict.fromkeys(own, 0.0)
        squares = dict.fromkeys(own, 0.0)  # of each move's margin over the anchor's
        start_round = getattr(root_state, self.round_attr) if self.round_attr else 0
        base = self._standing(root_state, start_round)
        done = 0
        while done < budget:
            det = root_state.determinize(seat, rng)
            dice = rng.getrandbits(64)
            margins = {}
            for a in own:
                sim = det.clone()
                sim.apply(seat, a)
                self._playout(sim, start_round, random.Random(dice), eps, self.depth - 1)
                margins[a] = self._margin(self._standing(sim, start_round), base, seat)
                totals[a] += margins[a]
            for a in own:
                squares[a] += (margins[a] - margins[anchor]) ** 2
            done += len(own)
            if deadline != math.inf and time.perf_counter() >= deadline:
                break
        rounds = max(1, done // len(own))
        self.last_iterations = done
        self.last_stats = {a: (rounds, total / rounds) for a, total in totals.items()}
        # Ties go to the heuristic's own choice: the search only overrules it when it
        # found a move that did better.
        best = max(own, key=lambda a: (totals[a], a == anchor, -a))
        z = self.confidence
        if z and best != anchor and rounds > 1:
            gain = (totals[best] - totals[anchor]) / rounds
            spread = max(0.0, squares[best] / rounds - gain * gain) * rounds / (rounds - 1)
            if gain <= z * math.sqrt(spread / rounds):
                return anchor
        return best

    def _playout(self, state: Any, start_round: int, rng: random.Random, eps: float,
                 plies: int) -> None:
        """Every seat plays the heuristic (``eps`` of its moves at random) to the horizon:
        ``plies`` more moves, or the end of round ``start_round``."""
        seed = rng.getrandbits(32)
        in_state = STATE_HEURISTIC.get(self.game_id)
        if in_state is not None:
            bot_rng = random.Random(seed)

            def choose(state: Any, player: int) -> int:
                return in_state(state, player, bot_rng)
        else:
            bot = heuristic_bot(self.game_id, seed)

            def choose(state: Any, player: int) -> int:
                return bot(state.observation(player), state.legal_actions(player))
        round_attr = self.round_attr
        settled = self.settled
        while plies > 0:
            acting = state.to_act()
            if not acting or (round_attr and getattr(state, round_attr) != start_round):
                return
            if settled is not None and settled(state):
                return
            plies -= 1
            player = acting[0]
            ids = state.legal_action_ids(player)
            if len(ids) == 1:
                state.apply(player, ids[0])
            elif eps and rng.random() < eps:
                state.apply(player, ids[int(rng.random() * len(ids))])
            else:
                state.apply(player, choose(state, player))

    def _standing(self, state: State, start_round: int) -> list[int]:
        """Scores as they stand: settled ones once the round (or match) is over."""
        standing = STANDING.get(self.game_id)
        if (standing is None or state.is_terminal()
                or (self.round_attr and getattr(state, self.round_attr) != start_round)):
            return state.scores()
        return standing(state)

    @staticmethod
    def _margin(scores: Sequence[int], base: Sequence[int], seat: int) -> float:
        """``seat``'s score gain minus the others' mean gain."""
        gains = [s - b for s, b in zip(scores, base, strict=True)]
        n = len(gains)
        mine = gains[seat]
        return mine - (sum(gains) - mine) / (n - 1) if n > 1 else float(mine)

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
        scale = self.scale
        return [1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, self._margin(scores, base, s)
                                                     / scale))))
                for s in range(len(scores))]


def ismcts_bot(game_id: str, seed: int | None = None, iterations: int | None = 100,
               time_ms: float | None = None, options: Mapping[str, Any] | None = None,
               **knobs: Any) -> IsmctsBot:
    """An ISMCTS bot with a budget per decision; ``knobs`` go to ``IsmctsConfig``."""
    return IsmctsBot(game_id, seed, IsmctsConfig(iterations=iterations, time_ms=time_ms, **knobs),
                     options)
