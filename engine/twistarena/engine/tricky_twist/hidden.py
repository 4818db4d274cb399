"""What a Tricky Twist seat cannot see, dealt again (``State.determinize``), and
every card by zone (the conservation checks): the hidden side of the state."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ..dealing import deal_hidden
from .cards import FAMILY_OF

if TYPE_CHECKING:
    from .state import TrickyTwistState


def redeal_hidden(state: TrickyTwistState, seat: int, rng: random.Random) -> None:
    """Re-deal what ``seat`` cannot know: others' unknown hand cards, others'
    reserves, undealt cards, its own reserve order, the future scoring cards."""
    own = sorted(state.reserves[seat])  # its contents are known, not their order
    rng.shuffle(own)
    state.reserves[seat] = own
    others = [s for s in range(state.num_players) if s != seat]
    pool = list(state.box)
    places: list[tuple[int, int]] = []
    for s in others:
        hidden = [c for c in state.hands[s] if c not in state.known[s]]
        pool += hidden + state.reserves[s]
        places += [(len(hidden), state.voids[s]), (len(state.reserves[s]), 0)]
    places.append((len(state.box), 0))
    dealt = deal_hidden(pool, places, FAMILY_OF, rng)
    for i, s in enumerate(others):
        state.hands[s] = sorted(state.known[s] + dealt[2 * i])
        state.reserves[s] = dealt[2 * i + 1]
    state.box = sorted(dealt[-1])
    state._changed_all()
    future = sorted(state.scoring_deck[state.round_no + 1:])
    rng.shuffle(future)
    state.scoring_deck[state.round_no + 1:] = future
    state._cache_seat = -1


def card_zones(state: TrickyTwistState) -> dict[str, list[int]]:
    """Every physical card by zone (for conservation checks)."""
    zones: dict[str, list[int]] = {"box": list(state.box), "trick": list(state.trick)}
    for s in range(state.num_players):
        zones[f"hand_{s}"] = list(state.hands[s])
        zones[f"reserve_{s}"] = list(state.reserves[s])
        zones[f"tricks_{s}"] = [c for t in state.tricks[s] for c in t]
        zones[f"false_tricks_{s}"] = [c for f in state.false[s] for c in f[2]]
    return zones
