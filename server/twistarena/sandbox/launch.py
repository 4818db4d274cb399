"""Starting a program in bubblewrap, and killing all of it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from functools import cache
from pathlib import Path

import structlog

from . import cgroups, seccomp
from .spec import CODE_PATH, HOME_PATH, OUTPUT_PATH, SandboxLimits, SandboxSpec, SandboxUnavailable

log = structlog.get_logger("twistarena.sandbox")

BWRAP = "bwrap"
MODES = ("bwrap", "none")
#: The Debian (and Ubuntu) package that provides bwrap.
PACKAGE = "bubblewrap"
#: The uid and gid the program has inside its user namespace ("nobody").
SANDBOX_UID = 65534
#: Longest line the program's stdout reader accepts by default.
LINE_LIMIT = 1 << 20
#: How long ``kill_tree`` waits for the last processes of a tree to be gone.
KILL_WAIT_S = 5.0
#: Top-level directories that hold programs and libraries: read-only, nothing else of /.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: What of /etc a runtime needs: the dynamic loader's cache, the alternatives links
#: (``/usr/bin/java`` goes through them), Java's configuration, the time zone. Not the
#: users, hosts, certificates or anything else the host keeps there.
ETC_ENTRIES = ("ld.so.cache", "alternatives", "localtime", "java-*")

#: How often ``wait_ready`` looks at the program's processes.
READY_POLL_S = 0.01
#: Processes of a tree in bubblewrap before the program itself runs: bwrap, its init.
BWRAP_PROCESSES = 2

#: The host uid a sandbox runs as when this process is root ("nobody"): a program is
#: never host root, which even without capabilities owns /proc/sys and the like.
UNPRIVILEGED_UID = 65534
#: Entries of /proc that are the kernel's, not the program's: read-only binds (their
#: contents follow the reader's namespaces, as on the sandbox's own /proc).
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs")
_NS_PER_TICK = 1_000_000_000 // os.sysconf("SC_CLK_TCK")

#: pid of a started program -> its cgroup, until ``kill_tree``.
_cgroups: dict[int, cgroups.Cgroup] = {}
#: pids of the programs started in bubblewrap, until ``kill_tree``.
_bwrapped: set[int] = set()
#: pid of a program started in bubblewrap -> the neutral copy of its folder it sees.
_staged: dict[int, Path] = {}


def sandbox_mode(requested: str = "bwrap") -> str:
    """The mode programs will run in: "bwrap", or "none" only when asked for by name.

    Raises ``SandboxUnavailable`` (naming the package to install) when bubblewrap is
    missing or cannot make its namespaces here.
    """
    if requested not in MODES:
        raise ValueError(f"unknown sandbox mode {requested!r}: one of {', '.join(MODES)}")
    if requested == "none":
        log.warning("programs will run WITHOUT a sandbox: with this host's files, "
                    "environment and network (--sandbox none)")
        return "none"
    problem = _bwrap_problem()
    if problem:
        raise SandboxUnavailable(
            f"cannot sandbox programs: {problem}. Install Debian's `{PACKAGE}` package "
            f"(apt-get install {PACKAGE}), or run them unsandboxed with --sandbox none")
    return "bwrap"


@cache
def _bwrap_problem() -> str:
    """Why bubblewrap cannot run a sandbox here ("" when it can)."""
    tool = shutil.which(BWRAP)
    if tool is None:
        return "bwrap is not installed"
    try:
        done = subprocess.run(
            [tool, "--unshare-all", "--unshare-user", "--disable-userns", *_system_mounts(),
             "--size", "1048576", "--tmpfs", "/tmp", "true"],
            capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bwrap failed to start: {error}"
    if done.returncode != 0:
        return f"bwrap cannot make a sandbox here: {done.stderr.decode(errors='replace').strip()}"
    return ""


async def start(spec: SandboxSpec, mode: str, *,
                line_limit: int = LINE_LIMIT) -> asyncio.subprocess.Process:
    """Start ``spec``'s program (stdin, stdout and stderr are pipes; its own process
    group). Always end it with ``kill_tree``, even after it exited: that frees its
    cgroup."""
    if mode not in MODES:
        raise ValueError(f"unknown sandbox mode {mode!r}")
    # A few mkdirs and writes in /sys/fs/cgroup: quicker here than a thread's hop.
    limits = spec.limits
    cgroup = cgroups.create(limits.memory_mb, limits.processes, limits.cpu_cores)
    fds: list[int] = []  # what the command reads at its start, closed here after
    staged: Path | None = None
    try:
        if mode == "bwrap":
            staged = await asyncio.to_thread(_stage, Path(spec.code_dir))
        argv, env, cwd = _command(spec, mode, cgroup, fds, staged)
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=line_limit,
            env=env, cwd=cwd, pass_fds=fds)
    except BaseException:
        if cgroup is not None:
            cgroup.remove()
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    if cgroup is not None:
        _cgroups[proc.pid] = cgroup
    if staged is not None:
        _bwrapped.add(proc.pid)
        _staged[proc.pid] = staged
    return proc


def _command(spec: SandboxSpec, mode: str, cgroup: cgroups.Cgroup | None, fds: list[int],
             staged: Path | None) -> tuple[list[str], dict[str, str], Path]:
    """(argv, environment, working directory) that start ``spec`` in ``mode``, its
    folder seen through ``staged`` in bubblewrap; the descriptors the command reads
    are appended to ``fds``."""
    argv = _prelude(spec.limits, cgroup)
    if mode == "none":
        log.warning("starting a program WITHOUT a sandbox (--sandbox none)", argv=spec.argv)
        env = {**spec.environment(), "HOME": tempfile.gettempdir()}
        return [*argv, *_process_rlimit(spec.limits, cgroup), *spec.argv], env, spec.code_dir
    program = seccomp.program()
    filter_fd = _memfd("seccomp", program) if program is not None else None
    if filter_fd is not None:
        fds.append(filter_fd)
    # The options go through a file descriptor, so that the program, which can read
    # its namespace's init's command line (/proc/1/cmdline), sees no host path.
    options = bwrap_options(spec, filter_fd, staged)
    fds.append(_memfd("bwrap-args", b"".join(o.encode() + b"\0" for o in options)))
    argv += [*_unprivileged(spec, staged), _tool(BWRAP), "--args", str(fds[-1]), "--",
             *_process_rlimit(spec.limits, cgroup), *spec.argv]
    return argv, {}, Path("/")


async def wait_ready(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Wait until the program has started and waits for its input: True once every
    thread of its tree is asleep (none running or in disk wait) twice in a row,
    ``READY_POLL_S`` apart; False when it exited or ``timeout`` passed first.

    A runtime that starts slowly (a JVM loads and compiles for a few hundred
    milliseconds) runs until it blocks on stdin; asleep is the first moment it can
    answer. Works for any process (``proc`` need not come from ``start``)."""
    least = BWRAP_PROCESSES + 1 if proc.pid in _bwrapped else 1
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    asleep_before = False
    while proc.returncode is None and loop.time() < deadline:
        pids = _tree(proc.pid)
        asleep = len(pids) >= least and all(_asleep(pid) for pid in pids)
        if asleep and asleep_before:
            return True
        asleep_before = asleep
        await asyncio.sleep(READY_POLL_S)
    return False


def _tree(pid: int) -> list[int]:
    """``pid`` and every process it started, children first found first."""
    found = [pid]
    for parent in found:
        found += _children(parent)
    return found


def _asleep(pid: int) -> bool:
    """Whether every thread of ``pid`` sleeps (state S: waiting for an event)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
        states = [(task / "stat").read_text().rpartition(")")[2].split()[0] for task in tasks]
    except (OSError, IndexError):
        return False
    return bool(states) and all(state == "S" for state in states)


async def kill_tree(proc: asyncio.subprocess.Process) -> None:
    """Kill the program and everything it started, and reap it.

    In bubblewrap, the program's processes live in their own PID namespace, whose
    init is the child of the bwrap we started: killing that init makes the kernel
    kill every process in the namespace, also those that double-forked or called
    setsid (bwrap's --die-with-parent alone does not always: the signal it asks for
    is forgotten when the init changes its uid). The cgroup, where there is one, is
    emptied the same way and removed.
    """
    for pid in [*_children(proc.pid), proc.pid]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    cgroup = _cgroups.pop(proc.pid, None)
    _bwrapped.discard(proc.pid)
    staged = _staged.pop(proc.pid, None)
    if staged is not None:  # links and small copies: at once, so no cancel can skip it
        shutil.rmtree(staged, ignore_errors=True)
    if cgroup is not None:
        await asyncio.to_thread(_empty_and_remove, cgroup)
    try:
        await asyncio.wait_for(proc.wait(), KILL_WAIT_S)
    except TimeoutError:
        # Something outside the tree holds its pipes; the process itself is gone.
        log.error("a sandboxed program's pipes stayed open after kill_tree", pid=proc.pid)


def _children(pid: int) -> list[int]:
    """The direct children of ``pid`` (in bwrap: the init of the program's namespace)."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, ValueError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def cpu_ns(proc: asyncio.subprocess.Process) -> int | None:
    """CPU time (user + system) the program's whole tree used so far: from its cgroup,
    else summed over its live processes in /proc (the time of those that exited is
    then lost); None once it is gone."""
    cgroup = _cgroups.get(proc.pid)
    measured = cgroup.cpu_ns() if cgroup is not None else None
    if measured is not None:
        return measured
    total = sum(_process_cpu_ns(pid) for pid in _tree(proc.pid))
    return total if proc.returncode is None else None


def _process_cpu_ns(pid: int) -> int:
    """CPU time of one live process, summed over its threads: the scheduler's own
    nanosecond count (``schedstat``), since ``stat``'s clock ticks truncate each of
    user and system time to 10 ms, so a short-lived program would read as 0."""
    total = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (task / "stat").read_text().rpartition(")")[2].split()
                total += (int(fields[11]) + int(fields[12])) * _NS_PER_TICK
    return total


def limit_events(proc: asyncio.subprocess.Process) -> dict[str, int]:
    """How often the program's tree hit its cgroup limits so far (``Cgroup.events``;
    zeros where there is no cgroup). Read it before ``kill_tree``."""
    cgroup = _cgroups.get(proc.pid)
    return cgroup.events() if cgroup is not None else {"process_limit": 0, "oom_kills": 0}


def _empty_and_remove(cgroup: cgroups.Cgroup) -> None:
    deadline = time.monotonic() + KILL_WAIT_S
    while True:
        cgroup.kill()
        if cgroup.remove():
            return
        if time.monotonic() > deadline:
            log.error("a sandbox's processes outlived kill_tree", pids=sorted(cgroup.pids()))
            return
        time.sleep(0.002)


def _prelude(limits: SandboxLimits, cgroup: cgroups.Cgroup | None) -> list[str]:
    """A shell that joins the cgroup and sets the rlimits, then execs what follows: both
    bind everything it starts. The shell's built-ins cost a millisecond; a Python
    launcher would cost tens (and ``preexec_fn`` is unsafe in a threaded process)."""
    steps = [f"echo $$ > {shlex.quote(str(p))}" for p in (cgroup.procs_files() if cgroup else [])]
    steps.append("ulimit -c 0")
    if limits.cpu_seconds:
        steps.append(f"ulimit -t {limits.cpu_seconds}")
    if limits.open_files:
        steps.append(f"ulimit -n {limits.open_files}")
    if limits.memory_mb and not (cgroup and cgroup.limits_memory):
        # Address space, not resident memory: runtimes that reserve much more than they
        # use (the JVM, Node) need a generous figure here.
        steps.append(f"ulimit -v {limits.memory_mb * 1024}")
    steps.append("unset PWD OLDPWD")  # the shell's own: not the host's to show
    return ["/bin/sh", "-c", " && ".join([*steps, 'exec "$@"']), "sandbox"]


def _process_rlimit(limits: SandboxLimits, cgroup: cgroups.Cgroup | None) -> list[str]:
    """Without a pids cgroup, the process rlimit, as a ``prlimit`` prefix of the program.

    In bubblewrap it is set inside the sandbox, after its user namespace exists: the
    kernel then counts the processes of the sandbox's uid in that namespace (its own
    tree) against it, not every process of the host's user. (It would not bind a
    process whose host uid is root: none is, see ``_unprivileged``.)"""
    if not limits.processes or (cgroup and cgroup.limits_processes):
        return []
    return [_tool("prlimit"), f"--nproc={limits.processes}", "--"]


def _unprivileged(spec: SandboxSpec, staged: Path | None) -> list[str]:
    """A ``setpriv`` prefix that runs bubblewrap as ``UNPRIVILEGED_UID`` when this
    process is root, so that no process of the program is host root (bubblewrap maps
    the program's uid to the uid that starts it). bubblewrap then reads the staged
    folder as that user (``_stage`` makes it so), and a build's output folder,
    whose parents must let that user through, becomes its own."""
    if os.getuid() != 0:
        return []
    if staged is not None:
        os.chown(staged, UNPRIVILEGED_UID, UNPRIVILEGED_UID)
    if spec.output_dir is not None:
        _chown_tree(Path(spec.output_dir), UNPRIVILEGED_UID)
    uid = str(UNPRIVILEGED_UID)
    return [_tool("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


def _chown_tree(top: Path, uid: int) -> None:
    """Give ``top`` and everything in it to ``uid`` (links themselves, not targets)."""
    os.chown(top, uid, uid, follow_symlinks=False)
    for folder, names, files in os.walk(top):
        for name in [*names, *files]:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


#: Where the neutral views of programs' folders are made (see ``_stage``).
STAGE_PREFIX = "twistarena-bot-"


def _stage(folder: Path) -> Path:
    """A view of ``folder`` under a random name in the temporary directory, which the
    sandbox mounts at /bot: the program's /proc/self/mountinfo shows a bind's host
    path, and the real one (a runner's cache, a version's content hash) is not for
    it to know. Files are hard links where the filesystem and their modes allow
    (nothing copied), else copies readable by the sandbox's user; folders are new,
    so no folder above the real one needs to be open to that user."""
    _sweep_stages()
    staged = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}-"))
    try:
        _stage_into(folder.resolve(), staged)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return staged


@cache
def _sweep_stages() -> None:
    """Remove the views a process that died without ``kill_tree`` left (their names
    start with its pid), once per process."""
    for folder in Path(tempfile.gettempdir()).glob(f"{STAGE_PREFIX}*-*"):
        pid = folder.name.removeprefix(STAGE_PREFIX).partition("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)


def _stage_into(source: Path, target: Path) -> None:
    """Fill ``target`` (its top stays private to its owner: the sandbox's user)."""
    with os.scandir(source) as entries:
        for entry in entries:
            path = target / entry.name
            if entry.is_symlink():
                os.symlink(os.readlink(entry.path), path)
            elif entry.is_dir():
                path.mkdir()
                path.chmod(0o755)
                _stage_into(Path(entry.path), path)
            elif entry.is_file():
                _stage_file(Path(entry.path), path, entry.stat().st_mode)


def _stage_file(source: Path, target: Path, mode: int) -> None:
    """A hard link of ``source`` where any user may read it, else a copy that any
    user may read (and run, where its owner may)."""
    readable = mode & stat.S_IROTH and (not mode & stat.S_IXUSR or mode & stat.S_IXOTH)
    if readable:
        with contextlib.suppress(OSError):  # another filesystem, protected_hardlinks
            os.link(source, target)
            return
    shutil.copyfile(source, target)
    target.chmod(0o755 if mode & stat.S_IXUSR else 0o644)


@cache
def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise SandboxUnavailable(f"{name} (util-linux) is not installed")
    return found


def _memfd(name: str, data: bytes) -> int:
    """An anonymous file holding ``data``, read from its start by whoever inherits it."""
    fd = os.memfd_create(name, 0)  # not close-on-exec: bwrap reads it
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def bwrap_argv(spec: SandboxSpec, seccomp_fd: int | None = None) -> list[str]:
    """The bubblewrap command that runs ``spec``, for a person to read (``start`` passes
    the options through a file descriptor instead, and mounts a staged view of the
    program's folder)."""
    return [_tool(BWRAP), *bwrap_options(spec, seccomp_fd), "--", *spec.argv]


def bwrap_options(spec: SandboxSpec, seccomp_fd: int | None,
                  staged: Path | None = None) -> list[str]:
    """bubblewrap's options for ``spec`` (see the package docstring), its folder
    mounted from ``staged`` when given."""
    # /tmp (with the home) and /dev/shm (POSIX shared memory, multiprocessing's
    # semaphores) are the only writable places, each a tmpfs of tmp_mb.
    size = ["--size", str(spec.limits.tmp_mb * 1024 * 1024)] if spec.limits.tmp_mb else []
    options = ["--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net",
               "--unshare-uts", "--unshare-cgroup-try", "--disable-userns",
               "--die-with-parent", "--new-session", "--cap-drop", "ALL",
               "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "bot",
               *_system_mounts(),
               "--proc", "/proc", *_proc_read_only(), "--dev", "/dev",
               *size, "--perms", "1777", "--tmpfs", "/tmp", "--dir", HOME_PATH,
               *size, "--perms", "1777", "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
               "--ro-bind", str(staged or Path(spec.code_dir).resolve()), CODE_PATH]
    if spec.output_dir is not None:
        options += ["--bind", str(Path(spec.output_dir).resolve()), OUTPUT_PATH]
    # The root bwrap builds is a tmpfs of its own: read-only too, so that only the
    # capped /tmp (and a build's /out) can be written.
    options += ["--remount-ro", "/", "--chdir", CODE_PATH, "--clearenv"]
    for key, value in spec.environment().items():
        options += ["--setenv", key, value]
    if seccomp_fd is not None:
        options += ["--seccomp", str(seccomp_fd)]
    return options


@cache
def _proc_read_only() -> tuple[str, ...]:
    """Read-only binds over the kernel's entries of the sandbox's /proc (bubblewrap
    covers some only when they look writable, and /proc/sys never does to root)."""
    mounts: list[str] = []
    for name in PROC_READ_ONLY:
        if Path("/proc", name).exists():
            mounts += ["--ro-bind", f"/proc/{name}", f"/proc/{name}"]
    return tuple(mounts)


@cache
def _system_mounts() -> tuple[str, ...]:
    """Read-only binds of the system directories (symlinks kept as symlinks, as on a
    merged-/usr system) and of the few /etc entries a runtime needs."""
    mounts: list[str] = []
    for top in SYSTEM_DIRS:
        path = Path(top)
        if path.is_symlink():
            mounts += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            mounts += ["--ro-bind", top, top]
    etc = Path("/etc")
    for pattern in ETC_ENTRIES:
        for entry in sorted(etc.glob(pattern)):
            mounts += ["--ro-bind", str(entry), str(entry)]
    return tuple(mounts)
