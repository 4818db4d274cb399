"""Building Tricky Twist positions directly, so a test states exactly the cards it needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from twistarena import engine
from twistarena.engine.tricky_twist import state as st
from twistarena.engine.tricky_twist.cards import DECK_SIZE, card_id


def c(spec: str) -> int:
    """``"7 sun"`` -> card id."""
    value, family = spec.split()
    return card_id(family, int(value))


def cs(*specs: str) -> list[int]:
    return [c(s) for s in specs]


def new(n: int = 4, seed: int = 1, options: Mapping[str, Any] | None = None) -> st.TrickyTwistState:
    state = engine.make("tricky_twist", n, seed, options)
    assert isinstance(state, st.TrickyTwistState)
    return state


def play_position(state: st.TrickyTwistState, hands: Sequence[Sequence[int]], leader: int,
                  reserves: Sequence[Sequence[int]] | None = None,
                  false: Mapping[int, Sequence[int]] | None = None,
                  scoring_card: str | None = None) -> st.TrickyTwistState:
    """Put ``state`` at the start of a trick (reserve window if any reserve is set).
    Cards not placed go to the box, so card conservation still holds."""
    n = state.num_players
    state.hands = [sorted(h) for h in hands]
    state.reserves = [list(r) for r in (reserves or [[] for _ in range(n)])]
    state.false = [[st._card_false(x) for x in (false or {}).get(s, ())] for s in range(n)]
    state.tricks = [[] for _ in range(n)]
    state.known = [[] for _ in range(n)]
    state.held = [[] for _ in range(n)]
    state.supply = list(range(8))
    state.out = []
    used = {x for h in state.hands for x in h} | {x for r in state.reserves for x in r} | {
        x for f in state.false for t in f for x in t[2]}
    state.box = [x for x in range(DECK_SIZE) if x not in used]
    state.trick = []
    state.picks = []
    if scoring_card is not None:
        state.reveal(scoring_card)
    state._cache_seat = -1
    state._start_trick(leader)
    return state


def end_position(state: st.TrickyTwistState, scoring_card: str,
                 tricks: Mapping[int, Sequence[Sequence[int]]] | None = None,
                 false: Mapping[int, Sequence[int]] | None = None,
                 held: Mapping[int, Sequence[int]] | None = None,
                 first_player: int = 0) -> st.TrickyTwistState:
    """Put ``state`` at the end of its round (TT-5.6) with the given tricks, false
    tricks and held bonus cards; the end-of-round choices (TT-6.5) start at once."""
    n = state.num_players
    state.reveal(scoring_card)
    state.first_player = first_player
    state.tricks = [[tuple(t) for t in (tricks or {}).get(s, ())] for s in range(n)]
    state.false = [[st._card_false(x) for x in (false or {}).get(s, ())] for s in range(n)]
    state.held = [list((held or {}).get(s, ())) for s in range(n)]
    state.supply = [b for b in range(8) if all(b not in h for h in state.held)]
    used = {x for ts in state.tricks for t in ts for x in t} | {
        x for f in state.false for t in f for x in t[2]}
    state.hands = [[] for _ in range(n)]
    state.reserves = [[] for _ in range(n)]
    state.known = [[] for _ in range(n)]
    state.trick = []
    state.box = [x for x in range(DECK_SIZE) if x not in used]
    state._cache_seat = -1
    state._start_end_bonuses()
    return state


def act(state: st.TrickyTwistState, seat: int, action_id: int) -> None:
    assert seat in state.to_act(), (seat, state.to_act(), state.phase)
    state.apply(seat, action_id)


def finish_reserves(state: st.TrickyTwistState) -> None:
    """Every seat puts its lowest cards in its reserve (TT-3.3)."""
    while state.phase == st.RESERVE:
        seat = state.to_act()[0]
        act(state, seat, state.legal_action_ids(seat)[0])
