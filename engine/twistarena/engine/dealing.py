"""Re-dealing hidden cards for ``State.determinize``, shared by the trick games.

A seat that failed to follow a suit has shown everyone it holds none of it; a
re-deal that ignored this would hand search bots impossible worlds. The deal is
uniform among consistent ones (rejection sampling) and falls back to a
bipartite matching when constraints are tight; the true deal proves one exists.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def deal_hidden(pool: Sequence[int], places: Sequence[tuple[int, int]],
                suit_of: Sequence[int], rng: random.Random, tries: int = 20) -> list[list[int]]:
    """Split ``pool`` at random into ``places`` given as (size, void suit mask).

    Only the set of ``pool`` matters (it is sorted first), so the result depends on
    what the observer knows and on ``rng``, never on where the cards really lie.
    """
    cards = sorted(pool)
    constrained = any(mask for _, mask in places)
    for _ in range(tries if constrained else 1):
        rng.shuffle(cards)
        if not constrained or _respects(cards, places, suit_of):
            break
    else:
        cards = _match(cards, places, suit_of)
    out: list[list[int]] = []
    at = 0
    for size, _ in places:
        out.append(cards[at:at + size])
        at += size
    return out


def _respects(cards: Sequence[int], places: Sequence[tuple[int, int]],
              suit_of: Sequence[int]) -> bool:
    at = 0
    for size, mask in places:
        if mask and any(mask >> suit_of[c] & 1 for c in cards[at:at + size]):
            return False
        at += size
    return True


def _match(cards: list[int], places: Sequence[tuple[int, int]],
           suit_of: Sequence[int]) -> list[int]:
    """Some assignment of ``cards`` to the places' slots that respects every void
    (augmenting paths over slots)."""
    slots = [i for i, (size, _) in enumerate(places) for _ in range(size)]
    owner: list[int] = [-1] * len(slots)  # slot -> index into cards

    def place(ci: int, seen: set[int]) -> bool:
        for si, pi in enumerate(slots):
            if si in seen or places[pi][1] >> suit_of[cards[ci]] & 1:
                continue
            seen.add(si)
            if owner[si] < 0 or place(owner[si], seen):
                owner[si] = ci
                return True
        return False

    for ci in range(len(cards)):
        place(ci, set())
    return [cards[ci] for ci in owner]
