"""A control group per sandboxed program, where the host lets us make one.

A cgroup binds the whole process tree at once, which rlimits cannot: ``pids.max``
counts every process and thread of the program together (an rlimit on processes
counts those of a user id, all sandboxes and the host's own alike, and not at
all for root), and the memory limit is the tree's resident memory rather than
each process's address space (which a JVM or Node reserves by the gigabyte).
It also lists every process of the program, so ``kill`` finds even one that
left its process group, measures the tree's CPU time, and caps the CPU the tree
uses at once (``cpu.max`` in v2, the CFS quota in v1): a program that leaves
processes spinning gets a share of the host's cores, not all of them.

Both cgroup layouts are handled: v1 (one hierarchy per controller, e.g.
``/sys/fs/cgroup/pids``) and v2 (one unified hierarchy). Groups are made under
the cgroup this process runs in (the part of the tree delegated to it); a host
where that fails (no permission, a read-only /sys/fs/cgroup) gets ``None`` and
the sandbox falls back to rlimits.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import structlog

log = structlog.get_logger("twistarena.sandbox")

ROOT = Path("/sys/fs/cgroup")
#: The folder, under this process's own cgroup, that holds the programs' groups.
PARENT = "twistarena-sandbox"
#: cgroup v1 controllers used, each its own hierarchy.
V1_CONTROLLERS = ("pids", "memory", "cpuacct", "cpu")
#: The scheduler period of a CPU quota (µs): the quota is cores x this, per period.
CPU_PERIOD_US = 100_000

_names = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Cgroup:
    """One program's groups: controller -> its directory (v2: the same one for all)."""

    dirs: dict[str, Path]
    unified: bool

    @property
    def limits_processes(self) -> bool:
        return "pids" in self.dirs

    @property
    def limits_memory(self) -> bool:
        return "memory" in self.dirs

    @property
    def limits_cpu(self) -> bool:
        return "cpu" in self.dirs

    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process writes its pid to, to join every group."""
        return sorted({d / "cgroup.procs" for d in self.dirs.values()})

    def cpu_ns(self) -> int | None:
        """CPU time of the whole tree so far (user + system), if measured."""
        folder = self.dirs.get("cpuacct")
        if folder is None:
            return None
        try:
            if not self.unified:
                return int((folder / "cpuacct.usage").read_text())
            for line in (folder / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) * 1000
        except (OSError, ValueError):
            return None
        return None

    def events(self) -> dict[str, int]:
        """How often the tree hit its limits: ``process_limit`` (a fork or thread refused
        by ``pids.max``) and ``oom_kills`` (a process killed at the memory limit)."""
        found = {"process_limit": 0, "oom_kills": 0}
        sources = (("pids", "pids.events", "max", "process_limit"),
                   ("memory", "memory.events" if self.unified else "memory.oom_control",
                    "oom_kill", "oom_kills"))
        for controller, name, key, out in sources:
            folder = self.dirs.get(controller)
            if folder is None:
                continue
            with contextlib.suppress(OSError, ValueError):
                for line in (folder / name).read_text().splitlines():
                    field, _, value = line.partition(" ")
                    if field == key:
                        found[out] = int(value)
        return found

    def pids(self) -> set[int]:
        """Every process still in the group."""
        found: set[int] = set()
        for path in self.procs_files():
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in path.read_text().split())
        return found

    def kill(self) -> None:
        """SIGKILL every process in the group (new ones cannot escape: the pids are read
        again until none is left or a few rounds have passed). The CPU quota is lifted
        first: a throttled process would wait for its next period to die."""
        cpu = self.dirs.get("cpu")
        if cpu is not None:
            with contextlib.suppress(OSError):
                if self.unified:
                    (cpu / "cpu.max").write_text("max")
                else:
                    (cpu / "cpu.cfs_quota_us").write_text("-1")
        if self.unified:
            with contextlib.suppress(OSError):
                (self.dirs["cpuacct"] / "cgroup.kill").write_text("1")
        for _ in range(20):
            alive = self.pids()
            if not alive:
                return
            for pid in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> bool:
        """Delete the groups (they must be empty); False when one is still busy."""
        done = True
        for folder in set(self.dirs.values()):
            try:
                folder.rmdir()
            except FileNotFoundError:
                pass
            except OSError:
                done = False
        return done


def controllers() -> set[str]:
    """The controllers this process can give a sandbox ("pids", "memory", "cpuacct",
    "cpu")."""
    return set(_parents())


def create(memory_mb: int, processes: int, cpu_cores: float = 0) -> Cgroup | None:
    """A new group for one program with these limits (0: none), or None when the host
    does not let this process make one."""
    parents = _parents()
    if not parents:
        return None
    name = f"p{os.getpid()}-{next(_names)}"
    dirs: dict[str, Path] = {}
    unified = _unified()
    try:
        for controller, parent in parents.items():
            folder = parent / name
            if folder not in dirs.values():
                folder.mkdir()
            dirs[controller] = folder
        cgroup = Cgroup(dirs, unified)
        if processes and "pids" in dirs:
            (dirs["pids"] / "pids.max").write_text(str(processes))
        if memory_mb and "memory" in dirs:
            _limit_memory(dirs["memory"], memory_mb * 1024 * 1024, unified)
        if cpu_cores and "cpu" in dirs:
            _limit_cpu(dirs["cpu"], cpu_cores, unified)
    except OSError as error:
        log.warning("sandbox cgroup refused; limits fall back to rlimits", error=str(error))
        Cgroup(dirs, unified).remove()
        return None
    return cgroup


def _limit_memory(folder: Path, limit: int, unified: bool) -> None:
    """Cap resident memory, and swap too (so the cap is not dodged by swapping)."""
    if unified:
        (folder / "memory.max").write_text(str(limit))
        with contextlib.suppress(OSError):
            (folder / "memory.swap.max").write_text("0")
        return
    (folder / "memory.limit_in_bytes").write_text(str(limit))
    with contextlib.suppress(OSError):  # absent when the kernel does not account swap
        (folder / "memory.memsw.limit_in_bytes").write_text(str(limit))


def _limit_cpu(folder: Path, cores: float, unified: bool) -> None:
    """Let the tree run ``cores`` CPUs' worth at most, whatever its number of threads."""
    quota = max(1000, round(cores * CPU_PERIOD_US))
    if unified:
        (folder / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
        return
    (folder / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
    (folder / "cpu.cfs_quota_us").write_text(str(quota))


@cache
def _unified() -> bool:
    return (ROOT / "cgroup.controllers").exists()


@cache
def _parents() -> dict[str, Path]:
    """controller -> the folder new groups go in; empty when none can be made."""
    own = _own_paths()
    found: dict[str, Path] = {}
    if _unified():
        parent = ROOT / own.get("", "/").lstrip("/") / PARENT
        try:
            parent.mkdir(exist_ok=True)
            enabled = (parent.parent / "cgroup.subtree_control").read_text().split()
            for controller in ("pids", "memory"):
                if controller not in enabled:
                    (parent.parent / "cgroup.subtree_control").write_text(f"+{controller}")
            (parent / "cgroup.subtree_control").write_text("+pids +memory")
        except OSError as error:
            log.info("no cgroup for sandboxes (v2)", error=str(error))
            return {}
        _sweep(parent)
        found = {"pids": parent, "memory": parent, "cpuacct": parent}
        try:  # optional: without it, the rlimit on CPU seconds is the cap
            for folder in (parent.parent, parent):
                (folder / "cgroup.subtree_control").write_text("+cpu")
            found["cpu"] = parent
        except OSError as error:
            log.info("no cpu controller for sandboxes (v2)", error=str(error))
        return found
    for controller in V1_CONTROLLERS:
        mount = ROOT / controller
        if not (mount / "cgroup.procs").exists():
            continue
        parent = mount / own.get(controller, "/").lstrip("/") / PARENT
        try:
            parent.mkdir(exist_ok=True)
            probe = parent / f"probe-{os.getpid()}"
            probe.mkdir(exist_ok=True)
            probe.rmdir()
        except OSError as error:
            log.info("no cgroup for sandboxes", controller=controller, error=str(error))
            continue
        found[controller] = parent
        _sweep(parent)
    return found


def _sweep(parent: Path) -> None:
    """End what a process that died without ``kill_tree`` (a runner killed -9) left
    behind: its groups' names start with its pid; their processes are killed and the
    groups removed (those still emptying are left for the next sweep)."""
    for folder in parent.glob("p*-*"):
        pid = folder.name[1:].partition("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            left = Cgroup({"pids": folder}, unified=False)
            left.kill()
            left.remove()


def _own_paths() -> dict[str, str]:
    """controller (v2: "") -> this process's cgroup path, from /proc/self/cgroup."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths
