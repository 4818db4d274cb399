"""How a match's end is scored: its status, and places after a forfeit, an
abandonment or a void. Pure: the referee decides when a match ends, stores the
end (``durable.store_end``) and only then tells anyone."""

from __future__ import annotations

from collections.abc import Sequence

from twistarena.engine import State
from twistarena.v1 import match_pb2 as mpb

_CANCELLED_REASONS = (mpb.END_REASON_CANCELLED, mpb.END_REASON_ABANDONED,
                      mpb.END_REASON_VOIDED)


def end_status(reason: int) -> int:
    """The match status an end reason leaves: cancelled unless the match was played out
    (completed, forfeited, length-capped)."""
    return (mpb.MATCH_STATUS_CANCELLED if reason in _CANCELLED_REASONS
            else mpb.MATCH_STATUS_FINISHED)


def match_result(state: State, present: Sequence[bool], reason: int, detail: str,
                 forfeit: int | None) -> mpb.MatchResult:
    """The result of a match ending for ``reason``; ``present``: which seats had joined
    (or are house bots), ``forfeit``: the seat that forfeited, if one did."""
    num_players = len(present)
    scores = state.scores()
    places = state.places()
    if forfeit is not None:
        others = [s for s in range(num_players) if s != forfeit]
        ranked = {s: 1 + sum(1 for o in others if places[o] < places[s]) for s in others}
        ranked[forfeit] = num_players
        places = [ranked[s] for s in range(num_players)]
    if reason == mpb.END_REASON_ABANDONED:
        # As a forfeit of every missing seat: those present share first place.
        places = [1 if here else 1 + sum(present) for here in present]
    winners = [s for s in range(num_players) if places[s] == 1]
    if reason == mpb.END_REASON_VOIDED:
        places, winners = [1] * num_players, []
    return mpb.MatchResult(scores=scores, places=places, winners=winners,
                           reason=reason, detail=detail)  # type: ignore[arg-type]
