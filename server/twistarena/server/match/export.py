"""Finished matches written to files before their keys may expire.

``serve --export-dir DIR`` appends one JSON line per finished match to
``DIR/matches-YYYY-MM-DD.jsonl`` (UTC day of its end): the match's options,
seed, result and full action log, enough for ``twistarena replay`` to verify
it. The store keeps a finished match for ``--retain-finished``; the export
keeps it for good.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from twistarena.storage import LogEntry, MatchRecord
from twistarena.v1 import match_pb2 as mpb

from .. import logs, metrics

log = logs.get("twistarena.export")


def match_line(record: MatchRecord, result: mpb.MatchResult,
               entries: Sequence[LogEntry], ended_ms: int) -> dict[str, Any]:
    """One finished match as an export line: enough to replay it (options, seed, actions)."""
    return {
        "match_id": record.match_id,
        "options": MessageToDict(record.options),
        "seed": record.seed,
        "created_ms": record.created_ms,
        "ended_ms": ended_ms,
        "result": MessageToDict(result),
        "actions": [[seat, action, int(timeout)] for seat, action, timeout in entries],
    }


class MatchExport:
    """Appends finished matches to a daily JSON-lines file."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path_for(self, ended_ms: int) -> Path:
        """The day's file a match ended at ``ended_ms`` goes to (one file a day, UTC)."""
        day = time.strftime("%Y-%m-%d", time.gmtime(ended_ms / 1000))
        return self.directory / f"matches-{day}.jsonl"

    def _write(self, line: dict[str, Any]) -> None:
        with self.path_for(line["ended_ms"]).open("a", encoding="utf-8") as out:
            out.write(json.dumps(line, separators=(",", ":")) + "\n")

    async def write(self, record: MatchRecord, result: mpb.MatchResult,
                    entries: Sequence[LogEntry]) -> None:
        """Append the finished match to its day's file, off the event loop."""
        line = match_line(record, result, list(entries), int(time.time() * 1000))
        await asyncio.to_thread(self._write, line)

    async def keep(self, record: MatchRecord, result: mpb.MatchResult,
                   entries: Sequence[LogEntry]) -> None:
        """``write``, for a referee that has nobody to tell: a failure is counted
        and logged (the match itself is stored and over either way)."""
        try:
            await self.write(record, result, entries)
        except OSError as exc:
            metrics.ERRORS.labels("archive").inc()
            log.error("archive_failed", match_id=record.match_id, error=repr(exc))
