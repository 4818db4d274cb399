"""What each seat may not know at each point of a match, from the engine state.

Used to scan every message a seat's stream (or a spectator stream) received:
no card that was hidden from the recipient at that time may appear in it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from twistarena import engine
from twistarena.engine import State

#: Twisted has no card objects: these keys hold card numbers (ints or lists of ints).
TWISTED_CARD_KEYS = frozenset({"card", "cards", "hand", "row", "plus_pile", "minus_pile",
                               "partner"})


def to_dict(msg: Message) -> dict[str, Any]:
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def cards_in(game_id: str, data: Any) -> Iterator[int]:
    """Every card id mentioned in a message dict."""
    if game_id == "twisted":
        yield from _twisted_cards(data, False)
        return
    if isinstance(data, dict):
        if "id" in data and ("family" in data or "colour" in data):
            card = int(data["id"])
            if card >= 0:
                yield card
        for value in data.values():
            yield from cards_in(game_id, value)
    elif isinstance(data, list):
        for value in data:
            yield from cards_in(game_id, value)


def _twisted_cards(data: Any, is_card: bool) -> Iterator[int]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _twisted_cards(value, key in TWISTED_CARD_KEYS)
    elif isinstance(data, list):
        for value in data:
            yield from _twisted_cards(value, is_card)
    elif (is_card and isinstance(data, int | float) and not isinstance(data, bool)
          and int(data) >= 12):
        yield int(data)


def hidden_from(state: State, seat: int | None) -> set[int]:
    """Cards ``seat`` (None: a spectator) cannot know in ``state``."""
    game = state.game_id
    n = state.num_players
    others = [s for s in range(n) if s != seat]
    st: Any = state
    out: set[int] = set()
    if game == "twisted":
        for s in others:
            out.update(st.hands[s])
        out.update(st.pile)
        for cards in st.face_down:  # TW-4.5: seen by nobody, the taker included
            out.update(cards)
    elif game == "tricky_twist":
        for s in others:
            out.update(c for c in st.hands[s] if c not in st.known[s])
            out.update(st.reserves[s])
        out.update(st.box)
    elif game == "twhist":
        for s in others:
            out.update(st.hands[s])
    else:  # pragma: no cover
        raise AssertionError(game)
    return out


class Timeline:
    """The match replayed step by step: hidden sets per step and the step of each event."""

    def __init__(self, game_id: str, num_players: int, seed: int, game_options: Any,
                 actions: Sequence[tuple[int, int]]) -> None:
        state = engine.make(game_id, num_players, seed, game_options)
        self.game_id = game_id
        self.num_players = num_players
        seats: list[int | None] = [*range(num_players), None]
        self.hidden: list[dict[int | None, set[int]]] = [
            {s: hidden_from(state, s) for s in seats}]
        self.event_step: list[int] = [0] * len(state.events)
        for k, (seat, action) in enumerate(actions, start=1):
            state.apply(seat, action)
            self.event_step += [k] * (len(state.events) - len(self.event_step))
            self.hidden.append({s: hidden_from(state, s) for s in seats})
        self.final = state

    def leaks(self, seat: int | None, step: int, data: Any) -> set[int]:
        """Hidden cards in a message that shows the state after ``step`` actions."""
        return set(cards_in(self.game_id, data)) & self.hidden[step][seat]

    def event_leaks(self, seat: int | None, seq: int, data: Any) -> set[int]:
        """Hidden cards in an event. An action may end a round and deal anew in one
        step, so a card counts as hidden when it was hidden both before and after."""
        step = self.event_step[seq]
        hidden = self.hidden[step][seat]
        if step > 0:
            hidden = hidden & self.hidden[step - 1][seat]
        return set(cards_in(self.game_id, data)) & hidden
