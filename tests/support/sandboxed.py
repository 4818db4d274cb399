"""Folders for programs the tests run in the sandbox.

The sandbox mounts a view of the folder that its launcher makes; the hostile suite
also runs the launcher as another user (the image's uid), which must then read the
folder: so these are made readable by others, under /tmp (pytest's own temporary
folders are not)."""

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
