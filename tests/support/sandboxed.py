"""Folders for programs the tests run in the sandbox.

A root host without a pids cgroup runs bubblewrap as nobody, which must then read
the program's folder: so these are made readable by others, under /tmp (pytest's
own temporary folders are not)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def program_folder(prefix: str = "ta-program-") -> Iterator[Path]:
    """A new folder any user can read, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
