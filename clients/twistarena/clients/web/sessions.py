"""Signed-in authors of the web face: sessions, their cookie, CSRF and sign-in limits.

A session is a random id in an HttpOnly, SameSite=Strict cookie (Secure when
the page came over TLS); the agent's api token stays in this process, in the
session the id names, and never reaches the browser again after sign-in.
Sessions live in the web process's memory: a restart of the web face signs
everyone out, and a gateway in front of a cluster keeps its own sessions
(docs/web.md). Every store here is capped: at most ``MAX_SESSIONS`` sessions
(the oldest go first) and ``MAX_ADDRESSES`` addresses counted for sign-in
attempts.

Every request that changes something must carry the session's CSRF token
(header ``X-CSRF-Token`` or form field ``csrf``) and, when the browser sends
one, an ``Origin`` equal to the page's own; the sign-in and registration forms
(which have no session yet) are checked by their ``Origin``.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

COOKIE = "twistarena_session"
#: A session ends this long after sign-in, whatever is done with it.
SESSION_TTL_S = 8 * 3600.0
#: Sessions kept at once (the oldest is signed out to make room).
MAX_SESSIONS = 10_000
#: Sign-in and registration attempts per address per window.
SIGNIN_ATTEMPTS = 10
SIGNIN_WINDOW_S = 60.0
#: Agents registered through the console per address per hour: the node counts
#: the console's own address (all its visitors together) against
#: ``serve --registers-per-hour``, so the console bounds each visitor itself.
REGISTERS_PER_HOUR = 3
#: Addresses whose attempts are counted at once (the oldest are forgotten).
MAX_ADDRESSES = 10_000


@dataclass(slots=True)
class Session:
    """One signed-in author: the agent and its token, kept here only."""

    agent_id: str
    token: str
    expires_at: float
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))


class SessionStore:
    """Sessions by id, bounded in count and in time."""

    def __init__(self, ttl_s: float = SESSION_TTL_S, most: int = MAX_SESSIONS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.most = most
        self.clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self, agent_id: str, token: str) -> tuple[str, Session]:
        """A new session for the agent: its id (the cookie's value) and itself."""
        while len(self._sessions) >= self.most:
            self._sessions.popitem(last=False)
        sid = secrets.token_urlsafe(32)
        session = Session(agent_id, token, self.clock() + self.ttl_s)
        self._sessions[sid] = session
        return sid, session

    def get(self, sid: str | None) -> Session | None:
        """The live session of this id, None when unknown or expired (then forgotten)."""
        session = self._sessions.get(sid) if sid else None
        if session is None:
            return None
        if self.clock() >= session.expires_at:
            del self._sessions[sid]  # type: ignore[arg-type]
            return None
        return session

    def close(self, sid: str | None) -> None:
        if sid:
            self._sessions.pop(sid, None)


class AttemptLimiter:
    """At most ``attempts`` per address per ``window_s``, over a bounded set of addresses."""

    def __init__(self, attempts: int = SIGNIN_ATTEMPTS, window_s: float = SIGNIN_WINDOW_S,
                 most: int = MAX_ADDRESSES, clock: Callable[[], float] = time.monotonic) -> None:
        self.attempts = attempts
        self.window_s = window_s
        self.most = most
        self.clock = clock
        self._seen: OrderedDict[str, list[float]] = OrderedDict()

    def allow(self, address: str) -> bool:
        now = self.clock()
        recent = [t for t in self._seen.pop(address, []) if now - t < self.window_s]
        allowed = len(recent) < self.attempts
        if allowed:
            recent.append(now)
        self._seen[address] = recent
        while len(self._seen) > self.most:
            self._seen.popitem(last=False)
        return allowed


def over_tls(request: web.Request) -> bool:
    """Whether the browser reached the site over TLS: directly, or through a proxy
    that ended TLS and says so (``X-Forwarded-Proto``; a cross-site form cannot
    set it, and it only makes the cookie stricter)."""
    return request.secure or request.headers.get("X-Forwarded-Proto", "") == "https"


def set_cookie(request: web.Request, response: web.StreamResponse, sid: str,
               ttl_s: float) -> None:
    response.set_cookie(COOKIE, sid, max_age=int(ttl_s), path="/", httponly=True,
                        samesite="Strict", secure=over_tls(request))


def clear_cookie(request: web.Request, response: web.StreamResponse) -> None:
    response.del_cookie(COOKIE, path="/", secure=over_tls(request), samesite="Strict")


def same_origin(request: web.Request) -> bool:
    """False when the browser says the request came from another site's page."""
    origin = request.headers.get("Origin")
    if origin is None:
        return request.headers.get("Sec-Fetch-Site", "same-origin") in ("same-origin", "none")
    return origin == f"{'https' if over_tls(request) else 'http'}://{request.host}"


def csrf_ok(request: web.Request, session: Session, sent: str | None) -> bool:
    """The request carries the session's CSRF token and comes from this site."""
    token = sent or request.headers.get("X-CSRF-Token") or ""
    return same_origin(request) and hmac.compare_digest(token.encode(), session.csrf.encode())
