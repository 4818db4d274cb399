"""The Twisted deck as precomputed tables, so rule checks are list lookups."""

from __future__ import annotations

from typing import Final

#: TW-1.1: 12..98 without the multiples of 10 (no 0 digit, so no 11 or 99 either).
DECK: Final[tuple[int, ...]] = tuple(c for c in range(12, 99) if c % 10 != 0)

#: TW-1.2: the seven toads, same digit twice; they have no twist partner.
TOADS: Final[frozenset[int]] = frozenset(c for c in DECK if c // 10 == c % 10)

#: Index = card number (0..99). True for toads.
IS_TOAD: Final[tuple[bool, ...]] = tuple(c in TOADS for c in range(100))

#: Index = card number; the twist partner ab -> ba (TW-1.2), or -1 (toads, non-cards).
PARTNER: Final[tuple[int, ...]] = tuple(
    (c % 10) * 10 + c // 10 if c in DECK and c not in TOADS else -1 for c in range(100)
)


def is_card(number: int) -> bool:
    """True if ``number`` is printed on a card of the deck."""
    return 0 <= number < 100 and number in _DECK_SET


_DECK_SET: Final = frozenset(DECK)
