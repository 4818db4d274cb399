"""A bot that is any program: decisions go to its stdin, answers come from its stdout.

The program is started as soon as its seat is assigned, and the agent joins the
match once the program waits for its input (``prepare``, called by
``run_bridged``; ``sandbox.wait_ready``), so no decision pays for its start-up;
it is kept for the whole match. A program that exits, does not answer
before the decision's deadline or prints something that is not an action id
gets no answer sent for it: the SDK asks the server to settle the decision
with the match's fallback at once (``NoAnswer``), a log line says what
happened, and the program is started again right away, for the next decision;
a decision that comes while it is still starting goes to the fallback too (it
is not sent, so the program cannot take it for a later one). After
``max_restarts`` restarts (3) the seat plays the fallback to the end of the
match; the cap is checked and counted when a start begins, so no start is ever
made past it, however long killing the previous program takes. An id that is
not legal goes to the server, and the program reads the
refusal in the decision sent again (``seat.py``); a second illegal id for the
same decision is a failed one. Nothing the program does can stop the bridge.

CPU time used between decisions (after an answer, before the next decision is
sent) is counted against the limits' ``idle_cpu_seconds``: a program that keeps
computing once it answered (processes left spinning) is stopped when it passes
that, as soon as it does (it is watched while it waits), and it is a failed
decision like a crash. Time used while deciding is measured, not capped: the
decision's deadline bounds it, and the sandbox's CPU quota and rlimit bound all.

Programs someone else wrote (``tournament create --entrants exec:...``, hosted
agents, ``bot --exec --sandbox``) run in the sandbox (``twistarena.sandbox``):
pass ``sandbox`` (its mode) and, for a version already unpacked, ``code_dir``.
Without ``sandbox`` the program is the host's own and runs as a plain child
process (its cwd and environment as given).

``stats`` keeps what happened, for the program's author: decisions, crashes,
timeouts, illegal outputs, restarts, CPU time per decision (where the sandbox
measures it) and the last 64 KiB of stderr. Stderr lines are also logged (info,
``bot stderr``), up to a budget per match, so a program cannot flood the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from twistarena.clients.sdk import Decision, MatchResult, NoAnswer, Rejection
from twistarena.clients.sdk.localbots import BOT_OUTPUT
from twistarena.engine import Action
from twistarena.sandbox import (
    LINE_LIMIT,
    SandboxLimits,
    SandboxSpec,
    cpu_ns,
    kill_tree,
    limit_events,
    spec_for_command,
    start,
    wait_ready,
)

from .decisionlog import DecisionLogs
from .messages import JSON_FORM
from .seat import BridgedSeat

log = structlog.get_logger("twistarena.bridge")

#: How long a program may take to exit after the end of the match.
EXIT_GRACE_S = 2.0
#: Restarts a program gets per match after a crash, timeout or illegal output.
MAX_RESTARTS = 3
#: Longest wait for a program to be ready (waiting for input) after it starts.
START_WAIT_S = 10.0
#: How often the CPU time of a program waiting for its next decision is looked at.
IDLE_CPU_POLL_S = 0.25
#: The end of its stderr kept for the program's author.
STDERR_TAIL_BYTES = 64 * 1024
#: Stderr bytes logged per match; the rest is only kept in the tail.
STDERR_LOG_BYTES = 64 * 1024
#: How much stderr is read at once.
STDERR_CHUNK = 64 * 1024


@dataclass(slots=True)
class ProgramStats:
    """What one program did in one match (the runner reports it for ``agent show``)."""

    decisions: int = 0
    answered: int = 0
    crashes: int = 0
    timeouts: int = 0
    illegal_outputs: int = 0
    restarts: int = 0
    #: Decisions that came while a restarted program was still starting.
    missed_while_starting: int = 0
    #: Decisions whose CPU time was measured, their total and the largest (ms).
    cpu_measured: int = 0
    cpu_ms_total: float = 0.0
    cpu_ms_max: float = 0.0
    #: CPU time used between decisions (ms), and the times that passed the limit.
    cpu_ms_between: float = 0.0
    cpu_overruns: int = 0
    #: Forks or threads refused at the process cap; processes killed at the memory cap.
    process_limit_hits: int = 0
    oom_kills: int = 0
    stderr_bytes: int = 0
    stderr_tail: bytearray = field(default_factory=bytearray)
    #: The stderr of each decision (``decisionlog``), for the replay beside each step.
    decision_logs: DecisionLogs = field(default_factory=DecisionLogs)

    @property
    def cpu_ms_mean(self) -> float:
        return self.cpu_ms_total / self.cpu_measured if self.cpu_measured else 0.0

    def note_cpu(self, ms: float) -> None:
        self.cpu_measured += 1
        self.cpu_ms_total += ms
        self.cpu_ms_max = max(self.cpu_ms_max, ms)

    def note_stderr(self, chunk: bytes) -> None:
        self.stderr_bytes += len(chunk)
        self.decision_logs.note(chunk)
        tail = self.stderr_tail
        tail += chunk[-STDERR_TAIL_BYTES:]
        if len(tail) > STDERR_TAIL_BYTES:
            del tail[:len(tail) - STDERR_TAIL_BYTES]

    def to_json(self) -> dict[str, Any]:
        return {"decisions": self.decisions, "answered": self.answered,
                "crashes": self.crashes, "timeouts": self.timeouts,
                "illegal_outputs": self.illegal_outputs, "restarts": self.restarts,
                "missed_while_starting": self.missed_while_starting,
                "cpu_ms_mean": round(self.cpu_ms_mean, 3),
                "cpu_ms_max": round(self.cpu_ms_max, 3),
                "cpu_ms_between": round(self.cpu_ms_between, 3),
                "cpu_overruns": self.cpu_overruns,
                "process_limit_hits": self.process_limit_hits, "oom_kills": self.oom_kills,
                "stderr_bytes": self.stderr_bytes,
                "stderr_tail": self.stderr_tail.decode(errors="replace")}


class ProgramBot(BridgedSeat):
    """Plays a seat by asking a program (see the module docstring).

    ``game`` and ``seat`` are read from the agent once it has joined: call
    ``bind(agent)`` before running it (``bridge.bridged_agent`` does).
    """

    def __init__(self, command: str | Sequence[str], *, form: str = JSON_FORM,
                 sandbox: str | None = None, code_dir: str | Path | None = None,
                 limits: SandboxLimits | None = None, name: str = "",
                 cwd: str | None = None, env: Mapping[str, str] | None = None,
                 max_restarts: int = MAX_RESTARTS) -> None:
        super().__init__()
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise ValueError("an empty command")
        self.form = form
        self.sandbox = sandbox
        #: What the sandbox runs (None: the host's own program, run as it is).
        self.spec: SandboxSpec | None = None
        if sandbox is not None:
            limits = limits or SandboxLimits()
            if code_dir is not None:
                self.spec = SandboxSpec(Path(code_dir), self.argv, dict(env or {}), limits)
            elif sandbox == "none":  # the host's command as it is, only with the limits
                self.spec = SandboxSpec(Path(cwd or "."), self.argv, dict(env or {}), limits)
            else:
                self.spec = spec_for_command(self.argv, env=env, limits=limits)
        self.name = name or self.argv[0]
        self.cwd = cwd
        self.env = dict(env) if env is not None else None
        self.max_restarts = max_restarts
        self.stats = ProgramStats()
        self._proc: asyncio.subprocess.Process | None = None
        self._starting: asyncio.Task[asyncio.subprocess.Process] | None = None
        #: Done once the running program waits for its input.
        self._ready: asyncio.Task[bool] | None = None
        self._stderr: asyncio.Task[None] | None = None
        self._started_once = False
        self._gave_up = False
        self._logged_stderr = 0
        #: CPU time the running program used between decisions so far (ns).
        self._idle_cpu_ns = 0
        #: The program's CPU time when it answered, and who watches it since.
        self._cpu_at_answer: int | None = None
        self._idle_watch: asyncio.Task[None] | None = None
        self._overran = False

    @property
    def restarts(self) -> int:
        """Times the program was started again (after a crash, hang or garbage)."""
        return self.stats.restarts

    @property
    def process(self) -> asyncio.subprocess.Process | None:
        """The running program (None before its start and while it is started again)."""
        return self._proc

    # -- the bot API ---------------------------------------------------------------

    async def seated(self) -> None:
        """Start the program now (its seat is assigned), without waiting for it."""
        with contextlib.suppress(OSError, NoAnswer):
            await self._ensure_started()

    async def prepare(self) -> None:
        """Start the program and wait until it waits for its input (at most
        ``START_WAIT_S``): call it before the agent joins, so that no decision is
        charged for the program's start-up."""
        await self.seated()
        ready = self._ready
        if ready is not None:
            await asyncio.shield(ready)

    async def act(self, observation: Mapping[str, Any], legal_actions: Sequence[Action], *,
                  decision: Decision, rejection: Rejection | None = None) -> int:
        if rejection is None:  # a decision asked again after a refusal is still one
            self.stats.decisions += 1
        if self._gave_up:
            self.failures += 1
            raise NoAnswer(f"the program was restarted {self.max_restarts} times")
        message, timeout = self.decision_text(decision, observation, legal_actions, rejection)
        cpu_before: int | None = None
        deadline = asyncio.get_running_loop().time() + timeout
        sent = False
        await self._end_idle(decision)
        try:
            proc = await asyncio.wait_for(self._ensure_started(), timeout)
            await self._until_ready(decision, deadline)
            cpu_before = cpu_ns(proc)
            sent = True
            self.stats.decision_logs.begin(decision.decision_id)
            line = await asyncio.wait_for(self._exchange(proc, message), self._left(deadline))
        except TimeoutError:
            if not sent:  # still starting: the program has not seen this decision
                self._missed_while_starting(decision)
            await self._fail(decision, "timeout", f"no answer within {decision.time_left_ms} ms")
        except asyncio.CancelledError:
            # The decision was settled (the fallback at the deadline) while the program
            # thought: its late answer would be read as the next one, so it starts afresh.
            if not sent:
                self.failures += 1
                self.stats.missed_while_starting += 1
                raise
            self._note_failure(decision, "timeout", "the decision was settled before it answered")
            await self._stop()
            self._after_failure()
            raise
        except OSError as error:
            await self._fail(decision, "crash", f"could not start it: {error}")
        except NoAnswer:  # it may not be started again
            self.failures += 1
            raise
        if not line:
            await self._fail(decision, "crash", f"it exited ({await self._exit_text()})")
        action, why = self.judge(line.decode(errors="replace"), legal_actions, rejection)
        if action is None:
            await self._fail(decision, "illegal", why)
        assert action is not None
        self.stats.answered += 1
        self._note_cpu(proc, cpu_before)
        self._start_idle(proc)
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
        self.stats.decision_logs.finish()
        log.info("bot program done", bot=self.name, **{
            k: v for k, v in self.stats.to_json().items() if k != "stderr_tail"})

    async def unusable(self) -> str:
        """A command that names no executable file cannot be started (a sandboxed one
        was checked against its folder when its spec was made)."""
        if self.sandbox not in (None, "none"):
            return ""
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

    @staticmethod
    async def _exchange(proc: asyncio.subprocess.Process, message: str) -> bytes:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(message.encode() + b"\n")
            await proc.stdin.drain()
        except ConnectionError:  # it exited: what it printed before may still be read
            pass
        try:
            return await proc.stdout.readline()
        except ValueError:  # a line longer than LINE_LIMIT
            return b"<a line longer than 1 MiB>\n"

    async def _ensure_started(self) -> asyncio.subprocess.Process:
        """The running program, started if need be (one start at a time; a start is
        never abandoned half-way, so no process is left behind)."""
        proc = self._proc
        if proc is not None:
            return proc  # even if it exited: the decision it is asked finds that out
        if self._gave_up:
            raise NoAnswer(f"the program was restarted {self.max_restarts} times")
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self._start())
        starting = self._starting
        try:
            return await asyncio.shield(starting)
        finally:
            if starting.done() and self._starting is starting:
                self._starting = None

    async def _start(self) -> asyncio.subprocess.Process:
        # Checked and counted before anything is awaited: two starts asked for while
        # the previous program is still being killed cannot both pass the cap.
        if self._started_once:
            if self.stats.restarts >= self.max_restarts:
                self._gave_up = True
                raise NoAnswer(f"the program was restarted {self.max_restarts} times")
            self.stats.restarts += 1
            log.warning("starting the bot program again", bot=self.name,
                        restarts=self.stats.restarts)
        self._started_once = True
        await self._stop()
        self._idle_cpu_ns, self._cpu_at_answer = 0, None
        if self.spec is not None:
            assert self.sandbox is not None
            proc = await start(self.spec, self.sandbox, line_limit=LINE_LIMIT)
        else:
            proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=LINE_LIMIT,
                cwd=self.cwd, env=self.env)
        self._proc = proc
        loop = asyncio.get_running_loop()
        self._stderr = loop.create_task(self._read_stderr(proc))
        self._ready = loop.create_task(wait_ready(proc, START_WAIT_S))
        return proc

    @staticmethod
    def _left(deadline: float) -> float:
        return max(0.0, deadline - asyncio.get_running_loop().time())

    async def _until_ready(self, decision: Decision, deadline: float) -> None:
        """Wait, within the decision's time, for a program that is still starting (after
        a restart). If it is not ready in time the decision is not sent (it would
        answer it late, as if it were a later one, and be killed for the delay): the
        fallback settles it, and the program goes on starting for the next one."""
        ready = self._ready
        if ready is None or ready.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(ready), self._left(deadline))
        except TimeoutError:
            self._missed_while_starting(decision)

    def _missed_while_starting(self, decision: Decision) -> None:
        self.failures += 1
        self.stats.missed_while_starting += 1
        log.info("bot program still starting; the match's fallback decides", bot=self.name,
                 decision=decision.decision_id)
        raise NoAnswer("it is still starting")

    async def _read_stderr(self, proc: asyncio.subprocess.Process) -> None:
        """Keep the tail of the program's stderr and log its lines (within the budget),
        reading in large chunks so that a flood costs little."""
        assert proc.stderr is not None
        partial = b""
        with contextlib.suppress(ValueError, OSError):
            while chunk := await proc.stderr.read(STDERR_CHUNK):
                self.stats.note_stderr(chunk)
                if self._logged_stderr >= STDERR_LOG_BYTES:
                    continue
                *lines, partial = (partial + chunk).split(b"\n")
                for raw in lines:
                    self._log_stderr(proc, raw)
                partial = partial[-STDERR_LOG_BYTES:]
            if partial:
                self._log_stderr(proc, partial)

    def _log_stderr(self, proc: asyncio.subprocess.Process, raw: bytes) -> None:
        if self._logged_stderr >= STDERR_LOG_BYTES:
            return
        self._logged_stderr += len(raw) + 1
        log.info(BOT_OUTPUT, bot=self.name, pid=proc.pid,
                 line=raw.decode(errors="replace").rstrip())
        if self._logged_stderr >= STDERR_LOG_BYTES:
            log.info(f"{BOT_OUTPUT}: the rest is not logged (only its end is kept)",
                     bot=self.name, logged_bytes=self._logged_stderr)

    def _note_cpu(self, proc: asyncio.subprocess.Process, before: int | None) -> None:
        after = cpu_ns(proc)
        if before is not None and after is not None:
            self.stats.note_cpu((after - before) / 1e6)

    def _idle_budget_ns(self) -> int:
        limits = self.spec.limits if self.spec is not None else None
        return int(limits.idle_cpu_seconds * 1e9) if limits is not None else 0

    def _start_idle(self, proc: asyncio.subprocess.Process) -> None:
        """From its answer on, the program's CPU time counts as between decisions; a
        sandboxed one with a budget is watched while it waits."""
        self._cpu_at_answer = cpu_ns(proc)
        if self._cpu_at_answer is not None and self._idle_budget_ns():
            self._idle_watch = asyncio.get_running_loop().create_task(self._watch_idle(proc))

    def _idle_used(self, proc: asyncio.subprocess.Process) -> int:
        """CPU time used between decisions by the running program, this wait included."""
        now, then = cpu_ns(proc), self._cpu_at_answer
        waiting = now - then if now is not None and then is not None else 0
        return self._idle_cpu_ns + max(0, waiting)

    def _end_wait(self, proc: asyncio.subprocess.Process) -> None:
        """Add the wait's CPU time so far to the program's count and to its stats."""
        if self._cpu_at_answer is None:
            return
        used = self._idle_used(proc)
        self.stats.cpu_ms_between += (used - self._idle_cpu_ns) / 1e6
        self._idle_cpu_ns, self._cpu_at_answer = used, None

    async def _watch_idle(self, proc: asyncio.subprocess.Process) -> None:
        """Stop the program as soon as its CPU time between decisions passes the
        budget (the next decision counts the failed decision)."""
        budget = self._idle_budget_ns()
        while proc.returncode is None:
            await asyncio.sleep(IDLE_CPU_POLL_S)
            if self._idle_used(proc) > budget:
                self._end_wait(proc)
                self._overran = True
                self.stats.cpu_overruns += 1
                log.warning("bot program used too much CPU between decisions; stopped",
                            bot=self.name, cpu_ms_between=round(self._idle_cpu_ns / 1e6))
                await asyncio.shield(self._reap(proc))
                return

    async def _end_idle(self, decision: Decision) -> None:
        """A decision comes: add the wait's CPU time to the program's count, and fail
        the decision if the program passed its budget (it is started again)."""
        watch, self._idle_watch = self._idle_watch, None
        if watch is not None:
            watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watch
        proc, budget = self._proc, self._idle_budget_ns()
        if proc is not None:
            self._end_wait(proc)
        self._cpu_at_answer = None
        overran, self._overran = self._overran, False
        if proc is None or not budget or not (overran or self._idle_cpu_ns > budget):
            return
        if not overran:
            self.stats.cpu_overruns += 1
        await self._fail(decision, "cpu", f"it used more than {budget / 1e9:g} s of CPU "
                         "between decisions")

    async def _fail(self, decision: Decision, kind: str, why: str) -> None:
        """Record the failure, stop the program (it restarts at once, within the limit),
        and leave the decision to the match's fallback."""
        self._note_failure(decision, kind, why)
        await self._stop()
        self._after_failure()
        raise NoAnswer(why)

    def _note_failure(self, decision: Decision, kind: str, why: str) -> None:
        self.failures += 1
        stats = self.stats
        if kind in ("crash", "cpu"):  # an overrun is also in cpu_overruns
            stats.crashes += 1
        elif kind == "timeout":
            stats.timeouts += 1
        else:
            stats.illegal_outputs += 1
        stats.decision_logs.fail(decision.decision_id, kind, why)
        log.warning("bot program failed a decision; the match's fallback decides it",
                    bot=self.name, decision=decision.decision_id, kind=kind, why=why,
                    restarts=stats.restarts)

    def _after_failure(self) -> None:
        """Start the program again now (so it is ready for the next decision), or give
        the seat to the fallback once it has had all its restarts."""
        if self.stats.restarts >= self.max_restarts:
            self._gave_up = True
            log.warning("bot program restarted too often; the fallback plays the rest of "
                        "the match", bot=self.name, restarts=self.stats.restarts)
            return
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self._start())
            self._starting.add_done_callback(self._started_in_background)

    def _started_in_background(self, task: asyncio.Task[asyncio.subprocess.Process]) -> None:
        if self._starting is task:
            self._starting = None
        if not task.cancelled() and task.exception() is not None:
            log.warning("bot program could not be started again", bot=self.name,
                        error=repr(task.exception()))

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

    async def _reap(self, proc: asyncio.subprocess.Process) -> None:
        """Record what the program's tree hit, then kill all of it (twice is harmless)."""
        hits = limit_events(proc)
        self.stats.process_limit_hits += hits["process_limit"]
        self.stats.oom_kills += hits["oom_kills"]
        await kill_tree(proc)

    async def _stop(self) -> None:
        """Kill the program's whole tree and reap it (a start under way is waited for,
        so that what it starts is killed too)."""
        starting = self._starting
        if starting is not None and asyncio.current_task() is not starting:
            self._starting = None
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await starting
        proc, self._proc = self._proc, None
        watch, self._idle_watch = self._idle_watch, None
        if watch is not None:
            watch.cancel()
        if proc is not None:
            await self._reap(proc)
        ready, self._ready = self._ready, None
        if ready is not None:
            ready.cancel()
        task, self._stderr = self._stderr, None
        if task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(task, 1.0)

