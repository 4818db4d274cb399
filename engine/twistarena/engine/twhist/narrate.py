"""One line of text per Twhist event, for the CLI's narration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cards import TWHIST_LABELS, TWHIST_NAMES

_LABEL = dict(zip(TWHIST_NAMES, TWHIST_LABELS, strict=True))


def _card(card: Mapping[str, Any]) -> str:
    return f"{card['colour']} {card['value']}"


def narrate(event: Mapping[str, Any]) -> str | None:
    kind = event.get("kind")
    if kind == "deal":
        text = f"Seat {event['dealer']} deals; seat {event['leader']} leads"
        if event["open_cards"]:
            text += "; open unused cards: " + ", ".join(_card(c) for c in event["open_cards"])
        if "hand" in event:
            text += "; your hand: " + ", ".join(_card(c) for c in event["hand"])
        return text
    if kind == "play":
        what = _LABEL[event["twhist"]] if event["twhist"] else _card(event["card"])
        return f"Seat {event['seat']} plays {what}"
    if kind == "resolve":
        head = f"Trick {event['trick']}: "
        if event["picker"] < 0:
            return head + f"no number card, nobody flips; seat {event['next_leader']} leads again"
        text = f"seat {event['picker']} picks" if event["number_cards"] else (
            f"seat {event['picker']} would pick but there is no number card, nobody flips")
        return f"{head}{text}; seat {event['next_leader']} leads next"
    if kind == "pick":
        return f"Seat {event['seat']} picks {_card(event['card'])}"
    if kind == "flip":
        side = "to its star side" if event["star_side"] else "back to its number side"
        return (f"Seat {event['seat']} flips {event['value']} {side} "
                f"(now {event['stars']} star{'' if event['stars'] == 1 else 's'})")
    if kind == "game_over":
        scores = ", ".join(f"seat {s}: {v}" for s, v in enumerate(event["scores"]))
        return f"Game over: {scores}"
    return None
