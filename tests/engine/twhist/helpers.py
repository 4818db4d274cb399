"""Build Twhist positions directly: hands, leader, Twhist cards, FLIP cards."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from twistarena import engine
from twistarena.engine.twhist.cards import PICK_BASE, STOP, TWHIST_BASE, TWHIST_NAMES
from twistarena.engine.twhist.state import TwhistState

TWHIST = {"RW": 0, "T": 1, "PP": 2, "PASS": 3}
assert [TWHIST_NAMES[k] for k in TWHIST.values()] == [
    "round_winner", "thief", "pole_position", "pass"]


def card_ids(state: TwhistState, texts: Iterable[str]) -> list[int]:
    """Distinct card ids for texts like "red 2" (the second "red 2" gets the other copy)."""
    t = state.t
    used: set[int] = set()
    out = []
    for text in texts:
        colour, value = text.split()
        card = next(c for c in range(32) if c not in used
                    and t.colours[t.colour_of[c]] == colour and t.value_of[c] == int(value))
        used.add(card)
        out.append(card)
    return out


def position(n: int, hands: Mapping[int, list[str]], leader: int = 0,
             options: Mapping[str, Any] | None = None,
             stars_up: Mapping[int, list[int]] | None = None) -> TwhistState:
    """A state where seat s holds ``hands[s]`` (card texts) and all 4 Twhist cards, ``leader``
    leads, and every other number card is already discarded (32 cards stay accounted for)."""
    state = engine.make("twhist", n, 1, options)
    assert isinstance(state, TwhistState)
    all_texts = [text for s in range(n) for text in hands.get(s, [])]
    ids = card_ids(state, all_texts)
    at = 0
    for s in range(n):
        k = len(hands.get(s, []))
        state.hands[s] = sorted(ids[at:at + k])
        at += k
    state.open_cards = ()
    state.discard = [c for c in range(32) if c not in ids]
    state.leader = state.turn = leader
    state.tricks_total = max(len(h) for h in state.hands) + 4
    for s, values in (stars_up or {}).items():
        for v in values:
            state._flip(s, v)
    state.events.clear()
    return state


def token_id(state: TwhistState, seat: int, token: str) -> int:
    """Action id of a play token: "RW", "T", "PP", "PASS" or a card text in ``seat``'s hand."""
    if token in TWHIST:
        return TWHIST_BASE + TWHIST[token]
    t = state.t
    colour, value = token.split()
    return next(c for c in state.hands[seat]
                if t.colours[t.colour_of[c]] == colour and t.value_of[c] == int(value))


def play(state: TwhistState, tokens: list[str]) -> None:
    """Play one token per turn, in turn order."""
    for token in tokens:
        (seat,) = state.to_act()
        state.apply(seat, token_id(state, seat, token))


def pick(state: TwhistState, texts: list[str]) -> None:
    """The picker picks these trick cards, then stops if a choice is still open."""
    for text in texts:
        (seat,) = state.to_act()
        card = next(c for c in state.pool if state.t.card_text(c) == text)
        state.apply(seat, PICK_BASE + card)
    if state.phase == 1:
        (seat,) = state.to_act()
        state.apply(seat, STOP)


def events(state: TwhistState, kind: str) -> list[dict[str, Any]]:
    return [e for e in state.event_log(None) if e["kind"] == kind]


def flips(state: TwhistState) -> dict[int, int]:
    """seat -> FLIP value flipped, from the flip events logged so far."""
    out: dict[int, int] = {}
    for e in events(state, "flip"):
        assert e["seat"] not in out, "a seat flipped twice in one trick"
        out[e["seat"]] = e["value"]
    return out
