"""Card ids and lookup tables of Twhist.

Number cards are ids 0..31: ``id = colour * len(values) + index`` (TH-1.3).
Twhist cards are per-player state, numbered 0..3 (TH-1.2). Action ids use fixed
ranges so that they are stable and sorted: play a number card (its id), play a
Twhist card (``TWHIST_BASE + kind``), pick a trick card (``PICK_BASE + id``),
stop picking (``STOP``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..core import InvalidOptions

DECK_SIZE: Final = 32

ROUND_WINNER: Final = 0
THIEF: Final = 1
POLE_POSITION: Final = 2
PASS: Final = 3
TWHIST_NAMES: Final[tuple[str, ...]] = ("round_winner", "thief", "pole_position", "pass")
TWHIST_LABELS: Final[tuple[str, ...]] = ("Round-winner", "Thief", "Pole-position", "Pass")
ALL_TWHIST: Final = 0b1111

TWHIST_BASE: Final = DECK_SIZE  # 32..35
PICK_BASE: Final = TWHIST_BASE + 4  # 36..67
STOP: Final = PICK_BASE + DECK_SIZE  # 68


@dataclass(frozen=True, slots=True)
class Tables:
    """Everything derived once from a match's options; shared by all clones."""

    colours: tuple[str, ...]
    colour_of: tuple[int, ...]
    value_of: tuple[int, ...]
    flip_min: int
    flip_max: int
    stars: tuple[int, ...]  # index = FLIP value - flip_min
    later_wins: bool
    every_pass_sits_out: bool
    twhist_visible: bool

    colour_name_of: tuple[str, ...]  # colours[colour_of[card]]

    def card_json(self, card: int) -> dict[str, Any]:
        """A card as views and events show it (a fresh dict each time)."""
        return {"id": card, "colour": self.colour_name_of[card], "value": self.value_of[card]}

    def cards_json(self, cards: Iterable[int]) -> list[dict[str, Any]]:
        """``[card_json(c) for c in cards]``, without a call per card (views list many)."""
        names, values = self.colour_name_of, self.value_of
        return [{"id": c, "colour": names[c], "value": values[c]} for c in cards]

    def card_text(self, card: int) -> str:
        return f"{self.colours[self.colour_of[card]]} {self.value_of[card]}"

    def flip_index(self, total: int) -> int:
        """Bit of the FLIP card flipped for a sum, clamped into range (TH-5.3)."""
        return min(max(total, self.flip_min), self.flip_max) - self.flip_min


def tables(options: Mapping[str, Any]) -> Tables:
    """Validate the data table of a match and build its lookups."""
    colours = tuple(options["colours"])
    values = tuple(options["values"])
    if len(set(colours)) != len(colours) or not all(isinstance(c, str) and c for c in colours):
        raise InvalidOptions("option 'colours' must be distinct non-empty names")
    if len(colours) * len(values) != DECK_SIZE:
        raise InvalidOptions(
            f"colours x values must make {DECK_SIZE} number cards (TH-1.3), "
            f"got {len(colours)} x {len(values)}"
        )
    lo, hi = options["flip_min"], options["flip_max"]
    stars = tuple(options["stars"])
    if lo >= hi or len(stars) != hi - lo + 1 or min(stars) < 0:
        raise InvalidOptions(
            f"option 'stars' needs one non-negative entry per FLIP value {lo}..{hi} (TH-1.4)"
        )
    if options["equal_values"] not in ("earlier", "later"):
        raise InvalidOptions("option 'equal_values' must be 'earlier' or 'later' (TH-4.1)")
    per = len(values)
    colour_of = tuple(c // per for c in range(DECK_SIZE))
    return Tables(
        colours=colours,
        colour_of=colour_of,
        value_of=tuple(values[c % per] for c in range(DECK_SIZE)),
        flip_min=lo,
        flip_max=hi,
        stars=stars,
        later_wins=options["equal_values"] == "later",
        every_pass_sits_out=bool(options["every_pass_sits_out"]),
        twhist_visible=bool(options["twhist_visible"]),
        colour_name_of=tuple(colours[c] for c in colour_of),
    )


def resolve_trick(plays: list[int], leader: int, n: int,
                  t: Tables) -> tuple[int, int, int, int]:
    """Who picks and who leads after a complete trick (TH-4).

    ``plays`` are the trick's action ids in playing order from ``leader``.
    Returns ``(picker, next_leader, sit_out, natural)``: ``picker`` is -1 when
    the trick holds no number card and no powered Thief/Round-winner;
    ``sit_out`` is a bitmask of seats whose Pass card has power (TH-4.7);
    ``natural`` is the natural winner or -1 (TH-4.1). Pure, so bots reuse it.
    """
    colour_of, value_of = t.colour_of, t.value_of
    lead = -1
    natural = -1
    best = 0
    first = [-1, -1, -1, -1]  # seat of the first (powered) card of each Twhist kind, TH-4.2
    sit_out = 0
    seat = leader
    for a in plays:
        if a < TWHIST_BASE:
            if lead < 0:
                lead = colour_of[a]  # TH-3.2
            if colour_of[a] == lead:  # TH-3.3: another colour cannot win
                v = value_of[a]
                if natural < 0 or v > best or (v == best and t.later_wins):  # TH-4.1
                    natural, best = seat, v
        else:
            kind = a - TWHIST_BASE
            if first[kind] < 0:
                first[kind] = seat
                if kind == PASS:
                    sit_out |= 1 << seat
            elif kind == PASS and t.every_pass_sits_out:
                sit_out |= 1 << seat
        seat += 1
        if seat == n:
            seat = 0
    thief, rw, pole = first[THIEF], first[ROUND_WINNER], first[POLE_POSITION]
    # TH-4.8 (TH-4.4 over TH-4.3); TH-4.6 needs no case of its own: with a Thief and
    # a Pole-position in the trick, the Round-winner neither picks nor leads.
    picker = thief if thief >= 0 else rw if rw >= 0 else natural
    if pole >= 0:
        next_leader = pole  # TH-4.5
    elif rw >= 0:
        next_leader = rw  # TH-4.3, even when a Thief picks (TH-4.4)
    elif natural >= 0:
        next_leader = natural
    else:
        next_leader = leader  # TH-4.7, TH-4.8 [decided]
    return picker, next_leader, sit_out, natural
