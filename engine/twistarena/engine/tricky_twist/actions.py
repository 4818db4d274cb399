"""Tricky Twist's action ids and what each one says (docs/rules/tricky_twist.md).

Action ids use one fixed range per kind (see the ``*_BASE`` constants), so an id
means the same thing in every state and legal ids come out sorted. The texts are
apart from the state machine (``state``): they read it, never change it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..core import Action
from .cards import (
    BONUS_NAMES,
    DECK_SIZE,
    FAMILIES,
    FAMILY_OF,
    NUM_BONUS,
    NUM_VALUES,
    card_json,
    card_name,
)

if TYPE_CHECKING:
    from .state import TrickyTwistState

# -- action ids ---------------------------------------------------------------
PLAY_BASE: Final = 0  # + card: play that card (TT-4.2, TT-4.3)
RESERVE_BASE: Final = 48  # + card: put that card in the reserve (TT-3.3)
TAKE_RESERVE: Final = 96  # take the top reserve card (TT-4.1)
DECLINE: Final = 97  # decline the current optional choice (TT-4.1, TT-5.4, TT-6.1a, TT-6.2)
PICK_BASE: Final = 100  # + bonus id: take that bonus card from the supply (TT-5.4)
TAKE_BACK_BASE: Final = 120  # + card: return that false trick to hand (TT-6.1a)
FLIP_TRICK_BASE: Final = 200  # + trick index: Flip that trick into a false trick (TT-6.1b)
FLIP_FALSE_BASE: Final = 250  # + card: Flip that false trick into a trick (TT-6.1b)
FLIP_TOP_BASE: Final = 300  # + card: that card lies on top of the flipped trick (TT-6.1b)
BLANK_TRICK: Final = 350  # Blank counts as a trick (TT-6.1c)
BLANK_FALSE: Final = 351  # Blank counts as a false trick (TT-6.1c)
SYMBOL_BASE: Final = 360  # + family: Symbol face as a false trick of that family (TT-6.3)
VALUE_BASE: Final = 369  # + value (1..12): Odd/Even/Any face as a false trick of that value
MOD_TARGET_BASE: Final = 400  # + false trick index: attach the Modifier there (TT-6.3)
MOD_MINUS: Final = 450  # Modifier: value - 1
MOD_PLUS: Final = 451  # Modifier: value + 1

# -- phases -------------------------------------------------------------------
RESERVE: Final = "reserve"
WINDOW: Final = "reserve_window"
PLAY: Final = "play"
BONUS_PICK: Final = "bonus_pick"
TAKE_BACK_PHASE: Final = "take_back"
END_BONUS: Final = "end_bonus"
GAME_OVER: Final = "over"

#: a false trick: (family or -1, value or -1, physical cards (top first), source, modifier delta)
FalseTrick = tuple[int, int, tuple[int, ...], str, int]


def describe_action(faces: tuple[str, ...], action_id: int) -> Action:
    """Label and payload of one action id (only a bonus pick's depend on the round:
    on its ``faces``)."""
    a = action_id
    if 0 <= a < RESERVE_BASE:
        return Action(a, f"play {card_name(a)}", {"kind": "play", "card": card_json(a)})
    if a < TAKE_RESERVE:
        c = a - RESERVE_BASE
        return Action(a, f"reserve {card_name(c)}", {"kind": "reserve", "card": card_json(c)})
    if a == TAKE_RESERVE:
        return Action(a, "take reserve card", {"kind": "take_reserve"})
    if a == DECLINE:
        return Action(a, "decline", {"kind": "decline"})
    if PICK_BASE <= a < PICK_BASE + NUM_BONUS:
        b = a - PICK_BASE
        face = faces[b]
        shown = f" ({face})" if face != BONUS_NAMES[b] else ""
        label = f"take bonus {BONUS_NAMES[b]}{shown}"
        return Action(a, label, {"kind": "bonus", "bonus": BONUS_NAMES[b], "face": face})
    if TAKE_BACK_BASE <= a < TAKE_BACK_BASE + DECK_SIZE:
        c = a - TAKE_BACK_BASE
        return Action(a, f"take back {card_name(c)}",
                      {"kind": "take_back", "card": card_json(c)})
    if FLIP_TRICK_BASE <= a < FLIP_FALSE_BASE:
        i = a - FLIP_TRICK_BASE
        return Action(a, f"flip trick {i + 1} to a false trick",
                      {"kind": "flip_trick", "trick": i})
    if FLIP_FALSE_BASE <= a < FLIP_FALSE_BASE + DECK_SIZE:
        c = a - FLIP_FALSE_BASE
        return Action(a, f"flip false trick {card_name(c)} to a trick",
                      {"kind": "flip_false_trick", "card": card_json(c)})
    if FLIP_TOP_BASE <= a < FLIP_TOP_BASE + DECK_SIZE:
        c = a - FLIP_TOP_BASE
        return Action(a, f"{card_name(c)} on top", {"kind": "flip_top", "card": card_json(c)})
    if a in (BLANK_TRICK, BLANK_FALSE):
        what = "trick" if a == BLANK_TRICK else "false_trick"
        return Action(a, f"blank as {what.replace('_', ' ')}", {"kind": "blank", "as": what})
    if SYMBOL_BASE <= a < SYMBOL_BASE + len(FAMILIES):
        fam = FAMILIES[a - SYMBOL_BASE]
        return Action(a, f"symbol {fam}", {"kind": "symbol", "family": fam})
    if VALUE_BASE < a <= VALUE_BASE + NUM_VALUES:
        v = a - VALUE_BASE
        return Action(a, f"value {v}", {"kind": "value", "value": v})
    if MOD_TARGET_BASE <= a < MOD_MINUS:
        i = a - MOD_TARGET_BASE
        return Action(a, f"modify false trick {i + 1}", {"kind": "modify", "false_trick": i})
    if a in (MOD_MINUS, MOD_PLUS):
        d = -1 if a == MOD_MINUS else 1
        return Action(a, f"value {d:+d}", {"kind": "modify_delta", "delta": d})
    return Action(a, f"unknown action {a}", {"kind": "unknown"})


def why_illegal(state: TrickyTwistState, seat: int, action_id: int) -> str:
    """Why ``seat`` may not play ``action_id`` now, with the rule to read."""
    phase, a = state.phase, action_id
    if phase == PLAY:
        hand = state.hands[seat]
        if 0 <= a < DECK_SIZE and a in hand:
            led = FAMILIES[FAMILY_OF[state.trick[0]]]
            return (f"you hold a {led} card and must follow the led family {led};"
                    f" {card_name(a)} is not allowed (TT-4.3)")
        if 0 <= a < DECK_SIZE:
            return f"you do not hold {card_name(a)}; play a card from your hand (TT-4.2)"
        if a == TAKE_RESERVE:
            return ("a reserve card may only be taken in the window before a trick's first"
                    " card, at most one per trick (TT-4.1)")
        return f"play a card from your hand: ids {list(state._legal_ids(seat))} (TT-4.2)"
    if phase == RESERVE:
        return ("choose a card of your hand for your reserve, one at a time (TT-3.3);"
                f" legal ids {list(state._legal_ids(seat))}")
    if phase == WINDOW:
        return (f"before the trick you may only take the top reserve card ({TAKE_RESERVE})"
                f" or decline ({DECLINE}) (TT-4.1)")
    if phase == BONUS_PICK:
        if PICK_BASE <= a < PICK_BASE + NUM_BONUS:
            return f"bonus {BONUS_NAMES[a - PICK_BASE]} is not in the supply (TT-5.4)"
        return ("for your 7 you may take a bonus card still in the supply or decline (TT-5.4);"
                f" legal ids {list(state._legal_ids(seat))}")
    if phase == TAKE_BACK_PHASE:
        return ("Take back returns one of your own false tricks to your hand, or you decline"
                f" (TT-6.1a); legal ids {list(state._legal_ids(seat))}")
    kind = state.face_kind[state.end_steps[0][1]]
    rule = {"flip": "TT-6.1b", "blank": "TT-6.1c"}.get(kind, "TT-6.3")
    what = {
        "flip": "Flip turns one of your tricks into a false trick or back, then the top card",
        "blank": "Blank counts as a trick or a false trick",
        "symbol": "the Symbol face is a false trick of one of its two families",
        "odd": "the Odd face takes one of the listed odd values",
        "even": "the Even face takes one of the listed even values",
        "any": "the Any face takes a value from 1 to 12",
        "modifier": "the Modifier changes a valued false trick by +1 or -1 within 1..12",
    }[kind]
    return f"{what} ({rule}, TT-6.5); legal ids {list(state._legal_ids(seat))}"
