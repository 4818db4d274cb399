"""The TCP proxy on loopback that cuts a link the way a network does: the one
``twistarena chaos`` uses (``twistarena.tools.chaos.proxy``)."""

from __future__ import annotations

import threading

from twistarena.tools.chaos.proxy import Proxy as TcpProxy

__all__ = ["TcpProxy", "blink_on", "get_match_blinks", "get_match_request"]


def get_match_request(match_id: str) -> bytes:
    """The gRPC message of ``GetMatchRequest(match_id)`` with its 5-byte prefix, as
    a client sends it: a Join carries the id too, but never right after a
    prefix of this length."""
    body = b"\n" + bytes([len(match_id)]) + match_id.encode()
    return b"\x00" + len(body).to_bytes(4, "big") + body


def blink_on(proxy: TcpProxy, sent: bytes, for_s: float = 0.3) -> None:
    """The first time a client sends ``sent`` through ``proxy``, its links go silent
    for ``for_s`` seconds, then are reset (a link that comes back): that call
    fails, and the next one goes through."""
    proxy.trip = (sent,)
    proxy.on_trip = lambda: threading.Timer(for_s, proxy.heal).start()


def get_match_blinks(target: str, match_id: str) -> TcpProxy:
    """A proxy to the server at ``target`` (started: ``stop`` it) whose links blink
    (``blink_on``) at the first ``GetMatch`` of ``match_id``."""
    proxy = TcpProxy(int(target.rsplit(":", 1)[1])).start()
    blink_on(proxy, get_match_request(match_id))
    return proxy
