"""``twistarena bench rl --peers``: our paths beside OpenSpiel's own C++ trick-taking
games, in the same process and the same turns.

The peers (``PEERS``) are played as OpenSpiel's Python API drives them, random
legal actions, chance outcomes drawn uniformly and not counted as decisions:

- random: ``legal_actions`` and ``apply_action`` per decision;
- tensor: the same with the player's tensor written each decision by an
  ``open_spiel.python.observation`` observer (the observation tensor, or the
  information state tensor for the games that have none: hearts, oh_hell, euchre);
- clone: ``state.clone()`` of a state a few decisions into the game (hearts only).

Ours, per game and player count: ``raw`` (the engine loop of ``bench engine``),
``observe`` and ``mask`` (the AEC loops of ``bench rl``), ``spiel`` and
``spiel_tensor`` (our OpenSpiel game in the peers' loops) and ``clone`` (our
OpenSpiel state's ``clone()``, as hearts's). A ratio is ours over the peers'
median in the same turn (``raw``, ``mask``, ``spiel`` over the peers' random
rate; ``observe``, ``spiel_tensor`` over their tensor rate; ``clone`` over
hearts's), and the figure reported is the median over the turns.
"""

from __future__ import annotations

import functools
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

#: OpenSpiel's trick-taking games, as ``pyspiel.load_game`` names them
PEERS = ("hearts", "spades", "bridge", "skat", "oh_hell", "euchre")
#: what each of our paths is held against (see the module docstring)
AGAINST = {"raw": "random", "mask": "random", "spiel": "random", "observe": "tensor",
           "spiel_tensor": "tensor", "clone": "clone"}
#: decisions played before a state is cloned (past the deal, into the play)
CLONE_AFTER = 8


def _tensor_of(game: Any) -> Callable[[Any, int], Any]:
    """The player's tensor written into one numpy buffer, as learners read it
    (``open_spiel.python.observation``; ``state.observation_tensor`` would build a
    list of Python floats each time, which costs more than the game)."""
    import pyspiel
    from open_spiel.python.observation import make_observation

    perfect_recall = not game.get_type().provides_observation_tensor
    observer = make_observation(game, pyspiel.IIGObservationType(perfect_recall=perfect_recall))
    return observer.set_from  # type: ignore[no-any-return]


def spiel_game(game: Any, with_tensor: bool, seed: int) -> int:
    """One random match of an OpenSpiel game; the decisions taken."""
    rng = random.Random(seed)
    tensor = _tensor_of(game) if with_tensor else None
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            continue
        if tensor is not None:
            tensor(state, state.current_player())
        state.apply_action(rng.choice(state.legal_actions()))
        decisions += 1
    return decisions


def midgame(game: Any, seed: int) -> Any:
    """A state ``CLONE_AFTER`` decisions into a random match (or its end, if sooner)."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal() and decisions < CLONE_AFTER:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            continue
        state.apply_action(rng.choice(state.legal_actions()))
        decisions += 1
    return state


def clones(state: Any, seconds: float) -> float:
    """``state.clone()`` per CPU-second."""
    count, start = 0, time.process_time()
    elapsed = 0.0
    while elapsed < seconds or count < 10:
        for _ in range(10):
            state.clone()
        count += 10
        elapsed = time.process_time() - start
    return count / elapsed


def rate(play: Callable[[int], int], seconds: float, first_seed: int) -> float:
    """Decisions per CPU-second of whole matches of ``play`` for at least ``seconds``."""
    decisions = games = 0
    start = time.process_time()
    elapsed = 0.0
    while elapsed < seconds or games == 0:
        decisions += play(first_seed + games)
        games += 1
        elapsed = time.process_time() - start
    return decisions / elapsed


def peer_plays() -> dict[str, Any]:
    """The peers that this OpenSpiel build has, loaded with their defaults."""
    import pyspiel

    names = set(pyspiel.registered_names())
    return {name: pyspiel.load_game(name) for name in PEERS if name in names}


def peer_turn(peers: dict[str, Any], seconds: float, seed: int) -> dict[str, float]:
    """One turn of the peers: the median random and tensor rates, hearts's clones."""
    randoms = [rate(functools.partial(spiel_game, g, False), seconds, seed)
               for g in peers.values()]
    tensors = [rate(functools.partial(spiel_game, g, True), seconds, seed)
               for g in peers.values()]
    out = {"random": statistics.median(randoms), "tensor": statistics.median(tensors)}
    if "hearts" in peers:
        out["clone"] = clones(midgame(peers["hearts"], seed), seconds)
    return out


def ratios(ours: dict[str, list[float]], peers: list[dict[str, float]]) -> dict[str, float]:
    """Per path, the median over the turns of our rate over the peers' in that turn."""
    out = {}
    for path, rates in ours.items():
        against = [turn.get(AGAINST[path]) for turn in peers]
        pairs = [r / a for r, a in zip(rates, against, strict=True) if a]
        if pairs:
            out[path] = round(statistics.median(pairs), 3)
    return out
