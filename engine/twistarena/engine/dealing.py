"""Dealing hidden cards at random, shared by ``State.determinize`` and the samplers.

A seat that failed to follow a suit has shown everyone it holds none of it; a
deal that ignored this would hand search bots impossible worlds. Every deal
consistent with the shown voids is equally likely: rejection sampling first
(cheap, and exact when it succeeds), and when the voids are too tight for it an
exact sampler that counts the consistent deals suit by suit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from math import comb


def deal_hidden(pool: Sequence[int], places: Sequence[tuple[int, int]],
                suit_of: Sequence[int], rng: random.Random, tries: int = 20) -> list[list[int]]:
    """Split ``pool`` at random into ``places`` given as (size, void suit mask).

    Only the set of ``pool`` matters (it is sorted first), so the result depends on
    what the observer knows and on ``rng``, never on where the cards really lie.
    Raises ``ValueError`` when the sizes do not add up or no deal respects the voids.
    """
    cards = sorted(pool)
    if sum(size for size, _ in places) != len(cards):
        raise ValueError(f"{len(cards)} hidden cards do not fill places of sizes "
                         f"{[size for size, _ in places]}")
    constrained = any(mask for _, mask in places)
    for _ in range(tries if constrained else 1):
        rng.shuffle(cards)
        if not constrained or _respects(cards, places, suit_of):
            return _split(cards, places)
    # Places with the same voids are alike for the constraints: deal to each group
    # as one place, then split its share at random (uniform given the group's set).
    masks = sorted({mask for _, mask in places})
    merged = [(sum(size for size, m in places if m == mask), mask) for mask in masks]
    shares = _exact(cards, merged, suit_of, rng)
    out: list[list[int]] = []
    at = [0] * len(masks)
    for size, mask in places:
        g = masks.index(mask)
        out.append(shares[g][at[g]:at[g] + size])
        at[g] += size
    return out


def _split(cards: Sequence[int], places: Sequence[tuple[int, int]]) -> list[list[int]]:
    out: list[list[int]] = []
    at = 0
    for size, _ in places:
        out.append(list(cards[at:at + size]))
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


def _exact(cards: list[int], places: Sequence[tuple[int, int]], suit_of: Sequence[int],
           rng: random.Random) -> list[list[int]]:
    """A uniform deal among those that respect every void.

    Cards of one suit are alike for the constraints, so a deal is a count per
    (suit, place) times which cards of the suit go where. The number of
    consistent deals is counted suit by suit over the places' remaining room;
    the counts are then drawn one suit at a time in proportion to the deals
    that each choice leaves, and the cards of each suit are shuffled into them.
    """
    suits = sorted({suit_of[c] for c in cards})
    by_suit = [[c for c in cards if suit_of[c] == s] for s in suits]
    masks = tuple(mask for _, mask in places)
    allowed = tuple(tuple(p for p, m in enumerate(masks) if not m >> s & 1) for s in suits)
    sizes = tuple(len(group) for group in by_suit)

    def ways(index: int, room: tuple[int, ...]) -> int:
        return _ways(sizes, allowed, index, room)

    room = tuple(size for size, _ in places)
    if not ways(0, room):
        raise ValueError("no deal of the hidden cards respects the shown voids")
    out: list[list[int]] = [[] for _ in places]
    for index, group in enumerate(by_suit):
        options = _splits_with_counts(sizes[index], allowed[index], room)
        weights = [w * ways(index + 1, rest) for w, rest, _ in options]
        pick = rng.randrange(sum(weights))
        chosen = 0
        while pick >= weights[chosen]:
            pick -= weights[chosen]
            chosen += 1
        _, rest, counts = options[chosen]
        group = list(group)
        rng.shuffle(group)
        at = 0
        for place, count in counts:
            out[place] += group[at:at + count]
            at += count
        room = rest
    for part in out:  # an order within each place (a draw pile, a reserve) is hidden too
        rng.shuffle(part)
    return out


@lru_cache(maxsize=1 << 16)
def _ways(sizes: tuple[int, ...], allowed: tuple[tuple[int, ...], ...], index: int,
          room: tuple[int, ...]) -> int:
    """Deals of the suits from ``index`` on into ``room`` that respect the voids.

    Kept across calls: a search determinizes the same information set again and
    again, and counting its deals is the costly part."""
    if index == len(sizes):
        return 1 if not any(room) else 0
    return sum(w * _ways(sizes, allowed, index + 1, rest)
               for w, rest, _ in _splits_with_counts(sizes[index], allowed[index], room))


Split = tuple[int, tuple[int, ...], tuple[tuple[int, int], ...]]


@lru_cache(maxsize=1 << 14)
def _splits_with_counts(k: int, allowed: tuple[int, ...], room: tuple[int, ...]
                        ) -> tuple[Split, ...]:
    """Every way to put ``k`` alike-for-constraints cards into the ``allowed`` places
    within their ``room``: (number of card assignments, room left, (place, count)s)."""
    out: list[Split] = []

    def go(i: int, left: int, weight: int, rest: list[int], counts: list[tuple[int, int]]) -> None:
        if i == len(allowed):
            if not left:
                out.append((weight, tuple(rest), tuple(counts)))
            return
        place = allowed[i]
        for n in range(min(left, rest[place]) + 1):
            rest[place] -= n
            counts.append((place, n))
            go(i + 1, left - n, weight * comb(left, n), rest, counts)
            counts.pop()
            rest[place] += n

    go(0, k, 1, list(room), [])
    return tuple(out)
