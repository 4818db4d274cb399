"""``submit --build``: build a version on the submitter's side, inside the sandbox.

The build command runs once, in a sandbox of its own (``twistarena.sandbox``)
with the build's limits (120 s, 2 GiB, more processes and a larger /tmp than a
bot gets: compilers fork and spill), on a writable copy of the source mounted
at ``/out``; what it leaves there is packed as the version, and its output
(stdout and stderr, the last 64 KiB) is kept as the build log. The source
itself is never written to.

Why here and not on the server or a runner: whatever an author uploads,
built or not, only ever runs inside a runner's sandbox, so the arena gains no
safety by building it itself, and building on the author's side needs no
build queue, no compilers on runners and no wait before a seat's first
decision. The output must run on the runners' system (Linux, x86-64).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from twistarena.hosted.archives import pack_directory

from . import OUTPUT_PATH, SandboxLimits, SandboxSpec, kill_tree, start

#: What a build may use: 120 s of wall time, 2 GiB, two cores at once; threads of a
#: compiler or a JVM.
BUILD_LIMITS = SandboxLimits(memory_mb=2048, cpu_seconds=240, cpu_cores=2.0, processes=256,
                             tmp_mb=512, open_files=1024, wall_seconds=120)
#: The build log keeps its newest bytes.
LOG_BYTES = 64 * 1024
#: The variable that tells the build command where its writable copy is.
BUILD_DIR_VAR = "TWISTARENA_BUILD_DIR"


class BuildFailed(Exception):
    """The build exited with an error or ran out of time; ``log`` is its output."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True, slots=True)
class Built:
    """A build's result: the packed output and the build log."""

    archive: bytes
    log: str


async def build(source: Path, command: str, mode: str,
                limits: SandboxLimits = BUILD_LIMITS) -> Built:
    """Run ``command`` (a shell command line) on a copy of ``source`` in the sandbox
    (``mode``: ``sandbox_mode()``'s answer) and pack what it leaves."""
    with tempfile.TemporaryDirectory(prefix="twistarena-build-") as scratch:
        # The sandbox's user (not root) binds and writes the copy: let it through.
        Path(scratch).chmod(0o711)
        work = Path(scratch) / "out"
        shutil.copytree(source, work, symlinks=True)
        # In the sandbox the copy is /out; run bare (--sandbox none) it is the copy itself.
        where = OUTPUT_PATH if mode == "bwrap" else str(work)
        spec = SandboxSpec(code_dir=work, output_dir=work, limits=limits,
                           argv=["/bin/sh", "-c", f'cd "${BUILD_DIR_VAR}" && {command}'],
                           env={BUILD_DIR_VAR: where})
        proc = await start(spec, mode)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        log = bytearray()
        readers = [asyncio.ensure_future(_collect(s, log)) for s in (proc.stdout, proc.stderr)]
        try:
            proc.stdin.close()
            code = await asyncio.wait_for(proc.wait(), limits.wall_seconds)
        except TimeoutError:
            raise BuildFailed(f"the build ran longer than {limits.wall_seconds:.0f} s",
                              _text(log)) from None
        finally:
            await kill_tree(proc)  # also what the build left running, and its cgroup
            await asyncio.gather(*readers, return_exceptions=True)
        if code != 0:
            raise BuildFailed(f"the build exited with status {code}", _text(log))
        return Built(await asyncio.to_thread(pack_directory, work), _text(log))


async def _collect(stream: asyncio.StreamReader, log: bytearray) -> None:
    """Append a stream's output to the log, keeping only its newest bytes."""
    while chunk := await stream.read(65536):
        log += chunk
        if len(log) > 2 * LOG_BYTES:
            del log[:-LOG_BYTES]


def _text(log: bytearray) -> str:
    return bytes(log[-LOG_BYTES:]).decode("utf-8", "replace")
