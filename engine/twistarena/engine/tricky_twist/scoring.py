"""Round scoring of Tricky Twist (TT-7), as pure functions of counts and false tricks.

Shared by the engine and by bots that estimate their score. A false trick is a
``(family, value)`` pair; -1 stands for "no family" / "no value" (TT-7.4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

FalseTrick = tuple[int, int]

#: scoring cards that rank players against each other (TT-7.5, TT-7.6)
RANKED: Final = ("fewest_false_tricks", "most_false_tricks")
#: the two families of each "chosen family" card
CHOSEN_FAMILIES: Final[dict[str, tuple[int, int]]] = {
    "chosen_moon_sun": (0, 1),
    "chosen_square_circle": (2, 3),
}


def base_stars(tricks: int, false_tricks: int, pair: int = 3, balanced_pair: int = 5) -> int:
    """TT-7.2: T stars plus min(T, F) pairs at 3 stars each, or 5 when T == F."""
    pairs = min(tricks, false_tricks)
    return tricks + pairs * (balanced_pair if tricks == false_tricks else pair)


def table_stars(table: Sequence[int], count: int) -> int:
    """TT-7.5: index = count; the last entry applies to any larger count."""
    return table[min(count, len(table) - 1)]


def longest_run(values: Sequence[int]) -> int:
    """TT-7.5: length of the longest run of consecutive values, duplicates once."""
    present = {v for v in values if v > 0}
    best = 0
    for v in present:
        if v - 1 not in present:
            n = 1
            while v + n in present:
                n += 1
            best = max(best, n)
    return best


def family_counts(false_tricks: Sequence[FalseTrick]) -> list[int]:
    counts = [0, 0, 0, 0]
    for family, _ in false_tricks:
        if family >= 0:
            counts[family] += 1
    return counts


def card_count(card: str, false_tricks: Sequence[FalseTrick]) -> int:
    """The count a non-ranked scoring card looks at (TT-7.4, TT-7.5).

    "Chosen family" takes the better of its two families: the choice is the
    holder's and is never worse than the best one, so it needs no decision.
    """
    if card == "longest_run":
        return longest_run([v for _, v in false_tricks])
    if card in CHOSEN_FAMILIES:
        counts = family_counts(false_tricks)
        a, b = CHOSEN_FAMILIES[card]
        return max(counts[a], counts[b])
    if card == "largest_family":
        return max(family_counts(false_tricks))
    if card == "distinct_families":
        return sum(1 for n in family_counts(false_tricks) if n)
    if card == "even_values":
        return sum(1 for _, v in false_tricks if v > 0 and v % 2 == 0)
    if card == "odd_values":
        return sum(1 for _, v in false_tricks if v > 0 and v % 2 == 1)
    raise ValueError(f"unknown scoring card {card!r}")


def place_stars(counts: Sequence[int], most_first: bool, stars: Sequence[int]) -> list[int]:
    """TT-7.6: rank the players with at least one false trick; equal counts share a
    place and the next different count takes the next place; no false trick: 0."""
    distinct = sorted({n for n in counts if n > 0}, reverse=most_first)
    return [table_stars(stars, distinct.index(n)) if n > 0 else 0 for n in counts]


def scoring_card_stars(card: str, false_tricks: Sequence[Sequence[FalseTrick]],
                       options: Mapping[str, Any]) -> list[int]:
    """Stars of the round's scoring card for every seat (TT-7.3..7.6)."""
    if card in RANKED:
        counts = [len(f) for f in false_tricks]
        return place_stars(counts, card == "most_false_tricks", options["place_stars"])
    table = options["star_tables"][card]
    return [table_stars(table, card_count(card, f)) for f in false_tricks]
