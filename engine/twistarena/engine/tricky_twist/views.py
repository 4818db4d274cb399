"""What a Tricky Twist state shows (docs/rules/tricky_twist.md): a seat's view in
the parts ``TrickyTwistState.observation_parts`` keeps apart (the table, the round,
one part per player), built from the state and never changing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import JSON, set_bits
from .actions import END_BONUS, GAME_OVER, RESERVE
from .cards import BONUS_NAMES, FAMILIES, FAMILY_OF, card_json, cards_json

if TYPE_CHECKING:
    from .state import TrickyTwistState


def decision_json(state: TrickyTwistState) -> JSON:
    """Context of the pending decision (fixed keys; -1 / "" when unused)."""
    kind, bonus, seat = state.phase, "", -1
    if state.acting and state.phase != RESERVE:
        seat = state.acting[0]
    if state.phase == END_BONUS:
        b = state.end_steps[0][1]
        kind = state.face_kind[b]
        if state.sub >= 0:
            kind = "flip_top" if kind == "flip" else "modifier_delta"
        bonus = BONUS_NAMES[b]
    elif state.phase == GAME_OVER:
        kind = ""
    face = state.faces[BONUS_NAMES.index(bonus)] if bonus else ""
    return {"kind": kind, "seat": seat, "bonus": bonus, "face": face, "index": state.sub,
            "pick_queue": list(state.picks), "window_queue": list(state.window)}


def view_json(state: TrickyTwistState, seat: int) -> JSON:
    """Observation of ``seat`` (-1: a spectator). Tricks lie face-down but every
    card in them was shown when played, so their cards are public (RULES
    conventions: perfect memory of everything shown openly)."""
    return {**table_json(state, seat), **round_json(state),
            "players": [player_json(state, s) for s in range(state.num_players)]}


def table_json(state: TrickyTwistState, seat: int) -> JSON:
    """The part of a view that changes with nearly every action (and the seat's own)."""
    n = state.num_players
    own = 0 <= seat < n
    return {
        "game": state.game_id,
        "seat": seat,
        "num_players": n,
        "phase": state.phase,
        "to_act": list(state.acting),
        "first_player": state.first_player,
        "leader": state.leader,
        "hand": cards_json(state.hands[seat]) if own else [],
        "reserve": cards_json(sorted(state.reserves[seat])) if own else [],
        "trick": [{"seat": (state.leader + i) % n, "card": card_json(c)}
                  for i, c in enumerate(state.trick)],
        "led_family": FAMILIES[FAMILY_OF[state.trick[0]]] if state.trick else "",
        "decision": decision_json(state),
    }


def round_json(state: TrickyTwistState) -> JSON:
    """The part of a view that changes a few times a round (its version: the
    state's ``_round_rev``)."""
    return {
        "round": state.round_no + 1,
        "rounds": state.rounds,
        "scoring_card": state.scoring_card,
        "scoring_cards_left": len(state.scoring_deck) - state.round_no - 1,
        "past_scoring_cards": state.scoring_deck[:state.round_no],
        "scores": list(state.total),
        "supply": [{"bonus": BONUS_NAMES[b], "face": state.faces[b]} for b in state.supply],
        "bonus_out": [BONUS_NAMES[b] for b in state.out],
        "end_choices": list(state.end_choices),
        "last_round": list(state.last_round),
    }


def player_json(state: TrickyTwistState, s: int) -> JSON:
    """What everybody knows about seat ``s`` (its version: the state's ``_player_rev[s]``)."""
    return {
        "seat": s,
        "hand_count": len(state.hands[s]),
        "reserve_count": len(state.reserves[s]),
        "known_in_hand": cards_json(sorted(state.known[s])),
        "tricks": [{"cards": cards_json(t), "blank": not t} for t in state.tricks[s]],
        "false_tricks": [
            {"family": FAMILIES[f] if f >= 0 else "", "value": v, "cards": cards_json(c),
             "source": src, "modifier": d}
            for f, v, c, src, d in state.false[s]],
        "bonuses": [{"bonus": BONUS_NAMES[b], "face": state.faces[b]} for b in state.held[s]],
        "score": state.total[s],
        "void": [FAMILIES[f] for f in set_bits(state.voids[s])],
    }
