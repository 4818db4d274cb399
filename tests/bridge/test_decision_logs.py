"""A hosted program's stderr kept decision by decision, within its caps."""

from __future__ import annotations

from twistarena.bridge.decisionlog import (
    CUT,
    DECISION_LOG_BYTES,
    MATCH_LOG_BYTES,
    MATCH_LOG_ENTRIES,
    DecisionLogs,
)


def test_stderr_goes_to_the_decision_it_was_written_during() -> None:
    logs = DecisionLogs()
    logs.note(b"loading\n")  # before any decision: with the first one
    logs.begin(9)
    logs.note(b"thinking about 9\n")
    logs.begin(9)  # the same decision asked again after a refusal
    logs.note(b"still 9\n")
    logs.begin(17)  # no stderr, no failure: no entry
    logs.begin(25)
    logs.note(b"Traceback: boom\n")
    logs.fail(25, "crash", "it exited (exit code 1)")
    logs.fail(25, "timeout", "a second failure of the same decision is not recorded")
    entries = logs.finish()
    assert [(e.decision_id, e.text, e.failure) for e in entries] == [
        (9, "loading\nthinking about 9\nstill 9\n", ""),
        (25, "Traceback: boom\n", "crash")]
    assert entries[1].why == "it exited (exit code 1)"
    assert logs.finish() == entries  # finishing again changes nothing


def test_a_failure_without_stderr_is_kept_and_a_decision_never_sent_gets_its_own_entry() -> None:
    logs = DecisionLogs()
    logs.fail(33, "timeout", "it is still starting")
    entries = logs.finish()
    assert [(e.decision_id, e.text, e.failure) for e in entries] == [(33, "", "timeout")]


def test_each_decision_and_the_match_are_capped() -> None:
    logs = DecisionLogs()
    logs.begin(1)
    logs.note(b"x" * (DECISION_LOG_BYTES + 10))
    logs.begin(2)
    first = logs.entries[0]
    assert first.text == "x" * DECISION_LOG_BYTES + CUT
    for decision in range(3, 3 + MATCH_LOG_BYTES // DECISION_LOG_BYTES + 5):
        logs.note(b"y" * DECISION_LOG_BYTES)
        logs.begin(decision)
    logs.fail(10_000, "illegal", "not a legal action id")
    entries = logs.finish()
    assert logs.kept_bytes <= MATCH_LOG_BYTES
    assert sum(len(e.text.encode()) - (len(CUT) if e.text.endswith(CUT) else 0)
               for e in entries) <= MATCH_LOG_BYTES
    # Past the byte cap a failure still leaves its mark (the failing step is never lost).
    assert entries[-1].failure == "illegal" and entries[-1].text == ""
    many = DecisionLogs()
    for decision in range(MATCH_LOG_ENTRIES + 50):
        many.begin(decision + 1)
        many.note(b"z")
    assert len(many.finish()) == MATCH_LOG_ENTRIES
