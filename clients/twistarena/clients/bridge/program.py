"""A bot that is any program: decisions go to its stdin, answers come from its stdout.

The program is started at the first decision and kept for the whole match. A
program that crashes, does not answer before the decision's deadline or
prints something that is not an action id gets no answer sent for it: the
match's fallback settles the decision (as for any seat that misses its
deadline), a log line says what happened, and the program is started again
for the next decision. An id that is not legal goes to the server, and the
program reads the refusal in the decision sent again (``seat.py``). Nothing
the program does can stop the bridge.

Hosts running programs they did not write (``tournament create --entrants
exec:...``) add ``Limits``: CPU seconds, address space and open files via
setrlimit (set by the small ``limited`` launcher, which then execs the
program), always a process group of its own (so the whole tree is killed),
and no network where ``unshare`` can give the program an empty network
namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import structlog
from twistarena.engine import Action

from ..sdk import Decision, MatchResult, NoAnswer, Rejection
from ..sdk.hosting import BOT_OUTPUT
from .messages import JSON_FORM
from .seat import BridgedSeat

log = structlog.get_logger("twistarena.bridge")

#: Longest answer line read; a longer one is garbage.
LINE_LIMIT = 1 << 20
#: How long a program may take to exit after the end of the match.
EXIT_GRACE_S = 2.0


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits of a hosted program (0: no limit of that kind)."""

    cpu_seconds: int = 60
    memory_mb: int = 1024
    open_files: int = 64
    no_network: bool = True

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command that starts ``argv`` under these limits (see ``limited``)."""
        return [sys.executable, "-m", "twistarena.clients.bridge.limited",
                "--cpu", str(self.cpu_seconds),
                "--memory-bytes", str(self.memory_mb * 1024 * 1024),
                "--open-files", str(self.open_files), "--", *argv]


@cache
def can_unshare_network() -> bool:
    """Whether ``unshare -rn`` works here (Linux with unprivileged user namespaces)."""
    tool = shutil.which("unshare")
    if tool is None:
        return False
    try:
        done = subprocess.run([tool, "-rn", "true"], capture_output=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


class ProgramBot(BridgedSeat):
    """Plays a seat by asking a program (see the module docstring).

    ``game`` and ``seat`` are read from the agent once it has joined: call
    ``bind(agent)`` before running it (``bridge.bridged_agent`` does).
    """

    def __init__(self, command: str | Sequence[str], *, form: str = JSON_FORM,
                 limits: Limits | None = None, name: str = "",
                 cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        super().__init__()
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("an empty command")
        self.form = form
        self.limits = limits
        self.name = name or self.argv[0]
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        #: Times the program had to be started again (after a crash, hang or garbage).
        self.restarts = 0
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr: asyncio.Task[None] | None = None
        self._started_once = False

    # -- the bot API ---------------------------------------------------------------

    async def act(self, observation: Mapping[str, Any], legal_actions: Sequence[Action], *,
                  decision: Decision, rejection: Rejection | None = None) -> int:
        message, timeout = self.decision_text(decision, observation, legal_actions, rejection)
        try:
            line = await asyncio.wait_for(self._exchange(message), timeout)
        except TimeoutError:
            await self._fail(decision, f"no answer within {decision.time_left_ms} ms")
        except asyncio.CancelledError:
            # The decision was settled (the fallback at the deadline) while the program
            # thought: its late answer would be read as the next one, so it starts afresh.
            self._note_failure(decision, "the decision was settled before it answered")
            await self._stop()
            raise
        except OSError as error:
            await self._fail(decision, f"could not run it: {error}")
        if not line:
            await self._fail(decision, f"it exited ({await self._exit_text()})")
        action, why = self.judge(line.decode(errors="replace"), legal_actions, rejection)
        if action is None:
            await self._fail(decision, why)
        assert action is not None
        return action

    async def close(self, result: MatchResult | None) -> None:
        """Tell the program the match is over, let it exit, then make sure it did."""
        proc = self._proc
        if proc is not None and proc.returncode is None and result is not None:
            line = self.over_text(result)
            with contextlib.suppress(OSError, RuntimeError):
                assert proc.stdin is not None
                proc.stdin.write(line.encode() + b"\n")
                await proc.stdin.drain()
                proc.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), EXIT_GRACE_S)
        await self._stop()

    async def unusable(self) -> str:
        """A command that names no executable file cannot be started."""
        program = self.argv[0]
        path = (self.env or os.environ).get("PATH")
        if os.sep in program:
            found = os.path.join(self.cwd or "", program)
            if os.path.isfile(found) and os.access(found, os.X_OK):
                return ""
        elif shutil.which(program, path=path) is not None:
            return ""
        return f"the program could not start: {program!r} is not an executable file"

    # -- the program -------------------------------------------------------------------

    async def _exchange(self, message: str) -> bytes:
        proc = await self._ensure_started()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(message.encode() + b"\n")
        await proc.stdin.drain()
        try:
            return await proc.stdout.readline()
        except ValueError:  # a line longer than LINE_LIMIT
            return b"<a line longer than 1 MiB>\n"

    async def _ensure_started(self) -> asyncio.subprocess.Process:
        proc = self._proc
        if proc is not None and proc.returncode is None:
            return proc
        await self._stop()
        if self._started_once:
            self.restarts += 1
            log.warning("starting the bot program again", bot=self.name, restarts=self.restarts)
        self._started_once = True
        argv = list(self.argv)
        limits = self.limits
        if limits is not None:
            argv = limits.wrap(argv)
            if limits.no_network and await asyncio.to_thread(can_unshare_network):
                argv = ["unshare", "-rn", "--", *argv]
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=LINE_LIMIT,
            cwd=self.cwd, env=self.env)
        self._proc = proc
        self._stderr = asyncio.get_running_loop().create_task(self._log_stderr(proc))
        return proc

    async def _log_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        with contextlib.suppress(ValueError, OSError):
            async for raw in proc.stderr:
                log.info(BOT_OUTPUT, bot=self.name, pid=proc.pid,
                         line=raw.decode(errors="replace").rstrip())

    async def _fail(self, decision: Decision, why: str) -> None:
        """Log the failure, stop the program (it restarts at the next decision), and
        leave the decision to the match's fallback."""
        self._note_failure(decision, why)
        await self._stop()
        raise NoAnswer(why)

    def _note_failure(self, decision: Decision, why: str) -> None:
        self.failures += 1
        log.warning("bot program failed a decision; the match's fallback decides it and "
                    "the program is restarted", bot=self.name, decision=decision.decision_id,
                    why=why)

    async def _exit_text(self) -> str:
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 1.0)
        code = proc.returncode if proc is not None else None
        if code is None:
            return "stdout closed"
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exit code {code}"

    async def _stop(self) -> None:
        """Kill the program's whole process group and reap it."""
        proc, self._proc = self._proc, None
        if proc is not None:
            # The group, even when its leader is gone: children it left must go too.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                await proc.wait()
        task, self._stderr = self._stderr, None
        if task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, 1.0)
