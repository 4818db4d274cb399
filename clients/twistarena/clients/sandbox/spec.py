"""What a sandboxed program is given: its code, its command, its environment, its limits."""

from __future__ import annotations

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
    per process; ``cpu_seconds`` and ``open_files`` are rlimits of every process;
    ``tmp_mb`` caps the private /tmp (which holds the home); ``wall_seconds`` is
    for the caller (``run`` kills a program that lives longer).
    """

    memory_mb: int = 1024
    cpu_seconds: int = 0
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
