"""The outside API tests: PettingZoo's api_test and seed_test, Gymnasium's
check_env and OpenSpiel's random_sim_test, for every game and player count,
and one of OpenSpiel's own algorithms (its MCTS bot) playing on a game."""

from __future__ import annotations

import copy
import importlib.metadata
import json
import pickle
import random
from typing import Any

import gymnasium
import numpy as np
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env
from open_spiel.python.algorithms import ismcts, mcts
from pettingzoo.test import api_test, seed_test
from twistarena import engine
from twistarena.rl import (
    ENV_IDS,
    aec_env,
    encoder,
    num_distinct_actions,
    register_openspiel,
    spielhistory,
)
from twistarena.rl.openspiel import parse_options

from tests.rl.cases import CASES, IDS

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # the checkers' style hints


@pytest.mark.parametrize(("game_id", "players", "options"), CASES, ids=IDS)
def test_pettingzoo_api_and_seed_tests(game_id: str, players: int,
                                       options: dict[str, Any]) -> None:
    api_test(aec_env(game_id, players, **options), num_cycles=150)
    seed_test(lambda: aec_env(game_id, players, **options), num_cycles=40)


@pytest.mark.parametrize(("game_id", "players", "options"), CASES, ids=IDS)
@pytest.mark.parametrize("reward", ["place", "score", "win"])
def test_a_match_ends_with_every_agents_reward(game_id: str, players: int,
                                               options: dict[str, Any], reward: str) -> None:
    env = aec_env(game_id, players, reward=reward, **options)
    env.reset(seed=3)
    rng = random.Random(3)
    got: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, r, done, _, _ = env.last()
        got[agent] = r
        env.step(None if done else rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    state = env.turns.state
    assert state.is_terminal() and env.agents == []
    places, scores = state.places(), state.scores()
    for seat in range(players):
        expected = {"score": scores[seat], "win": float(places[seat] == 1),
                    "place": 1 - 2 * (places[seat] - 1) / (players - 1)}[reward]
        assert got[f"player_{seat}"] == expected


def test_an_unknown_reward_or_option_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="unknown reward 'points'"):
        aec_env("twisted", 2, reward="points")
    with pytest.raises(engine.InvalidOptions, match="unknown option"):
        gymnasium.make("twistarena/Twhist-v0", num_players=3, roundz=1)


def test_simultaneous_reserve_choices_are_held_back_until_all_are_in() -> None:
    env = aec_env("tricky_twist", 3)
    env.reset(seed=1)
    state = env.turns.state
    assert len(state.to_act()) == 3  # TT-3.3: every seat picks its reserve at once
    before = {a: env.observe(a)["observation"] for a in env.agents}
    order = []
    for _ in range(3):
        agent = env.agent_selection
        order.append(agent)
        for other in env.agents:  # nobody sees a choice of this step yet
            assert np.array_equal(env.observe(other)["observation"], before[other])
        env.step(int(np.flatnonzero(env.observe(agent)["action_mask"])[0]))
    assert order == ["player_0", "player_1", "player_2"]
    counts = [p["reserve_count"] for p in state.observation(0)["players"]]
    assert counts == [1, 1, 1]  # all three applied together once the last was in
    assert env.agent_selection == "player_0"  # the next step of picks
    env.step(int(np.flatnonzero(env.observe("player_0")["action_mask"])[0]))
    with pytest.raises(engine.IllegalAction, match="already chosen"):
        env.turns.play(0, state.legal_action_ids(0)[0])


@pytest.mark.parametrize(("game_id", "players", "options"), CASES, ids=IDS)
def test_gymnasium_check_env(game_id: str, players: int, options: dict[str, Any]) -> None:
    env_id = next(i for i, g in ENV_IDS.items() if g == game_id)
    check_env(gymnasium.make(env_id, num_players=players, opponents="random",
                             **options).unwrapped)


def test_gymnasium_one_seat_against_heuristic_house_bots() -> None:
    env = gymnasium.make("twistarena/Twisted-v0", num_players=3, opponents="heuristic",
                         rounds=1)
    obs, _ = env.reset(seed=7)
    total, done, steps = 0.0, False, 0
    while not done:
        assert obs["action_mask"].any()
        obs, reward, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        total += float(reward)
        steps += 1
    assert steps > 5 and len(info["scores"]) == 3 and -1.0 <= total <= 1.0
    obs, _ = env.reset(seed=7)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    assert env.step(illegal)[1:] == (-1.0, True, False, {"illegal": True})


def _first_legal_episode(env: Any) -> list[Any]:
    """The learner always takes its first legal action; what it sees each step."""
    seen, done = [], False
    obs = env._observe()
    while not done:
        obs, reward, done, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        seen.append((obs["observation"].tobytes(), reward))
    return seen


@pytest.mark.parametrize("opponents", ["random", "heuristic"])
@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_a_copied_or_pickled_gymnasium_env_has_its_own_house_bots(env_id: str,
                                                                  opponents: str) -> None:
    """A copy's house bots draw from their own random streams: playing the copy
    leaves the original's opponents' moves as they would have been."""
    env = gymnasium.make(env_id, num_players=3, opponents=opponents).unwrapped
    env.reset(seed=11)
    twin = copy.deepcopy(env)
    thawed = pickle.loads(pickle.dumps(env))
    played_by_copy = _first_legal_episode(twin)
    played_by_pickle = _first_legal_episode(thawed)
    assert _first_legal_episode(env) == played_by_copy == played_by_pickle


def test_the_gymnasium_ids_are_declared_as_entry_points() -> None:
    points = importlib.metadata.entry_points(group="gymnasium.envs")
    assert [p.value for p in points if p.name == "twistarena"] == [
        "twistarena.rl.gym:register_envs"]
    env = gymnasium.make("twistarena.rl:twistarena/Twhist-v0", num_players=4)
    assert env.unwrapped.num_players == 4  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def spiel() -> list[str]:
    return register_openspiel()


def _game_string_options(options: dict[str, Any]) -> str:
    return ";".join(f"{k}:{json.dumps(v)}" for k, v in options.items())


@pytest.mark.parametrize(("game_id", "players", "options"), CASES, ids=IDS)
def test_openspiel_random_sim_test(spiel: list[str], game_id: str, players: int,
                                   options: dict[str, Any]) -> None:
    game = pyspiel.load_game(f"twistarena_{game_id}",
                             {"players": players, "options": _game_string_options(options)})
    assert game.num_players() == players
    assert game.num_distinct_actions() == num_distinct_actions(game_id)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_openspiel_tensors_are_the_seats_tensors(spiel: list[str]) -> None:
    game = pyspiel.load_game("twistarena_twhist", {"players": 4})
    state = game.new_initial_state()
    for byte in (1, 2, 3, 4):
        assert state.is_chance_node()
        state.apply_action(byte)
    enc = encoder("twhist", 4)
    engine_state = engine.make("twhist", 4, int.from_bytes(bytes([1, 2, 3, 4]), "big"))
    for seat in range(4):
        expected = enc.encode(engine_state.observation(seat))
        assert np.array_equal(np.array(state.observation_tensor(seat), np.float32), expected)
        assert np.array_equal(np.array(state.information_state_tensor(seat), np.float32),
                              expected)
    assert parse_options("rounds:1;hand_size.2:5") == {"rounds": 1, "hand_size": {"2": 5}}


@pytest.mark.parametrize(("game_id", "players", "options"), CASES, ids=IDS)
def test_openspiel_python_answers_are_the_cpp_ones(spiel: list[str], game_id: str,
                                                   players: int, options: dict[str, Any]) -> None:
    """The state answers ``legal_actions`` and ``is_chance_node`` in Python as well:
    at every node of a random match, for every player and a pseudo-player, they
    are what OpenSpiel's C++ gives (``pyspiel.State``'s own methods)."""
    game = pyspiel.load_game(f"twistarena_{game_id}",
                             {"players": players, "options": _game_string_options(options)})
    rng = random.Random(7)
    state = game.new_initial_state()
    while True:
        assert state.is_chance_node() == pyspiel.State.is_chance_node(state)
        assert state.legal_actions() == pyspiel.State.legal_actions(state)
        for player in (*range(players), pyspiel.PlayerId.CHANCE):
            try:
                expected = pyspiel.State.legal_actions(state, player)
            except pyspiel.SpielError as cpp_error:
                with pytest.raises(pyspiel.SpielError, match=str(cpp_error)):
                    state.legal_actions(player)
            else:
                assert state.legal_actions(player) == expected
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))


def test_openspiel_clones_share_nothing_that_changes(spiel: list[str]) -> None:
    """A clone (of an initial state, in the seed draw, in play) and the state it was
    made from go their own ways: moves on one leave the other as it was."""
    game = pyspiel.load_game("twistarena_twisted", {"players": 3, "options": "rounds:1"})
    rng = random.Random(3)
    state = game.new_initial_state()
    fresh = game.new_initial_state()
    while not state.is_terminal():
        copied = state.clone()
        before = (str(state), state.history(), state.legal_actions(),
                  state.observation_tensor(state.current_player())
                  if not state.is_chance_node() else None)
        copied.apply_action(rng.choice(copied.legal_actions()))
        assert (str(state), state.history(), state.legal_actions(),
                state.observation_tensor(state.current_player())
                if not state.is_chance_node() else None) == before
        state.apply_action(rng.choice(state.legal_actions()))
        assert copied.history() != state.history() or str(copied) == str(state)
    assert fresh.is_chance_node() and fresh.history() == []
    assert str(fresh) == str(game.new_initial_state())


@pytest.mark.parametrize(("game_id", "players", "options"), CASES, ids=IDS)
def test_openspiel_our_clone_is_openspiels_clone(spiel: list[str], game_id: str, players: int,
                                                 options: dict[str, Any]) -> None:
    """At every node of a random match, our ``clone()`` (a new state, the match's
    copy, OpenSpiel's C++ history copied in) and OpenSpiel's own give the same
    state: history with players, move number, what is shown, what may be played,
    the serialized form, and the same state again after the same next move."""
    game = pyspiel.load_game(f"twistarena_{game_id}",
                             {"players": players, "options": _game_string_options(options)})
    assert spielhistory.enabled()  # this build copies the history itself (probed by now)
    rng = random.Random(11)
    state = game.new_initial_state()

    def seen(s: Any) -> tuple[Any, ...]:
        return ([(h.player, h.action) for h in s.full_history()], s.history_str(),
                s.move_number(), s.current_player(), s.legal_actions(), str(s),
                s.is_initial_state(), pyspiel.serialize_game_and_state(game, s))

    while True:
        ours, theirs = state.clone(), pyspiel.State.clone(state)
        assert type(ours) is type(state)
        assert seen(ours) == seen(theirs) == seen(state)
        if state.is_terminal():
            assert ours.returns() == theirs.returns() == state.returns()
            break
        action = rng.choice(state.legal_actions())
        ours.apply_action(action)
        theirs.apply_action(action)
        assert seen(ours) == seen(theirs) != seen(state)
        state.apply_action(action)


def test_openspiel_history_copy_refuses_what_is_not_our_state(spiel: list[str]) -> None:
    """The C++ copy writes into OpenSpiel's objects: it takes only two of our
    states, and our ``clone()`` falls back to OpenSpiel's where it is off."""
    game = pyspiel.load_game("twistarena_twhist", {"players": 3})
    state = game.new_initial_state()
    for byte in (9, 8, 7, 6):
        state.apply_action(byte)
    hearts = pyspiel.load_game("hearts").new_initial_state()
    assert spielhistory.copy is not None
    with pytest.raises(TypeError, match="two of our OpenSpiel states"):
        spielhistory.copy(hearts, state)
    with pytest.raises(TypeError, match="two of our OpenSpiel states"):
        spielhistory.copy(state, object())
    spielhistory.use(False)
    try:
        assert not spielhistory.enabled()
        assert state.clone().history() == state.history() == [9, 8, 7, 6]
    finally:
        spielhistory.use(True)
    assert spielhistory.enabled()


def test_openspiels_mcts_bot_plays_a_match(spiel: list[str]) -> None:
    game = pyspiel.load_game("twistarena_twisted",
                             {"players": 2, "options": "rounds:1;hand_size.2:4"})
    rng = np.random.RandomState(0)
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=10,
                       evaluator=mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    state = game.new_initial_state()
    assert _bot_in_seat_0_against_random(state, bot, rng) >= 5
    assert sorted(state.returns()) == [-1.0, 1.0]


def _bot_in_seat_0_against_random(state: Any, bot: Any, rng: np.random.RandomState,
                                  before_step: Any = None) -> int:
    """Play ``state`` to its end, ``bot`` in seat 0 (``before_step(state)`` first at
    each of its decisions), random legal actions elsewhere; seat 0's decisions."""
    searched = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = [a for a, _ in state.chance_outcomes()]
            state.apply_action(int(rng.choice(outcomes)))
        elif state.current_player() == 0:
            if before_step is not None:
                before_step(state)
            action = bot.step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            searched += 1
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    return searched


#: one short case of each game
ONE_PER_GAME = [case for case in CASES if case[:2] in
                {("tricky_twist", 3), ("twisted", 3), ("twhist", 4)}]


@pytest.mark.parametrize(("game_id", "players", "options"), ONE_PER_GAME,
                         ids=[c[0] for c in ONE_PER_GAME])
def test_openspiels_ismcts_bot_plays_every_game(spiel: list[str], game_id: str, players: int,
                                                options: dict[str, Any]) -> None:
    """``resample_from_infostate`` gives worlds the searcher cannot tell from the real
    one (the same information state string, its own hand kept, every card still
    somewhere), so OpenSpiel's ISMCTSBot plays a whole match against random seats.
    Other seats' hands differ between worlds, so their legal actions do too."""
    game = pyspiel.load_game(f"twistarena_{game_id}",
                             {"players": players, "options": _game_string_options(options)})
    rng = np.random.RandomState(0)
    bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rng), uct_c=2.0,
                           max_simulations=4, random_state=rng,
                           allow_inconsistent_action_sets=True)
    def the_same_to_seat_0(state: Any) -> None:
        world = state.resample_from_infostate(0, pyspiel.UniformProbabilitySampler(0., 1.))
        assert world.information_state_string(0) == state.information_state_string(0)
        assert world.observation_tensor(0) == state.observation_tensor(0)
        assert world.legal_actions(0) == state.legal_actions(0)
        # OpenSpiel's own record of the path there is the real one's.
        assert world.history() == state.history()
        assert world.move_number() == state.move_number()

    state = game.new_initial_state()
    assert _bot_in_seat_0_against_random(state, bot, rng, the_same_to_seat_0) >= 3
    assert len(state.returns()) == players
