"""Seat tokens and the admin token.

A seat token is ``st_`` + ``secrets.token_urlsafe(24)`` (an agent's api token
``at_`` + the same); the store keeps only its sha256. The prefix says what a
leaked secret is, and keeps a token from starting with "-", which a command
line would take for an option. Agents send it in ``Join.seat_token`` or as call metadata
``authorization: Bearer <token>``; admin calls send the admin token the same way.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from typing import Any

from twistarena.wire import AUTHORIZATION_KEY

SEAT_TOKEN_PREFIX = "st_"
AGENT_TOKEN_PREFIX = "at_"


def new_token(prefix: str = SEAT_TOKEN_PREFIX) -> str:
    """A fresh secret token with a prefix that says what it is for."""
    return prefix + secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    """What the store keeps of a token: its sha256, hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def bearer(metadata: Iterable[Any] | None) -> str:
    """The bearer token of call metadata, or ''."""
    for item in metadata or ():
        key, value = item[0], item[1]
        if key.lower() == AUTHORIZATION_KEY:
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            scheme, _, token = str(value).partition(" ")
            if scheme.lower() == "bearer":
                return token.strip()
    return ""


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison of two secrets."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"),
                               expected.encode("utf-8", "surrogatepass"))


def seat_for_digest(digest: str, token_hashes: dict[int, str]) -> int | None:
    """The seat whose stored hash is ``digest``, a token's ``token_hash`` (compared in
    constant time); the caller hashes the token once for every use it has for it."""
    if not digest:
        return None
    found: int | None = None
    for seat, stored in token_hashes.items():
        if hmac.compare_digest(digest, stored):
            found = seat
    return found
