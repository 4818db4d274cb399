"""Every game option has a sane range, so no option makes a match endless or huge.

Issue item 5: Twisted ``rounds: 1e9`` made a match that never ends. The
engine refuses any number outside its option's range, and any list or text
longer than a bound, when the match is made.
"""

from __future__ import annotations

from typing import Any

import pytest
from twistarena import engine
from twistarena.engine.options import MAX_LIST, MAX_TEXT


def _has_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, list):
        return any(_has_int(v) for v in value)
    if isinstance(value, dict):
        return any(_has_int(v) for v in value.values())
    return False


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_every_numeric_option_has_a_range_that_holds_its_default(game_id: str) -> None:
    info = engine.game(game_id)
    numeric = {k for k, v in info.defaults.items() if _has_int(v)}
    assert numeric == set(info.option_ranges), "a range for each numeric option, no other"
    for players in range(info.min_players, info.max_players + 1):
        engine.make(game_id, players, 1)  # the defaults lie within their ranges


@pytest.mark.parametrize(("game_id", "players", "overrides", "named"), [
    ("twisted", 2, {"rounds": 10**9}, "'rounds' must be within 1..20"),
    ("twisted", 2, {"rounds": 0}, "'rounds' must be within 1..20"),
    ("twisted", 2, {"toad_penalty": 2**40}, "'toad_penalty'"),
    ("twisted", 2, {"hand_size": {"2": 10**6}}, "'hand_size.2'"),
    ("tricky_twist", 3, {"star_tables": {"longest_run": [0, 1, 10**9]}},
     "'star_tables.longest_run[2]'"),
    ("tricky_twist", 3, {"place_stars": [12] * (MAX_LIST + 1)}, "more than"),
    ("twhist", 3, {"flip_max": 10**6}, "'flip_max'"),
    ("twhist", 3, {"colours": ["x" * (MAX_TEXT + 1), "b", "c", "d"]}, "longer than"),
])
def test_options_out_of_range_are_refused_by_name(game_id: str, players: int,
                                                   overrides: dict[str, Any],
                                                   named: str) -> None:
    with pytest.raises(engine.InvalidOptions, match=named.replace("[", r"\[")
                       .replace("]", r"\]").replace(".", r"\.")):
        engine.make(game_id, players, 1, overrides)


def test_the_bounds_themselves_are_allowed() -> None:
    state = engine.make("twisted", 2, 1, {"rounds": 20, "toad_penalty": 50})
    assert state.options["rounds"] == 20


def _scramble(value: Any) -> None:
    """Change every list and table inside ``value`` in place."""
    if isinstance(value, list):
        for item in value:
            _scramble(item)
        value.append(0)
    elif isinstance(value, dict):
        for item in value.values():
            _scramble(item)
        value["scrambled"] = True


@pytest.mark.parametrize("game_id", engine.GAME_IDS)
def test_a_match_s_options_share_nothing_with_the_defaults(game_id: str) -> None:
    # The defaults are copied, not range-checked again, for each match: a match
    # that changes its options in place must not change the next match's.
    info = engine.game(game_id)
    players = info.min_players
    before = engine.make(game_id, players, 1).options
    scrambled = engine.make(game_id, players, 2)
    _scramble(scrambled.options)
    assert scrambled.options != before
    after = engine.make(game_id, players, 3).options
    assert after == before
