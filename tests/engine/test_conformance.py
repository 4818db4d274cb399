"""Every game passes the generic engine contract, for every player count."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twistarena import engine

from .conformance import playout

CASES = [
    (info.id, n)
    for info in engine.games()
    for n in range(info.min_players, info.max_players + 1)
]


@pytest.mark.parametrize(("game_id", "num_players"), CASES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**63 - 1))
def test_random_playouts_keep_the_contract(game_id: str, num_players: int, seed: int) -> None:
    playout(game_id, num_players, seed)


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_games_lists_ranges_and_defaults(game_id: str) -> None:
    info = engine.game(game_id)
    assert 2 <= info.min_players <= info.max_players <= 5
    assert info.to_json()["defaults"] == dict(info.defaults)


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_bad_setup_is_refused(game_id: str) -> None:
    info = engine.game(game_id)
    for n in (info.min_players - 1, info.max_players + 1, "4", True):
        with pytest.raises(engine.InvalidOptions):
            engine.make(game_id, n, 1)  # type: ignore[arg-type]
    with pytest.raises(engine.InvalidOptions, match="unknown option"):
        engine.make(game_id, info.min_players, 1, {"no_such_option": 1})


def test_unknown_game_names_the_known_ones() -> None:
    with pytest.raises(engine.InvalidOptions, match="tricky_twist"):
        engine.make("chess", 2, 1)


@pytest.mark.parametrize(("game_id", "num_players"), CASES)
def test_equal_vocabulary_versions_label_alike_across_matches(game_id: str,
                                                              num_players: int) -> None:
    """The server shares one action vocabulary among matches of the same game, player
    count and options: there, an equal ``vocabulary_version`` must mean the same
    label and payload for an action id, whichever match, seat or moment."""
    import random

    seen: dict[tuple[object, int], tuple[str, object]] = {}
    rng = random.Random(f"{game_id}{num_players}")
    for seed in range(6):
        state = engine.make(game_id, num_players, seed)
        while not state.is_terminal():
            acting = state.to_act()
            version = state.vocabulary_version()
            for seat in acting:
                for action_id in state.legal_action_ids(seat):
                    action = state.describe(seat, action_id)
                    described = (action.label, dict(action.payload))
                    known = seen.setdefault((version, action_id), described)
                    assert known == described, (seed, version, action_id)
            seat = rng.choice(acting)
            state.apply(seat, rng.choice(state.legal_action_ids(seat)))
    assert seen


@pytest.mark.parametrize(("game_id", "num_players"), CASES)
def test_the_seed_alone_decides_the_deal(game_id: str, num_players: int) -> None:
    """A state keeps the seed it was made with, and two states made with one seed
    show every seat the same: the deal comes from the seed, nothing else."""
    first = engine.make(game_id, num_players, 1234)
    second = engine.make(game_id, num_players, 1234)
    assert first.seed == second.seed == 1234
    assert ([first.observation(s) for s in range(num_players)]
            == [second.observation(s) for s in range(num_players)])


@pytest.mark.parametrize(("game_id", "num_players"), CASES)
def test_a_determinized_world_leaves_the_seat_to_act_its_choices(game_id: str,
                                                                 num_players: int) -> None:
    """``determinize(seat)`` re-deals only what ``seat`` cannot see, so the seat to
    act has the same legal actions in the world as in the real match (a search
    bot plays them there), at every step of a random match."""
    import random

    rng = random.Random(f"worlds{game_id}{num_players}")
    state = engine.make(game_id, num_players, 7)
    step = 0
    while not state.is_terminal():
        seat = state.to_act()[0]
        world = state.determinize(seat, random.Random(step))
        assert list(world.legal_action_ids(seat)) == list(state.legal_action_ids(seat)), step
        state.apply(seat, rng.choice(state.legal_action_ids(seat)))
        step += 1


#: The cases of the parts' contract: every game at its defaults, and Twhist with
#: the Twhist cards hidden (TH-2.2: then a seat's part shows its own cards only
#: to itself, so the slots depend on who asks).
TWHIST_HIDDEN: dict[str, object] = {"twhist_visible": False}
PART_CASES: list[tuple[str, int, dict[str, object]]] = [
    *((game_id, n, {}) for game_id, n in CASES),
    *(("twhist", n, TWHIST_HIDDEN) for n in (3, 4))]


@pytest.mark.parametrize(("game_id", "num_players", "options"), PART_CASES)
def test_an_unchanged_part_version_means_an_unchanged_part(
        game_id: str, num_players: int, options: dict[str, object]) -> None:
    """Callers keep what they built from an observation part while its version holds
    (``State.observation_slots``): at every step of random matches, for every seat,
    a part at a version it had before must be what it was then (a version is never
    used again for other contents; None is never kept), and the parts together
    must still be the whole observation."""
    import random

    rng = random.Random(f"parts{game_id}{num_players}{sorted(options.items())}")
    for seed in range(4):
        state = engine.make(game_id, num_players, seed, options)
        seen: dict[tuple[int, object, object], object] = {}
        while True:
            for seat in range(num_players):
                merged: dict[str, object] = {}
                for slot, version in state.observation_slots(seat):
                    part = state.observation_part(seat, slot)
                    if version is not None:
                        before = seen.setdefault((seat, slot, version), part)
                        assert part == before, (seed, seat, slot, version)
                    for key, value in part.items():
                        if key in merged:
                            merged[key] = [*merged[key], *value]  # type: ignore[misc]
                        else:
                            merged[key] = value
                assert merged == state.observation(seat)
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_action_ids(seat)))
