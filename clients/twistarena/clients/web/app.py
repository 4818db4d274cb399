"""The web face's routes: the pages, the ``/api/...`` JSON behind them, the assets.

Pages are one small HTML shell each; the page's script (``static/``, plain
ES modules, no build step) fetches its JSON from ``/api/...`` and draws. The
rules pages are rendered here from the project's rules documents.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import structlog
from aiohttp import web
from markdown_it import MarkdownIt
from twistarena import engine
from twistarena.clients.sdk import AgentError

from .gateway import Gateway

log = structlog.get_logger("twistarena.web")

STATIC = Path(__file__).with_name("static")
#: The project's rules documents (docs/rules/GAME.md), when running from a checkout.
RULES_DIR = Path(__file__).resolve().parents[4] / "docs" / "rules"
GATEWAY = web.AppKey("gateway", Gateway)

#: gRPC status of a failed upstream call -> HTTP status of the API answer.
HTTP_STATUS = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
}

NAV = (("/", "Lobby"), ("/arenas", "Arenas"), ("/agents", "Agents"), ("/nodes", "Nodes"),
       ("/console", "My agent"),
       *((f"/rules/{g}", f"{engine.game(g).name} rules") for g in engine.GAME_IDS))


def page(title: str, body: str, script: str = "", extra: str = "", **data: str) -> web.Response:
    """One page: the shared head and navigation around ``body`` (``extra``: a
    second script)."""
    attrs = " ".join(f'data-{k}="{html.escape(v)}"' for k, v in data.items())
    nav = "".join(f'<a href="{href}">{html.escape(name)}</a>' for href, name in NAV)
    tag = "".join(f'<script type="module" src="/static/{s}"></script>'
                  for s in (script, extra) if s)
    text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} · twistarena</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/style.css">
</head><body {attrs}>
<header><a class="brand" href="/">twistarena</a><nav>{nav}</nav></header>
<main id="main">{body}</main>
{tag}
</body></html>"""
    return web.Response(text=text, content_type="text/html")


def api(handler: Callable[[web.Request], Awaitable[Any]]
        ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """An ``/api`` handler: its value as JSON (a response as it is); an upstream
    refusal as its HTTP twin."""
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            value = await handler(request)
            return value if isinstance(value, web.StreamResponse) else web.json_response(value)
        except AgentError as error:
            status = HTTP_STATUS.get(error.code, 502) if error.code else 502
            return web.json_response({"error": str(error), "reason": error.reason},
                                     status=status)
    return wrapped


def gateway_of(request: web.Request) -> Gateway:
    return request.app[GATEWAY]


# -- pages ---------------------------------------------------------------
async def lobby_page(request: web.Request) -> web.Response:
    return page("Lobby", '<p class="loading">loading the lobby...</p>', "lobby.js")


async def match_page(request: web.Request) -> web.Response:
    match_id = request.match_info["match_id"]
    return page(f"Match {match_id}", '<p class="loading">loading the match...</p>',
                "match.js", match=match_id, extra="seatlogs.js")


async def tournament_page(request: web.Request) -> web.Response:
    tid = request.match_info["tournament_id"]
    return page(f"Tournament {tid}", '<p class="loading">loading the tournament...</p>',
                "tournament.js", tournament=tid)


async def agents_page(request: web.Request) -> web.Response:
    return page("Agents", '<p class="loading">loading the agents...</p>', "agents.js")


async def arenas_page(request: web.Request) -> web.Response:
    return page("Arenas", '<p class="loading">loading the arenas...</p>', "arenas.js")


async def arena_page(request: web.Request) -> web.Response:
    arena_id = request.match_info["arena_id"]
    return page(f"Arena {arena_id}", '<p class="loading">loading the leaderboard...</p>',
                "arena.js", arena=arena_id)


async def agent_page(request: web.Request) -> web.Response:
    agent_id = request.match_info["agent_id"]
    return page(f"Agent {agent_id}", '<p class="loading">loading the agent...</p>',
                "agent.js", agent=agent_id)


async def nodes_page(request: web.Request) -> web.Response:
    return page("Nodes", '<p class="loading">loading the nodes...</p>', "nodes.js")


def rules_html(game_id: str) -> str:
    """The game's rules document rendered, or where to find it when it is absent."""
    path = RULES_DIR / f"{game_id}.md"
    if path.is_file():
        rendered: str = MarkdownIt("commonmark", {"html": False}).enable("table").render(
            path.read_text(encoding="utf-8"))
        return f'<article class="rules">{rendered}</article>'
    return (f'<p class="rules-missing">The rules of {html.escape(engine.game(game_id).name)} '
            f"are in the project's <code>docs/rules/{game_id}.md</code>, which this "
            "installation does not include.</p>")


async def rules_page(request: web.Request) -> web.Response:
    game_id = request.match_info["game"]
    if game_id not in engine.GAME_IDS:
        raise web.HTTPNotFound(text=f"no game {game_id!r}; games: {', '.join(engine.GAME_IDS)}")
    return page(f"{engine.game(game_id).name} rules", rules_html(game_id))


# -- JSON ----------------------------------------------------------------
#: The values of /api/matches?status= (a match's status, lower case).
MATCH_STATUSES = ("waiting", "running", "finished", "cancelled")


async def api_matches(request: web.Request) -> web.StreamResponse:
    status = request.query.get("status", "")
    if status and status not in MATCH_STATUSES:
        return web.json_response(
            {"error": f"unknown status {status[:40]!r}; one of {', '.join(MATCH_STATUSES)}",
             "statuses": list(MATCH_STATUSES)}, status=400)
    return await listed_matches(request)


@api
async def listed_matches(request: web.Request) -> Any:
    return await gateway_of(request).lobby(request.query.get("game", ""),
                                           request.query.get("status", ""))


@api
async def api_match(request: web.Request) -> Any:
    return await gateway_of(request).match(request.match_info["match_id"])


@api
async def api_replay(request: web.Request) -> Any:
    return await gateway_of(request).replay(request.match_info["match_id"])


@api
async def api_tournaments(request: web.Request) -> Any:
    return await gateway_of(request).tournament_list()


@api
async def api_tournament(request: web.Request) -> Any:
    return await gateway_of(request).tournament(request.match_info["tournament_id"])


@api
async def api_agents(request: web.Request) -> Any:
    return await gateway_of(request).agents(request.query.get("name", ""))


@api
async def api_agent(request: web.Request) -> Any:
    return await gateway_of(request).agent(request.match_info["agent_id"])


@api
async def api_arenas(request: web.Request) -> Any:
    return await gateway_of(request).arenas()


@api
async def api_arena(request: web.Request) -> Any:
    return await gateway_of(request).arena(request.match_info["arena_id"])


@api
async def api_nodes(request: web.Request) -> Any:
    return await gateway_of(request).nodes()


@api
async def api_games(request: web.Request) -> Any:
    return {"games": [engine.game(g).to_json() for g in engine.GAME_IDS]}


async def api_stream(request: web.Request) -> web.StreamResponse:
    """Server-Sent Events: the match's snapshot, then every view, event and the end.

    Every browser shares the gateway's one Watch of the match (``feeds``)."""
    feed = gateway_of(request).feeds.feed(request.match_info["match_id"])
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "Cache-Control": "no-cache"})
    await response.prepare(request)
    viewer = feed.subscribe()
    try:
        async for frame in feed.frames(viewer):
            await response.write(frame)
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        feed.unsubscribe(viewer)
    with contextlib.suppress(ConnectionError):
        await response.write(b"event: end\ndata: {}\n\n")
    return response


def make_app(gateway: Gateway) -> web.Application:
    """The aiohttp application of the web face, bound to ``gateway``."""
    app = web.Application()
    app[GATEWAY] = gateway
    app.router.add_get("/", lobby_page)
    app.router.add_get("/matches/{match_id}", match_page)
    app.router.add_get("/tournaments/{tournament_id}", tournament_page)
    app.router.add_get("/agents", agents_page)
    app.router.add_get("/agents/{agent_id}", agent_page)
    app.router.add_get("/arenas", arenas_page)
    app.router.add_get("/arenas/{arena_id}", arena_page)
    app.router.add_get("/nodes", nodes_page)
    app.router.add_get("/rules/{game}", rules_page)
    app.router.add_get("/api/games", api_games)
    app.router.add_get("/api/matches", api_matches)
    app.router.add_get("/api/matches/{match_id}", api_match)
    app.router.add_get("/api/matches/{match_id}/replay", api_replay)
    app.router.add_get("/api/matches/{match_id}/stream", api_stream)
    app.router.add_get("/api/tournaments", api_tournaments)
    app.router.add_get("/api/tournaments/{tournament_id}", api_tournament)
    app.router.add_get("/api/agents", api_agents)
    app.router.add_get("/api/agents/{agent_id}", api_agent)
    app.router.add_get("/api/arenas", api_arenas)
    app.router.add_get("/api/arenas/{arena_id}", api_arena)
    app.router.add_get("/api/nodes", api_nodes)
    app.router.add_static("/static/", STATIC)
    from .console import install  # the console builds on this module's pages

    install(app, gateway)
    return app


@contextlib.asynccontextmanager
async def running_web(servers: str | list[str], host: str = "127.0.0.1", port: int = 8080,
                      *, root_cert: bytes | str | None = None,
                      tls: bool = False) -> AsyncIterator[str]:
    """The web face serving in the running event loop; yields its URL.

    ``twistarena web`` runs it alone; ``twistarena serve --web-port`` runs it
    beside the gRPC server in the node's own loop."""
    gateway = Gateway(servers, root_cert=root_cert, tls=tls)
    await gateway.start()
    runner = web.AppRunner(make_app(gateway), access_log=None, shutdown_timeout=1.0)
    try:
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        # The bound socket tells the port chosen for port 0.
        sockets = getattr(site._server, "sockets", None) or ()
        bound = sockets[0].getsockname()[1] if sockets else port
        url = f"http://{host}:{bound}/"
        log.info("web_listening", url=url, servers=",".join(gateway.servers))
        yield url
    finally:
        await gateway.close()
        await runner.cleanup()
