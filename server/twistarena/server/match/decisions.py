"""Which decisions are open, and what became of every one: bookkeeping that
follows from the engine state and the log alone, so replay and live play share it.

Decision ids are ``opened_at * DECISION_ID_STRIDE + seat + 1`` where
``opened_at`` is the log length when the seat's current decision opened.
Replaying the log gives the same ids, so an open decision keeps its id across
a restart, and the seat can be read back from any id.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from twistarena.engine import State
from twistarena.storage import LogEntry
from twistarena.v1 import play_pb2 as ppb

#: Decision ids step by this much per log entry; seats are the remainder, so a
#: match has at most this many seats (the engine's games have at most 5).
DECISION_ID_STRIDE = 8


class Outcome(enum.Enum):
    """What became of a settled decision, for answers that arrive after it settled."""

    ANSWERED = "answered"
    TIMEOUT = "timeout"
    SUPERSEDED = "superseded"


@dataclass(frozen=True, slots=True)
class Reply:
    """What the answering stream is told."""

    accepted: bool
    reason: int = 0
    message: str = ""
    may_retry: bool = False


ACCEPTED = Reply(True)


def late(decision_id: int) -> Reply:
    """The reply to an answer after its deadline: the fallback already decided."""
    return Reply(False, ppb.LATE_ANSWER,
                 f"decision {decision_id} passed its deadline; the fallback decided")


def seat_of(decision_id: int) -> int | None:
    """The seat a decision id was made for (None: no id this server makes)."""
    return (decision_id - 1) % DECISION_ID_STRIDE if decision_id > 0 else None


class DecisionBook:
    """The open decision of each acting seat, and the outcome of every settled one."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.num_players = state.num_players
        #: Per seat, how many of its decisions timed out.
        self.timeouts = [0] * state.num_players
        self.settled: dict[int, Outcome] = {}
        #: Per seat, the id of its latest settled decision.
        self.last_settled: dict[int, int] = {}
        #: Per seat, the action of its latest decision settled by an answer.
        self.last_answer: dict[int, int] = {}
        #: Acting seat -> the log length when its open decision opened.
        self.opened: dict[int, int] = {}
        #: Acting seat -> its legal action ids in the open decision.
        self.legal: dict[int, tuple[int, ...]] = {}
        self.log_len = 0
        self.entries: list[LogEntry] = []
        self._reopen(actor=None)

    def decision_id(self, seat: int) -> int:
        """The id of ``seat``'s open decision (the seat must be acting)."""
        return self.opened[seat] * DECISION_ID_STRIDE + seat + 1

    def open_id(self, seat: int) -> int:
        """The id of ``seat``'s open decision, or 0 when it has none."""
        return self.decision_id(seat) if seat in self.opened else 0

    def advance(self, seat: int, action: int, timeout: bool) -> None:
        """Play one log entry on the state and settle the decision it answered."""
        did = self.decision_id(seat)
        self.state.apply(seat, action)
        self.settled[did] = Outcome.TIMEOUT if timeout else Outcome.ANSWERED
        self.last_settled[seat] = did
        if timeout:
            self.timeouts[seat] += 1
        else:
            self.last_answer[seat] = action
        self.log_len += 1
        self.entries.append((seat, action, timeout))
        self._reopen(actor=seat)

    def _reopen(self, actor: int | None) -> None:
        """Which decisions are open after the latest action (deterministic from the log).

        A seat that still acts with the same legal ids keeps its decision (and
        id); one whose choices changed gets a new decision, the old one
        superseded."""
        acting = self.state.to_act()
        opened: dict[int, int] = {}
        for s in acting:
            legal = tuple(self.state.legal_action_ids(s))
            if s != actor and s in self.opened and self.legal.get(s) == legal:
                opened[s] = self.opened[s]
            else:
                if s != actor and s in self.opened:
                    self.settled[self.decision_id(s)] = Outcome.SUPERSEDED
                opened[s] = self.log_len
            self.legal[s] = legal
        for s in self.opened:
            if s not in opened and s != actor:
                self.settled[self.decision_id(s)] = Outcome.SUPERSEDED
        self.opened = opened

    def latest_acceptance(self, seat: int) -> tuple[int, int] | None:
        """(decision id, action) of the seat's latest settled decision if an answer
        settled it: what a batched stream that (re)joins is told again, since the
        acceptance may have been lost with a stream or a server."""
        did = self.last_settled.get(seat)
        if did is None or self.settled.get(did) is not Outcome.ANSWERED:
            return None
        return did, self.last_answer[seat]

    def why_not_open(self, seat: int, decision_id: int) -> Reply:
        """Why an answer to a decision that is not open is refused."""
        outcome = self.settled.get(decision_id)
        if outcome is None:
            return Reply(False, ppb.UNKNOWN_DECISION,
                         f"decision {decision_id} was never sent to seat {seat}")
        latest = self.last_settled.get(seat) == decision_id
        if latest and outcome is Outcome.ANSWERED:
            return Reply(False, ppb.DUPLICATE_ANSWER,
                         f"decision {decision_id} was already answered and accepted")
        if latest and outcome is Outcome.TIMEOUT:
            return late(decision_id)
        return Reply(False, ppb.STALE_DECISION,
                     f"decision {decision_id} is settled and a newer one exists")
