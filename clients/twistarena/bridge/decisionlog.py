"""What a hosted program wrote to stderr while it had each decision.

An author debugs a bot by reading, beside each step of the replay, what the
program printed while it thought about that step. The stderr that arrives from
the moment a decision is sent until the next one is sent (or the match ends)
belongs to that decision; what the program wrote while starting goes with its
first decision. Everything is bounded: ``DECISION_LOG_BYTES`` per decision and
``MATCH_LOG_BYTES`` per match (text beyond them is cut and says so), and at most
``MATCH_LOG_ENTRIES`` decisions are kept (the failures among them always are,
within the entry cap, so the failing step is never lost to a chatty start).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Stderr kept per decision.
DECISION_LOG_BYTES = 4 * 1024
#: Stderr kept per match for all its decisions together.
MATCH_LOG_BYTES = 64 * 1024
#: Decisions kept per match (those with stderr or a failure; the others leave no entry).
MATCH_LOG_ENTRIES = 2000
#: What replaces the rest of a text that was cut.
CUT = "\n[cut: the rest of this decision's stderr is not kept]"


@dataclass(slots=True)
class DecisionLog:
    """One decision's stderr and how the decision ended for the program."""

    decision_id: int
    text: str = ""
    #: "" (answered), "crash", "timeout" or "illegal".
    failure: str = ""
    why: str = ""


@dataclass(slots=True)
class DecisionLogs:
    """The per-decision logs of one program in one match (see the module docstring)."""

    entries: list[DecisionLog] = field(default_factory=list)
    kept_bytes: int = 0
    _open: DecisionLog | None = None
    _pending: bytearray = field(default_factory=bytearray)
    _cut: bool = False

    def note(self, chunk: bytes) -> None:
        """Stderr arrived: it belongs to the open decision (or the next one)."""
        room = DECISION_LOG_BYTES - len(self._pending)
        if room > 0:
            self._pending += chunk[:room]
        if len(chunk) > max(room, 0):
            self._cut = True

    def begin(self, decision_id: int) -> None:
        """A decision is sent: the previous one's log is complete."""
        if self._open is not None and self._open.decision_id == decision_id:
            return  # the same decision asked again after a refusal
        self._close()
        self._open = DecisionLog(decision_id)

    def fail(self, decision_id: int, kind: str, why: str) -> None:
        """The decision ended in a crash, timeout or illegal answer."""
        if self._open is None or self._open.decision_id != decision_id:
            self.begin(decision_id)
        assert self._open is not None
        if not self._open.failure:
            self._open.failure, self._open.why = kind, why[:500]

    def finish(self) -> list[DecisionLog]:
        """The match is over: close the open decision; every entry, oldest first."""
        self._close()
        return self.entries

    def _close(self) -> None:
        entry, self._open = self._open, None
        if entry is None:
            return  # stderr before the first decision waits for it
        raw, cut = bytes(self._pending), self._cut
        self._pending.clear()
        self._cut = False
        room = MATCH_LOG_BYTES - self.kept_bytes
        if len(raw) > room:
            raw, cut = raw[:max(room, 0)], True
        text = raw.decode(errors="replace")
        if cut and text:
            text += CUT
        if not (text or entry.failure) or len(self.entries) >= MATCH_LOG_ENTRIES:
            return
        entry.text = text
        self.kept_bytes += len(raw)
        self.entries.append(entry)
