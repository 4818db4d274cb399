"""What the bridge says to a bot program, and how it reads the answer.

One message per line, in one of two forms. JSON (the default) is one object
per line. The plain-text form exists for programs without a JSON library (C,
Java or Rust with only their standard library): a message is a block of
space-separated lines that a loop over ``split(" ")`` reads::

    decision id=57 game=twhist seat=1 time_left_ms=4980
    obs phase play
    obs scores 3 3 4 5
    obs hand.0.colour red
    obs hand.0.value 4
    action 16 kind=play card.id=16 card.colour=red card.value=4 | play red 4
    action 33 kind=twhist twhist=thief | play Thief
    end

Nested fields are flattened to dotted paths (list items by index), a list of
plain values stays on one line, and spaces inside text become ``_``. Every
bot answers a decision with one line holding the chosen action id (JSON bots
may also answer ``{"id": 16}``). docs/bots.md has both forms in full.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from twistarena.engine import Action

JSON_FORM = "json"
TEXT_FORM = "text"
FORMS = (JSON_FORM, TEXT_FORM)


def decision_message(form: str, *, decision_id: int, game: str, seat: int, time_left_ms: int,
                     observation: Mapping[str, Any], legal_actions: Sequence[Action],
                     rejected: str = "", game_options: Mapping[str, Any] | None = None) -> str:
    """One decision as the program reads it (no trailing newline). ``game_options`` are
    the match's rules (the game's defaults merged with the match's own): a program that
    simulates the game needs them, and every decision carries them so that a program
    started again mid-match has them too."""
    if form == JSON_FORM:
        body: dict[str, Any] = {
            "type": "decision", "decision_id": decision_id, "game": game, "seat": seat,
            "time_left_ms": time_left_ms, "game_options": _plain(game_options or {}),
            "observation": _plain(observation),
            "legal_actions": [{"id": a.id, "label": a.label,
                               "payload": _plain(kind_first(a.payload))}
                              for a in legal_actions]}
        if rejected:
            body["rejected"] = rejected
        return json.dumps(body, separators=(",", ":"))
    lines = [f"decision id={decision_id} game={game} seat={seat} time_left_ms={time_left_ms}"]
    if rejected:
        lines.append(f"rejected {_word(rejected)}")
    lines.extend(f"option {path} {values}".rstrip()
                 for path, values in flatten(game_options or {}))
    lines.extend(f"obs {path} {values}".rstrip() for path, values in flatten(observation))
    for action in legal_actions:
        fields = " ".join(f"{path}={values.replace(' ', ',')}"
                          for path, values in flatten(kind_first(action.payload)))
        lines.append(f"action {action.id} {fields} | {action.label}".replace("  ", " "))
    lines.append("end")
    return "\n".join(lines)


def over_message(form: str, *, seat: int, scores: Sequence[int], places: Sequence[int],
                 reason: str) -> str:
    """The end of the match: the program may exit after reading it."""
    if form == JSON_FORM:
        return json.dumps({"type": "over", "seat": seat, "scores": list(scores),
                           "places": list(places), "reason": reason}, separators=(",", ":"))
    return (f"over seat={seat} scores={','.join(map(str, scores))} "
            f"places={','.join(map(str, places))} reason={reason}")


def kind_first(payload: Mapping[str, Any]) -> dict[str, Any]:
    """An action's payload with ``kind`` first, as docs/bots.md shows it: a program that
    reads the text form word by word knows what an action is before its details."""
    return {**({"kind": payload["kind"]} if "kind" in payload else {}), **payload}


def parse_answer(line: str, legal_ids: Sequence[int]) -> int | None:
    """The action id in an answer line, or None when the line is not one of ``legal_ids``
    written as a number (or ``{"id": N}``)."""
    action = parse_id(line)
    return action if action in legal_ids else None


def parse_id(line: str) -> int | None:
    """The action id an answer line holds (``16`` or ``{"id": 16}``), legal or not, or None
    when it holds no number that fits the contract's action id (int32)."""
    text = line.strip()
    value: Any = None
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if isinstance(data, dict):
            value = data.get("id", data.get("action_id"))
    else:
        value = text
    if isinstance(value, bool | float):
        return None
    try:
        action = int(value)
    except (TypeError, ValueError):
        return None
    return action if -(1 << 31) <= action < (1 << 31) else None


def flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(dotted path, space-separated values) for every leaf of ``data``."""
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from flatten(value, f"{path}.")
        elif isinstance(value, list | tuple) and any(isinstance(v, Mapping | list | tuple)
                                                    for v in value):
            yield from flatten({str(i): v for i, v in enumerate(value)}, f"{path}.")
        elif isinstance(value, list | tuple):
            yield path, " ".join(_word(v) for v in value)
        else:
            yield path, _word(value)


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).replace(" ", "_")


def _plain(data: Any) -> Any:
    """A read-only mapping (the SDK's lazy payloads) as JSON-ready dicts and lists."""
    if isinstance(data, Mapping):
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_plain(v) for v in data]
    return data
