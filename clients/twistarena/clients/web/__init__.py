"""The web face of the arena: lobby, match tables and replays, tournaments, nodes.

A client of the gRPC contract like any other (``twistarena web --server
ADDR``), or run by ``twistarena serve --web-port P`` in the node's own
process. Why this stack (docs/web.md): aiohttp serves HTTP and Server-Sent
Events from the asyncio loop the gRPC server already runs in; the pages are
plain HTML, CSS and ES modules served from ``static/`` (no CDN, no build
step), so the site works offline.
"""

from .app import make_app, running_web
from .feeds import FeedHub, MatchFeed, Viewer
from .gateway import Gateway

__all__ = ["FeedHub", "Gateway", "MatchFeed", "Viewer", "make_app", "running_web"]
