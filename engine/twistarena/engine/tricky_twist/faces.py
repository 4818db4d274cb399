"""Tricky Twist's match options checked, and the variable bonus faces they name
(docs/rules/tricky_twist.md, TT-3.1, TT-6.4), and the order in which their
end-of-round decisions come (TT-6.5): read, never changing a state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..core import JSON, InvalidOptions
from .cards import DECK_SIZE, FACE_KINDS, FAMILIES, NUM_VALUES
from .data import SCORING_CARDS

if TYPE_CHECKING:
    from .state import TrickyTwistState

#: order in which one player decides their end-of-round bonuses (TT-6.5): Flip
#: first (it acts on real tricks), then Blank, the false-trick faces, Modifier last
#: (it may adjust any valued false trick, faces included); Plus needs no decision.
_END_ORDER: Final = {"flip": 0, "blank": 1, "symbol": 2, "odd": 3, "even": 4, "any": 5,
                     "modifier": 6}


def parse_face(face: str) -> tuple[str, tuple[int, ...]]:
    """A variable face name -> (kind, symbol families); raises InvalidOptions."""
    if face in FACE_KINDS and face != "symbol":
        return face, ()
    parts = face.split("_")
    if len(parts) == 3 and parts[0] == "symbol" and parts[1] in FAMILIES and parts[2] in FAMILIES \
            and parts[1] != parts[2]:
        return "symbol", tuple(sorted((FAMILIES.index(parts[1]), FAMILIES.index(parts[2]))))
    raise InvalidOptions(
        f"unknown variable bonus face {face!r}; use symbol_<family>_<family>, odd, even, any"
        " or modifier")


def check_options(o: JSON, n: int) -> None:
    """``InvalidOptions`` unless ``o`` (merged) describes a match of ``n`` players."""
    if f"hand_size_{n}p" not in o:
        raise InvalidOptions(f"no hand size for {n} players")
    hand = o[f"hand_size_{n}p"]
    if not (hand >= 1 and hand * n <= DECK_SIZE):
        raise InvalidOptions(f"hand_size_{n}p must be 1..{DECK_SIZE // n}")
    if not 0 <= o["reserve_size"] < hand:
        raise InvalidOptions("reserve_size must be at least 0 and below the hand size")
    for name in o["scoring_cards"]:
        if name not in SCORING_CARDS:
            raise InvalidOptions(f"unknown scoring card {name!r}; known: {SCORING_CARDS}")
    if len(o["scoring_cards"]) < n:
        raise InvalidOptions(f"the scoring deck needs at least {n} cards (one per round)")
    for key in ("odd_values", "even_values", "any_values"):
        if not all(1 <= v <= NUM_VALUES for v in o[key]):
            raise InvalidOptions(f"{key} must be values 1..{NUM_VALUES}")
    if sorted(o["variable_cards"]) != ["v1", "v2", "v3", "v4"]:
        raise InvalidOptions("variable_cards must describe v1..v4")
    for card in o["variable_cards"].values():
        parse_face(card["plain"])
        parse_face(card["framed"])
    for table in (*o["star_tables"].values(), o["place_stars"]):
        if not table:
            raise InvalidOptions("star tables must not be empty")


def end_order(state: TrickyTwistState) -> list[tuple[int, int]]:
    """TT-6.5: every (seat, bonus) end-of-round decision, in the order they are made."""
    n = state.num_players
    steps: list[tuple[int, int]] = []
    for s in ((state.first_player + k) % n for k in range(n)):
        mine = [b for b in state.held[s] if state.face_kind[b] in _END_ORDER]
        mine.sort(key=lambda b: (_END_ORDER[state.face_kind[b]], b))
        steps += [(s, b) for b in mine]
    return steps
