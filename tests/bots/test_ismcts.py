"""The ISMCTS bot: legal over whole games, deterministic per seed, blind to hidden cards."""

from __future__ import annotations

import random

import pytest
from twistarena import engine
from twistarena.bots import LADDER, STRATEGIES, SearchBot, make_bot, searches
from twistarena.bots.ismcts import (
    CONFIDENCE,
    HEURISTIC_DEPTH,
    SETTLED,
    SIMULATION_SCALE,
    IsmctsBot,
    IsmctsConfig,
    ismcts_bot,
)
from twistarena.clients.local import play_local
from twistarena.engine.twisted.state import TAKE, TWIST_BASE

from tests.engine.twisted.helpers import table

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
    bot = IsmctsBot(game_id, 3, IsmctsConfig(iterations=12, rollout="heuristic", confidence=0))
    action = bot.act_with_state(state, seat)
    legal = state.legal_action_ids(seat)
    assert set(bot.last_stats) == set(legal) and action in legal
    assert len({visits for visits, _ in bot.last_stats.values()}) == 1
    assert bot.last_iterations >= 12 and len(bot.search_seconds) == 1
    # The chosen move has the best mean margin of all (no confidence demanded).
    assert bot.last_stats[action][1] == max(mean for _, mean in bot.last_stats.values())


def test_twisted_search_settings() -> None:
    """Twisted simulations run until the row is settled (taken or twisted empty), with
    four rollouts per budgeted simulation, and overrule the heuristic only on a clear
    gain; the other games keep their short horizons and plain best-mean choice."""
    twisted = IsmctsBot("twisted", 1)
    assert twisted.settled is not None and twisted.depth == HEURISTIC_DEPTH["twisted"] >= 30
    assert twisted.confidence == CONFIDENCE["twisted"] > 0
    assert SIMULATION_SCALE["twisted"] == 4
    for game_id in ("tricky_twist", "twhist"):
        bot = IsmctsBot(game_id, 1)
        assert bot.settled is None and bot.depth == 8 and bot.confidence == 0
        assert SIMULATION_SCALE.get(game_id, 1) == 1


def test_twisted_position_is_settled_once_the_row_is_emptied() -> None:
    """TW-3.3: after a take the taker starts a new row; TW-3.2: twisting the only card
    empties the row. Both leave every played card in a pile: settled."""
    settled = SETTLED["twisted"]
    taken = table([[15, 64], [13, 81, 82]], row=[34, 41])
    assert not settled(taken)
    taken.apply(0, TAKE)
    assert settled(taken)
    twisted = table([[94, 12], [13, 81, 82]], row=[49])
    twisted.apply(0, TWIST_BASE + 94)
    assert settled(twisted)


def test_twisted_search_plays_the_budget_in_rollouts_and_counts_them() -> None:
    state = _decision_points("twisted", 3)[1]
    seat = state.to_act()[0]
    bot = IsmctsBot("twisted", 3, IsmctsConfig(iterations=12))
    bot.act_with_state(state, seat)
    assert bot.last_iterations >= 12 * SIMULATION_SCALE["twisted"]


def test_a_search_that_demands_certainty_plays_the_heuristic() -> None:
    """With an unreachable confidence the flat search never overrules the heuristic's
    move; with none it does somewhere on the same positions."""
    overruled = 0
    for state in [s for players in (2, 3, 4) for s in _decision_points("twisted", players)]:
        seat = state.to_act()[0]
        heuristic = make_bot("heuristic", "twisted", 5)
        expected = heuristic(state.observation(seat), state.legal_actions(seat))
        sure = IsmctsBot("twisted", 5, IsmctsConfig(iterations=20, confidence=1e9))
        assert sure.act_with_state(state, seat) == expected
        bold = IsmctsBot("twisted", 5, IsmctsConfig(iterations=20, confidence=0))
        overruled += bold.act_with_state(state, seat) != expected
    assert overruled >= 1


def _round_margin_after(state: engine.State, seat: int, action: int) -> int:
    """``seat``'s score margin at the end of the round after ``action``, every seat
    then playing the heuristic."""
    sim = state.clone()
    sim.apply(seat, action)
    bots = [make_bot("heuristic", "twisted", s) for s in range(sim.num_players)]
    round_no = sim.round  # type: ignore[attr-defined]
    while not sim.is_terminal() and sim.round == round_no:  # type: ignore[attr-defined]
        player = sim.to_act()[0]
        sim.apply(player, bots[player](sim.observation(player), sim.legal_actions(player)))
    totals = sim.totals  # type: ignore[attr-defined]
    return int(totals[seat] - totals[1 - seat])


def test_twisted_search_declines_a_sure_twist_that_loses_the_endgame() -> None:
    """TW-3.2 twisting 69 out with 96 is two sure points, and the heuristic takes them;
    but the draw pile is empty (TW-4.1), so the round ends only when the row empties,
    and the lone 57 left behind sends the row around until seat 0 must take it
    (TW-3.3, toads -5 by TW-4.3). Extending with 68 instead ends the round far
    better. Nothing is hidden here: with 2 players and no draw pile every unseen card
    is in the other hand."""
    state = table([[15, 46, 48, 68, 74, 84, 86, 89, 96], [37, 44, 47, 49, 64, 73, 77, 95, 98]],
                  row=[57, 69], pile=[])
    state.plus = [[83, 38, 91, 19, 92, 29, 85, 58, 41, 14, 32, 23, 43, 34, 42, 24, 39, 93, 31,
                   13, 26, 62, 17, 71, 56, 65], [87, 78, 28, 82, 12, 21, 67, 76, 72, 27]]
    state.minus = [[55, 63, 53, 59, 52, 88, 81, 79, 75, 66, 61, 51, 54, 35, 36, 45, 22, 18, 16,
                    25, 33], [94, 97]]
    heuristic = make_bot("heuristic", "twisted", 1)(state.observation(0), state.legal_actions(0))
    assert heuristic == TWIST_BASE + 96
    search = make_bot("ismcts-fast", "twisted", 1).act_with_state(state, 0)  # type: ignore[attr-defined]
    assert search != heuristic
    assert _round_margin_after(state, 0, search) > _round_margin_after(state, 0, heuristic) + 10
