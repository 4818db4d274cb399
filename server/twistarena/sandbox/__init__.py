"""The sandbox: how every program someone else wrote is run (bots and their builds).

``start(SandboxSpec(code_dir, argv), sandbox_mode())`` runs ``argv`` in
bubblewrap (Debian's ``bubblewrap`` package):

- new user, mount, PID, IPC, UTS, network and cgroup namespaces; no network at
  all (not even loopback to the host), no capabilities, uid and gid 65534
  inside, no nested user namespaces, a new session (no terminal injection);
  never host root: as root, bubblewrap is started as nobody, so the program's
  host uid is 65534 too;
- a read-only file system of the system directories (/usr and the /bin, /lib
  links), a handful of /etc entries a runtime needs (the loader cache, the
  alternatives links, Java's configuration), the program's files at ``/bot``
  (its working directory) and a build's output read-write at ``/out``; the only
  other writable places are a private /tmp (which holds its home,
  ``/tmp/home``) and /dev/shm, tmpfs of ``tmp_mb`` each; its own /proc (its
  processes only; the kernel's entries, /proc/sys first, read-only) and a
  minimal /dev; its folder is mounted from a view under a random name
  (``_stage``), so that its mount table names no host path of it;
- an environment of PATH, HOME, LANG, PWD (``/bot``, bwrap's) and the
  ``TWISTARENA_*`` variables the caller passes, nothing of the host's; bwrap's
  options (host paths) reach it through a file descriptor, so its namespace's
  init shows none of them;
- a seccomp filter that allows the calls of the starter languages' programs and
  builds, and refuses the rest (``seccomp.py``);
- limits (``SandboxLimits``): processes and threads together, memory, and the
  CPU used at once, for the whole tree by a cgroup where this host lets us make
  one (``cgroups.py``), else by rlimits (the process count inside the sandbox's
  user namespace); CPU seconds and open files by rlimits everywhere. Rlimits
  cannot be raised again from inside.

``wait_ready`` tells when the program waits for its input (a seat joins then);
``cpu_ns`` and ``limit_events`` measure it; ``kill_tree`` ends all of it: the PID
namespace dies with its init, taking every process with it (double forks and
setsid included), and the cgroup is emptied and removed.
``sandbox_mode("none")`` runs programs bare (with a warning at every start) for
hosts that accept that; without bubblewrap, ``sandbox_mode()`` refuses with the
package name.
"""
from __future__ import annotations

from .launch import (
    LINE_LIMIT,
    MODES,
    PACKAGE,
    bwrap_argv,
    cpu_ns,
    kill_tree,
    limit_events,
    sandbox_mode,
    start,
    wait_ready,
)
from .spec import (
    CODE_PATH,
    ENV_PREFIX,
    HOME_PATH,
    OUTPUT_PATH,
    SandboxLimits,
    SandboxSpec,
    SandboxUnavailable,
    spec_for_command,
)

__all__ = [
    "CODE_PATH",
    "ENV_PREFIX",
    "HOME_PATH",
    "LINE_LIMIT",
    "MODES",
    "OUTPUT_PATH",
    "PACKAGE",
    "SandboxLimits",
    "SandboxSpec",
    "SandboxUnavailable",
    "bwrap_argv",
    "cpu_ns",
    "kill_tree",
    "limit_events",
    "sandbox_mode",
    "spec_for_command",
    "start",
    "wait_ready",
]
