"""What a sandboxed program is given: its code, its command, its environment, its limits."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: The only environment variables a caller may hand a program (PATH, HOME and LANG
#: are the sandbox's own): everything else of the host stays outside.
ENV_PREFIX = "TWISTARENA_"
#: Where the program's files are (read-only) and its working directory.
CODE_PATH = "/bot"
#: Where a build writes the files that become the version (read-write).
OUTPUT_PATH = "/out"
#: The program's home: a directory of its private, size-capped /tmp.
HOME_PATH = "/tmp/home"
PATH_VALUE = "/usr/local/bin:/usr/bin:/bin"
LANG_VALUE = "C.UTF-8"


class SandboxUnavailable(RuntimeError):
    """The host cannot sandbox programs (no bubblewrap) and did not ask to run them bare."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """What one program (with everything it starts) may use; 0 means no limit of that kind.

    ``memory_mb`` and ``processes`` (processes and threads together) bind the whole
    tree through a cgroup where the host lets us create one, else through rlimits
    per process; ``cpu_cores`` caps the CPU the whole tree uses at once (a cgroup
    CPU quota, where the host lets us set one); ``cpu_seconds`` and ``open_files``
    are rlimits of every process (``cpu_seconds`` is the CPU cap that holds
    everywhere);
    ``tmp_mb`` caps the private /tmp (which holds the home) and /dev/shm;
    ``idle_cpu_seconds`` is the CPU time a bot may use between its decisions (the
    bridge's to enforce); ``wall_seconds`` is the caller's to enforce (``start`` does not time the
    program: a build, say, ends it with ``kill_tree`` when it is up).
    """

    memory_mb: int = 1024
    cpu_seconds: int = 0
    cpu_cores: float = 1.0
    idle_cpu_seconds: float = 0
    processes: int = 64
    tmp_mb: int = 64
    open_files: int = 256
    wall_seconds: float = 0


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    """One program to start: ``argv`` runs with the working directory ``/bot``, where
    ``code_dir`` is mounted read-only; a build also gets ``output_dir`` read-write at
    ``/out``. ``env`` may hold only ``TWISTARENA_*`` variables."""

    code_dir: Path
    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    limits: SandboxLimits = SandboxLimits()
    output_dir: Path | None = None

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("an empty command")
        foreign = sorted(k for k in self.env if not k.startswith(ENV_PREFIX))
        if foreign:
            raise ValueError(f"only {ENV_PREFIX}* variables reach a sandboxed program, "
                             f"not {', '.join(foreign)}")

    def environment(self) -> dict[str, str]:
        """The program's whole environment."""
        return {"PATH": PATH_VALUE, "HOME": HOME_PATH, "LANG": LANG_VALUE, **self.env}


#: Where the interpreters a sandboxed command may name by absolute path live.
SYSTEM_PREFIXES = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/")


def spec_for_command(command: str | Sequence[str], *, env: Mapping[str, str] | None = None,
                     limits: SandboxLimits | None = None) -> SandboxSpec:
    """The sandbox of a program given as a host command (``exec:`` entrants, ``bot
    --exec --sandbox``): the folder of the first file (or folder) the command names
    becomes ``/bot``, and the command names it from there.

    ``uploads/alice/bot`` runs ``./bot`` with ``uploads/alice`` as ``/bot``;
    ``node uploads/bob/bot.js`` runs ``node bot.js`` with ``uploads/bob``;
    ``java -cp build Bot`` runs ``java -cp . Bot`` with ``build``. Nothing else of
    the host is visible, so an interpreter must be one of the system's.
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("an empty command")
    folder: Path | None = None
    for index, word in enumerate(argv):
        if index == 0 and "/" not in word:
            continue  # an interpreter on the sandbox's PATH
        path = Path(word)
        if path.is_file() or (index > 0 and path.is_dir()):
            folder = path.absolute() if path.is_dir() else path.absolute().parent
            if not path.resolve().is_relative_to(folder.resolve()):
                raise ValueError(f"{word} is a link to {path.resolve()}, which is not in "
                                 "the sandbox (only the program's folder and the system "
                                 "directories are)")
            folder = folder.resolve()
            break
    if folder is None:
        raise ValueError(f"cannot tell which folder holds the program of {shlex.join(argv)!r}: "
                         "name its file (or, for Java, its class folder) in the command")
    inside: list[str] = []
    for index, word in enumerate(argv):
        path = Path(word)
        resolved = path.resolve() if (index > 0 or "/" in word) and path.exists() else None
        if resolved is not None and resolved.is_relative_to(folder):
            relative = resolved.relative_to(folder).as_posix()
            word = ("./" + relative if index == 0 else relative) if relative != "." else "."
        elif index == 0 and word.startswith("/") and not word.startswith(SYSTEM_PREFIXES):
            raise ValueError(f"{word} is not in the sandbox (only the program's folder and "
                             "the system directories are): use an interpreter of /usr/bin")
        inside.append(word)
    return SandboxSpec(folder, inside, dict(env or {}), limits or SandboxLimits())
