"""Number cards and bonus cards of Tricky Twist (TT-1).

A number card is an int id ``family * 12 + value - 1`` (0..47), so the cards of
one family are contiguous and, within a family, a higher id is a higher value.
"""

from __future__ import annotations

from typing import Any, Final

FAMILIES: Final[tuple[str, ...]] = ("moon", "sun", "square", "circle")  # TT-1.1
NUM_VALUES: Final = 12
DECK_SIZE: Final = len(FAMILIES) * NUM_VALUES
LIGHTNING_VALUE: Final = 7  # TT-1.1: each family's 7 carries the lightning icon (TT-5.4)

#: family index and value of every card id (tables: faster than arithmetic on the hot path)
FAMILY_OF: Final[tuple[int, ...]] = tuple(c // NUM_VALUES for c in range(DECK_SIZE))
VALUE_OF: Final[tuple[int, ...]] = tuple(c % NUM_VALUES + 1 for c in range(DECK_SIZE))
IS_SEVEN: Final[tuple[bool, ...]] = tuple(v == LIGHTNING_VALUE for v in VALUE_OF)
#: family name of every card id (views name the family of every card they list)
FAMILY_NAME_OF: Final[tuple[str, ...]] = tuple(FAMILIES[f] for f in FAMILY_OF)

# Bonus cards (TT-1.2, TT-6): four permanent, four variable.
TAKE_BACK, FLIP, BLANK, PLUS = 0, 1, 2, 3
VARIABLE: Final[tuple[int, ...]] = (4, 5, 6, 7)
BONUS_NAMES: Final[tuple[str, ...]] = ("take_back", "flip", "blank", "plus", "v1", "v2", "v3", "v4")
NUM_BONUS: Final = len(BONUS_NAMES)

# Kinds of variable faces (TT-6.3), in the order their holder decides them (TT-6.5).
FACE_KINDS: Final[tuple[str, ...]] = ("symbol", "odd", "even", "any", "modifier")


def card_id(family: str, value: int) -> int:
    return FAMILIES.index(family) * NUM_VALUES + value - 1


def card_name(card: int) -> str:
    """Short human name, e.g. ``7 sun``."""
    return f"{VALUE_OF[card]} {FAMILIES[FAMILY_OF[card]]}"


def card_json(card: int) -> dict[str, Any]:
    """A card as observations and events show it (a fresh dict each time)."""
    return {"id": card, "family": FAMILY_NAME_OF[card], "value": VALUE_OF[card]}


def no_card_json() -> dict[str, Any]:
    """The "no card" placeholder (fixed keys, no None): id -1, empty family, value -1."""
    return {"id": -1, "family": "", "value": -1}


def cards_json(cards: list[int] | tuple[int, ...]) -> list[dict[str, Any]]:
    """``[card_json(c) for c in cards]``, without a call per card (views list many)."""
    return [{"id": c, "family": FAMILY_NAME_OF[c], "value": VALUE_OF[c]} for c in cards]
