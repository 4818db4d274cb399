"""The ISMCTS bot: legal over whole games, deterministic per seed, blind to hidden cards."""

from __future__ import annotations

import random

import pytest
from twistarena import engine
from twistarena.bots import LADDER, STRATEGIES, SearchBot, make_bot, searches
from twistarena.bots.ismcts import IsmctsBot, IsmctsConfig, ismcts_bot
from twistarena.clients.local import play_local

CASES = [("tricky_twist", 3), ("tricky_twist", 4), ("twisted", 2), ("twisted", 3),
         ("twisted", 4), ("twhist", 3), ("twhist", 4), ("twhist", 5)]


def _advance(state: engine.State, steps: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(steps):
        if state.is_terminal():
            return
        seat = state.to_act()[0]
        ids = state.legal_action_ids(seat)
        state.apply(seat, ids[rng.randrange(len(ids))])


def _decision_points(game_id: str, players: int) -> list[engine.State]:
    """States part-way through a match, each with several legal actions to choose from."""
    out = []
    for seed, steps in ((1, 3), (2, 25), (3, 60), (4, 130)):
        state = engine.make(game_id, players, seed)
        _advance(state, steps, seed)
        while not state.is_terminal() and len(state.legal_action_ids(state.to_act()[0])) < 2:
            _advance(state, 1, seed)
        if not state.is_terminal():
            out.append(state)
    return out


@pytest.mark.parametrize(("game_id", "players"), CASES)
def test_plays_only_legal_actions_over_whole_games(game_id: str, players: int) -> None:
    bots = [make_bot("random", game_id, s) for s in range(players)]
    bots[0] = ismcts_bot(game_id, seed=1, iterations=6)
    bots[-1] = ismcts_bot(game_id, seed=2, iterations=6, rollout="random")
    state = play_local(game_id, players, seed=11, bots=bots)  # an illegal id would raise
    assert state.is_terminal()


@pytest.mark.parametrize(("game_id", "players"), [("tricky_twist", 4), ("twisted", 2),
                                                  ("twhist", 4)])
def test_deterministic_for_a_seed(game_id: str, players: int) -> None:
    def match(seed: int) -> list[int]:
        bots = [make_bot("random", game_id, s) for s in range(players)]
        bots[1] = ismcts_bot(game_id, seed=seed, iterations=8)
        return play_local(game_id, players, seed=5, bots=bots).scores()

    assert match(3) == match(3)
    for state in _decision_points(game_id, players)[:2]:
        seat = state.to_act()[0]
        a, b = ismcts_bot(game_id, 9, iterations=25), ismcts_bot(game_id, 9, iterations=25)
        assert a.act_with_state(state, seat) == b.act_with_state(state, seat)
        assert a.last_stats == b.last_stats


@pytest.mark.parametrize(("game_id", "players"), [("tricky_twist", 3), ("tricky_twist", 4),
                                                  ("twisted", 2), ("twisted", 3),
                                                  ("twhist", 4), ("twhist", 5)])
def test_never_reads_hidden_information(game_id: str, players: int) -> None:
    """Two true states that differ only in what the seat may not know (other hands,
    reserves, the deck order, the seed and RNG) give the same search and action."""
    checked = 0
    for k, state in enumerate(_decision_points(game_id, players)):
        seat = state.to_act()[0]
        other = state.determinize(seat, random.Random(1000 + k))  # same information set
        other.seed = state.seed + 12345
        assert other.observation(seat) == state.observation(seat)
        if other.card_zones() == state.card_zones():
            continue  # nothing hidden differed at this point
        a = ismcts_bot(game_id, seed=4, iterations=30)
        b = ismcts_bot(game_id, seed=4, iterations=30)
        assert a.act_with_state(state, seat) == b.act_with_state(other, seat)
        assert a.last_stats == b.last_stats
        checked += 1
    assert checked >= 2


def test_time_budget() -> None:
    state = _decision_points("twhist", 4)[1]
    seat = state.to_act()[0]
    bot = IsmctsBot("twhist", 1, IsmctsConfig(iterations=None, time_ms=30))
    assert bot.act_with_state(state, seat) in state.legal_action_ids(seat)
    assert bot.last_iterations >= 1


def test_the_ladder_names_strategies_weakest_first() -> None:
    assert LADDER[:2] == ("random", "heuristic") and set(LADDER) <= set(STRATEGIES)
    budgets = [make_bot(name, "twisted", 1).config.iterations  # type: ignore[attr-defined]
               for name in LADDER[2:]]
    assert budgets == sorted(budgets) and len(set(budgets)) == len(budgets)


def test_registered_and_recognised_as_a_search_bot() -> None:
    assert "ismcts" in STRATEGIES
    bot = make_bot("ismcts", "twisted", 1)
    assert isinstance(bot, SearchBot)
    assert not isinstance(make_bot("heuristic", "twisted", 1), SearchBot)
    assert searches(bot) and not searches(make_bot("random", "twisted", 1))


def test_bad_configurations_are_refused() -> None:
    with pytest.raises(ValueError):
        IsmctsConfig(iterations=None, time_ms=None)
    with pytest.raises(ValueError):
        IsmctsConfig(iterations=0)
    with pytest.raises(ValueError):
        IsmctsConfig(rollout="clever")
    with pytest.raises(ValueError):
        IsmctsConfig(depth=-1)
    with pytest.raises(ValueError):
        IsmctsConfig(horizon="forever")


@pytest.mark.parametrize("game_id", ["tricky_twist", "twisted", "twhist"])
def test_paired_and_depth_limited_variants_stay_legal_and_blind(game_id: str) -> None:
    for k, state in enumerate(_decision_points(game_id, 3)[:3]):
        seat = state.to_act()[0]
        other = state.determinize(seat, random.Random(k))
        config = IsmctsConfig(iterations=20, rollout="greedy", paired=True, depth=4,
                              horizon="game")
        a, b = IsmctsBot(game_id, 2, config), IsmctsBot(game_id, 2, config)
        action = a.act_with_state(state, seat)
        assert action in state.legal_action_ids(seat)
        assert action == b.act_with_state(other, seat) and a.last_stats == b.last_stats
        assert a.last_iterations >= 20
        visits = {v for v, _ in a.last_stats.values()}
        assert len(visits) == 1  # every root move tried on every sampled deal


@pytest.mark.parametrize("game_id", ["tricky_twist", "twisted", "twhist"])
def test_flat_search_tries_every_move_on_every_sampled_deal(game_id: str) -> None:
    state = _decision_points(game_id, 3)[1]
    seat = state.to_act()[0]
    bot = IsmctsBot(game_id, 3, IsmctsConfig(iterations=12, rollout="heuristic"))
    action = bot.act_with_state(state, seat)
    legal = state.legal_action_ids(seat)
    assert set(bot.last_stats) == set(legal) and action in legal
    assert len({visits for visits, _ in bot.last_stats.values()}) == 1
    assert bot.last_iterations >= 12 and len(bot.search_seconds) == 1
    # The chosen move has the best mean margin of all.
    assert bot.last_stats[action][1] == max(mean for _, mean in bot.last_stats.values())
