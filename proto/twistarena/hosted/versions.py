"""How a hosted version is identified: by what makes it run.

Its archive's content hash, its entry command and its build command; the node
(which stores versions) and the tools that seed stores compute it alike.
"""

from __future__ import annotations

import hashlib
import json


def version_id(content_hash: str, entry: str, build: str) -> str:
    """A version's id: sha256 (hex) of its content hash, entry and build command.
    The same archive with another entry command is another version."""
    canonical = json.dumps([content_hash, entry, build], separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
