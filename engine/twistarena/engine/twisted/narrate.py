"""One human line per Twisted event (as ``Event.view`` gives it), for the CLI."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _cards(cards: Any) -> str:
    return ", ".join(str(c) for c in cards)


def _signed(n: int) -> str:
    return f"{n:+d}"


def narrate(event: Mapping[str, Any]) -> str | None:
    """A sentence for ``event``; None for public draws (nothing worth saying)."""
    kind = event.get("kind")
    if kind == "round_start":
        line = (f"Round {event['round']}: seat {event['starter']} starts;"
                f" {event['draw_pile']} cards in the draw pile")
        if "hand" in event:
            line += f"; your hand: {_cards(event['hand'])}"
        return line
    if kind in ("extend", "start"):
        if kind == "start":
            verb = "starts a new row with"
        else:
            verb = "starts the row with" if event["starts_row"] else "extends the row with"
        return f"Seat {event['seat']} {verb} {event['card']}"
    if kind == "twist":
        line = (f"Seat {event['seat']} twists {event['partner']} out of the row"
                f" with {event['card']} (+2)")
        return line + (" and empties the row" if event["row_left"] == 0 else "")
    if kind == "take":
        cards = event["cards"]
        line = (f"Seat {event['seat']} takes the row ({len(cards)}"
                f" card{'s' * (len(cards) != 1)}: {_cards(cards)})")
        if event.get("face_down"):
            line += " and the top card of the draw pile, face-down and unseen (TW-4.5)"
        return line + (": the round ends" if event["ends_round"] else "")
    if kind == "draw":
        if "card" in event:
            return f"Seat {event['seat']} draws {event['card']} ({event['draw_pile']} left)"
        return None
    if kind == "round_end":
        lines = [f"Round {event['round']} over:"]
        revealed = {int(r["seat"]): r["cards"] for r in event.get("face_down_revealed", ())}
        for seat, (got, total) in enumerate(
            zip(event["round_scores"], event["scores"], strict=True)
        ):
            line = f"  seat {seat}: {_signed(got)} this round, total {total}"
            if seat in revealed:
                line += f" (face-down expert cards: {_cards(revealed[seat])})"
            lines.append(line)
        return "\n".join(lines)
    if kind == "game_end":
        winners = event["winners"]
        best = event["scores"][winners[0]]
        if len(winners) == 1:
            return f"Game over: seat {winners[0]} wins with {best}"
        return f"Game over: seats {_cards(winners)} share the win with {best}"
    return None
