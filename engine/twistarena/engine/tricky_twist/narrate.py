"""One line of text per Tricky Twist event (for the CLI narrator)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _card(card: Mapping[str, Any]) -> str:
    return f"{card['value']} of {card['family']}"


def _bonus(event: Mapping[str, Any]) -> str:
    bonus, face = event["bonus"], event["face"]
    return bonus if bonus == face else f"{bonus} ({face})"


def narrate(event: Mapping[str, Any]) -> str | None:
    """A human line for an event as ``Event.view`` gives it; None when not worth saying."""
    kind = event["kind"]
    if kind == "round_start":
        line = (f"Round {event['round']}: scoring card {event['scoring_card']},"
                f" seat {event['first_player']} starts; variable faces {', '.join(event['faces'])}")
        if "hand" in event:
            line += "; your hand: " + ", ".join(_card(c) for c in event["hand"])
        return line
    if kind == "reserve_pick":
        if "card" in event:
            return f"You put {_card(event['card'])} in your reserve"
        return None
    if kind == "reserves_ready":
        return "Reserves are shuffled face-down"
    if kind == "reserve_take":
        what = _card(event["card"]) if "card" in event else "a card"
        return f"Seat {event['seat']} takes {what} from the reserve"
    if kind == "reserve_decline":
        return None
    if kind == "play":
        return f"Seat {event['seat']} plays {_card(event['card'])}"
    if kind == "trick":
        line = (f"Seat {event['winner']} wins the trick with "
                + ", ".join(_card(c) for c in event["cards"]))
        for f in event["false_tricks"]:
            line += f"; seat {f['seat']} keeps {_card(f['card'])} as a false trick"
        return line
    if kind == "bonus_take":
        return f"Seat {event['seat']} takes the bonus {_bonus(event)}"
    if kind == "bonus_decline":
        return f"Seat {event['seat']} takes no bonus"
    if kind == "take_back":
        if event["declined"]:
            return f"Seat {event['seat']} takes nothing back"
        return f"Seat {event['seat']} takes {_card(event['card'])} back into hand"
    if kind == "bonus_use":
        choice = event["choice"]
        detail = {
            "decline": "does not use it",
            "trick_to_false": f"turns a trick into a false trick showing {event['value']}"
                              f" of {event['family']}",
            "false_to_trick": "turns a false trick into a trick",
            "trick": "counts it as a trick",
            "false_trick": "counts it as a false trick",
            "family": f"counts it as a false trick of {event['family']}",
            "value": f"counts it as a false trick of value {event['value']}",
            "modify": f"changes a false trick by {event['delta']:+d} to {event['value']}",
        }.get(choice, choice)
        return f"Seat {event['seat']} uses {_bonus(event)}: {detail}"
    if kind == "round_scored":
        lines = [f"Round {event['round']} scoring ({event['scoring_card']}):"]
        for r in event["rows"]:
            lines.append(
                f"  seat {r['seat']}: {r['tricks']} tricks, {r['false_tricks']} false tricks,"
                f" {r['base']} + plus {r['plus']} + card {r['card']} = {r['round_total']}"
                f" (total {r['total']})")
        return "\n".join(lines)
    if kind == "game_over":
        winners = ", ".join(str(s) for s in event["winners"])
        return f"Game over: scores {event['scores']}; winner(s): seat {winners}"
    return None
