"""The TCP proxy on loopback that cuts a link the way a network does: the one
``twistarena chaos`` uses (``twistarena.tools.chaos.proxy``)."""

from __future__ import annotations

from twistarena.tools.chaos.proxy import Proxy as TcpProxy

__all__ = ["TcpProxy"]
