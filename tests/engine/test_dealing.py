"""Dealing hidden cards (engine/dealing.py): every deal respects the shown voids,
keeps every card exactly once, and all consistent deals are equally likely.

Voids come from the rules (TT-4.3, TH-3.3: a seat that did not follow holds none
of that suit). The cases are small enough to count their deals by hand.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from twistarena.engine.dealing import deal_hidden

#: cards 0..5; suit of each card: 0, 0, 1, 1, 2, 2
SUIT = [0, 0, 1, 1, 2, 2]
POOL = [5, 3, 1, 0, 4, 2]  # any order: only the set matters


def respects(hands: list[list[int]], places: list[tuple[int, int]]) -> bool:
    return all(len(h) == size and not any(mask >> SUIT[c] & 1 for c in h)
               for h, (size, mask) in zip(hands, places, strict=True))


def first_respecting_shuffle(seed: int, places: list[tuple[int, int]],
                             tries: int = 20) -> list[list[int]] | None:
    """What rejection sampling deals: the first of ``tries`` shuffles that respects."""
    rng = random.Random(seed)
    cards = sorted(POOL)
    for _ in range(tries):
        rng.shuffle(cards)
        hands, at = [], 0
        for size, _ in places:
            hands.append(cards[at:at + size])
            at += size
        if respects(hands, places):
            return hands
    return None


def test_without_voids_one_shuffle_is_the_deal() -> None:
    places = [(2, 0), (1, 0), (3, 0)]
    for seed in range(20):
        assert deal_hidden(POOL, places, SUIT, random.Random(seed)) == \
            first_respecting_shuffle(seed, places, tries=1)


def test_rejection_sampling_takes_the_first_of_twenty_shuffles_that_respects() -> None:
    """Seat 0 (two cards) holds no suit 0 and no suit 1: only 1 shuffle in 15 respects
    that, so some seeds need several tries and some fall through to exact sampling."""
    places = [(2, 0b011), (4, 0)]
    found = exact = 0
    for seed in range(300):
        dealt = deal_hidden(POOL, places, SUIT, random.Random(seed))
        assert respects(dealt, places) and sorted(c for h in dealt for c in h) == sorted(POOL)
        expected = first_respecting_shuffle(seed, places)
        if expected is None:
            exact += 1
        else:
            found += 1
            assert dealt == expected, seed
    assert found > 200 and exact > 0


@pytest.mark.parametrize(("places", "ways"), [
    ([(2, 0b001), (2, 0b001), (2, 0)], 6),  # two places share a void: split as one group
    ([(3, 0b001), (3, 0b100)], 2),
    ([(2, 0b001), (2, 0b010), (2, 0)], 19),
    ([(1, 0b001), (1, 0b001), (2, 0b001), (2, 0)], 12),
])
def test_exact_sampling_is_uniform_over_the_consistent_deals(
        places: list[tuple[int, int]], ways: int) -> None:
    """``tries=0`` forces the exact sampler; every consistent deal comes out about
    equally often. Counted by hand: (1) the suit-0 pair must go to the third place,
    the other four cards split 2 + 2 over the first two in 4! / (2! 2!) = 6 ways;
    (2) the first place takes both suit-2 cards and one of the two suit-1 cards: 2;
    (3) with k0, k1, k2 cards of suits 0, 1, 2 in the free place (k0 + k1 + k2 = 2),
    the first place holds the other 2 - k1 suit-1 cards and k1 suit-2 cards, the
    second 2 - k0 suit-0 cards and k0 suit-2 cards: C(2, k0) C(2, k1) 2! / (k0! k1! k2!)
    deals, 1 + 1 + 1 + 8 + 4 + 4 = 19 over the six (k0, k1, k2); (4) the suit-0 pair
    goes to the last place, the four other cards split 1 + 1 + 2 over three places
    sharing one void: 4! / (1! 1! 2!) = 12."""
    seen: Counter[tuple[tuple[int, ...], ...]] = Counter()
    for seed in range(100 * ways):
        dealt = deal_hidden(POOL, places, SUIT, random.Random(seed), tries=0)
        assert respects(dealt, places)
        assert sorted(c for h in dealt for c in h) == sorted(POOL)
        seen[tuple(tuple(sorted(h)) for h in dealt)] += 1
    assert len(seen) == ways
    assert all(abs(n - 100) < 45 for n in seen.values()), seen  # 100 expected, sd ~10


def test_impossible_deals_are_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match=r"^6 hidden cards do not fill places of sizes \[2, 3\]$"):
        deal_hidden(POOL, [(2, 0), (3, 0)], SUIT, random.Random(1))
    with pytest.raises(ValueError,
                       match=r"^no deal of the hidden cards respects the shown voids$"):
        deal_hidden(POOL, [(3, 0b011), (3, 0b011)], SUIT, random.Random(1))
