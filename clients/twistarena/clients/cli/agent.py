"""``twistarena agent``: register an agent and manage the versions the arena hosts.

``agent register --name N`` prints the new agent's id and api token (shown
once: keep it). ``agent versions`` lists the versions of the agent whose api
token is given, ``agent activate VERSION`` makes one (an id or a unique
prefix of at least 6 digits) the one its seats run, and ``agent show ID``
prints an agent with each version's stats: anyone may look, and with the
agent's own api token the build logs and the stderr of recent failures (with
the step each failed at) are shown too. ``agent logs MATCH`` prints what the
agent's seats in a match wrote to stderr, decision by decision, each at its
step of the replay (the agent's own api token only). ``twistarena submit``
uploads a version (docs/hosting.md).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rich.console import Console
from rich.table import Table
from twistarena.v1 import hosting_pb2, matchmaking_pb2

from ..sdk import get_agent, register_agent
from ..sdk.arenas import arena_rating_json, rating_json, recent_match_json
from ..sdk.localbots import configure_logging
from ..sdk.versions import VersionClient, seat_logs_json
from ..terminal import make_console, plain, safe
from . import admintoken
from .command import CommandError, connect, print_json, tls_of
from .options import add_actions, add_admin_token, add_api_token, add_connection_args, add_json

#: Lines of a build log or stderr tail printed (--json has them whole).
TAIL_LINES = 20
#: Digits of a version id in tables (``agent activate`` takes such a prefix).
SHORT_ID = 12


def register(sub: Any) -> None:
    actions = add_actions(sub, "agent", "register an agent, manage its hosted versions",
                          __doc__)

    new = actions.add_parser("register", help="register an agent: prints its id and api token")
    add_connection_args(new)
    new.add_argument("--name", required=True, help="display name (1-100 characters)")
    add_admin_token(new)
    add_json(new)
    new.set_defaults(run=run_register)

    versions = actions.add_parser("versions", help="the agent's versions, newest first")
    add_connection_args(versions)
    add_api_token(versions)
    add_json(versions)
    versions.set_defaults(run=run_versions)
    versions_actions = versions.add_subparsers(dest="versions_action", metavar="[delete]")
    delete = versions_actions.add_parser(
        "delete", help="delete a version no seat needs (not the active one, none playing "
                       "it): frees its bytes; its archive goes with its last version")
    delete.add_argument("version", help="a version id or a unique prefix (6+ digits)")
    add_connection_args(delete)
    add_api_token(delete)
    add_json(delete)
    for action in delete._actions:
        if action.option_strings and action.default is not argparse.SUPPRESS:
            # Not given after `delete`: what was given before it (or its default) holds.
            if action.help:
                action.help = action.help.replace("%(default)s", str(action.default))
            action.default = argparse.SUPPRESS
    delete.set_defaults(run=run_delete)

    activate = actions.add_parser("activate", help="make a version the one its seats run")
    add_connection_args(activate)
    add_api_token(activate)
    activate.add_argument("version", help="a version id or a unique prefix (6+ digits)")
    add_json(activate)
    activate.set_defaults(run=run_activate)

    logs = actions.add_parser("logs", help="what the agent's seats in a match wrote to "
                                           "stderr, step by step")
    add_connection_args(logs)
    add_api_token(logs)
    logs.add_argument("match_id", metavar="MATCH")
    logs.add_argument("--step", type=int, default=None, help="only this step of the replay")
    add_json(logs)
    logs.set_defaults(run=run_logs)

    show = actions.add_parser("show", help="an agent, its versions and their stats")
    add_connection_args(show)
    show.add_argument("agent_id", metavar="ID")
    add_api_token(show, "the agent's own api token: adds build logs and failures "
                        "(default: $TWISTARENA_API_TOKEN)")
    add_json(show)
    show.set_defaults(run=run_show)


def client_from(args: argparse.Namespace) -> VersionClient:
    """The Hosting client of a command's connection flags and --api-token."""
    return connect(VersionClient, args, api_token=args.api_token)


def call(args: argparse.Namespace, work: Callable[[Console], Coroutine[Any, Any, int]],
         needs_token: bool = True) -> int:
    """Run one command's calls, with its console (stderr under --json)."""
    if needs_token and not args.api_token:
        raise CommandError("an api token is needed: --api-token or $TWISTARENA_API_TOKEN "
                           "(twistarena agent register prints one)")
    return asyncio.run(work(make_console(stderr=args.json)))


def print_document(value: Any) -> None:
    """The hosting commands' JSON: one indented document on stdout."""
    print_json(value, indent=2)


def answer(args: argparse.Namespace, console: Console, document: Any, text: str) -> int:
    """A command's answer: the JSON document under --json, else the text."""
    if args.json:
        print_document(document)
    else:
        console.print(text, highlight=False, soft_wrap=True)
    return 0


# -- register ---------------------------------------------------------------------


def run_register(args: argparse.Namespace) -> int:
    async def work(console: Console) -> int:
        configure_logging(args.verbose)
        admin = admintoken.from_args(args)
        agent_id, token = await register_agent(args.server, args.name, admin_token=admin,
                                               **tls_of(args))
        return answer(args, console, {"agent_id": agent_id, "name": args.name,
                                      "api_token": token},
                      f"agent id:  {agent_id}\napi token: {token}\n"
                      "keep the token secret: it is shown only this once")

    return call(args, work, needs_token=False)


# -- versions and activate ------------------------------------------------------------


def run_versions(args: argparse.Namespace) -> int:
    async def work(console: Console) -> int:
        listed = await client_from(args).versions()
        if args.json:
            print_document({"agent_id": listed.agent_id,
                            "versions": [version_json(v) for v in listed.versions]})
        elif not listed.versions:
            console.print(f"agent {listed.agent_id} has no versions yet (twistarena submit)")
        else:
            console.print(versions_table(listed.versions))
        return 0

    return call(args, work)


def run_delete(args: argparse.Namespace) -> int:
    async def work(console: Console) -> int:
        deleted = await client_from(args).delete(args.version)
        freed = f"; its archive ({human_size(deleted.archive_freed)}) removed" \
            if deleted.archive_freed else "; its archive stays (other versions use it)"
        return answer(args, console, {"version_id": deleted.version_id, "size": deleted.size,
                                      "archive_freed": deleted.archive_freed},
                      f"deleted {deleted.version_id} ({human_size(deleted.size)}){freed}")

    return call(args, work)


def run_activate(args: argparse.Namespace) -> int:
    async def work(console: Console) -> int:
        version = await client_from(args).activate(args.version)
        return answer(args, console, version_json(version),
                      f"active: {version.version_id} ({safe(version.entry)})")

    return call(args, work)


# -- show -----------------------------------------------------------------------------


def run_show(args: argparse.Namespace) -> int:
    async def work(console: Console) -> int:
        details = await client_from(args).details(args.agent_id)
        info = await get_agent(args.server, args.agent_id, **tls_of(args))
        if args.json:
            print_document(details_json(details, info))
            return 0
        active = details.active_version_id[:SHORT_ID] or "none"
        console.print(f"[bold]{safe(details.name)}[/bold] ({safe(details.agent_id)})  "
                      f"{rating_line(info)}  active version: {active}", highlight=False,
                      soft_wrap=True)
        if info.arena_ratings:
            console.print(ratings_table(info.arena_ratings))
        if info.recent_matches:
            console.print(recent_table(info.recent_matches))
        if details.versions:
            console.print(versions_table(details.versions))
        if details.owner:
            _print_private(console, details.versions)
        return 0

    return call(args, work, needs_token=False)


def run_logs(args: argparse.Namespace) -> int:
    async def work(console: Console) -> int:
        found = seat_logs_json(await client_from(args).seat_logs(args.match_id))
        for seat in found["seats"]:
            seat["steps"] = [s for s in seat["steps"]
                             if args.step is None or s["step"] == args.step]
        if args.json:
            print_document(found)
            return 0
        for seat in found["seats"]:
            for step in seat["steps"]:
                failed = f" {step['failure']}: {step['why']}" if step["failure"] else ""
                console.rule(f"seat {seat['seat']} step {step['step']}{failed}")
                console.print(step["text"].rstrip("\n") or "(no stderr)", highlight=False,
                              markup=False)
        return 0

    return call(args, work)


def _print_private(console: Console, versions: Any) -> None:
    """Build logs and failures, the tail of each."""
    for version in versions:
        short = version.version_id[:SHORT_ID]
        if version.build_log:
            console.rule(f"build log of {short} ({safe(version.build)})")
            console.print(plain(_tail(version.build_log), lines=True), highlight=False,
                          markup=False)
        for failure in version.stats.failures:
            where = f" seat {failure.seat} step {failure.step}" if failure.reason else ""
            console.rule(f"{short} in match {safe(failure.match_id)}{where}: "
                         f"{safe(failure.reason) or _failure_counts(failure)}")
            console.print(plain(_tail(failure.stderr_tail), lines=True) or "(no stderr)",
                          highlight=False, markup=False)


def _failure_counts(failure: hosting_pb2.VersionFailure) -> str:
    counts = {"crashes": failure.crashes, "timeouts": failure.timeouts,
              "illegal outputs": failure.illegal_outputs, "restarts": failure.restarts}
    return ", ".join(f"{n} {what}" for what, n in counts.items() if n) or "failed"


def _tail(text: str) -> str:
    lines = text.rstrip("\n").splitlines()
    cut = len(lines) - TAIL_LINES
    return "\n".join(([f"... {cut} lines before"] if cut > 0 else []) + lines[-TAIL_LINES:])


# -- shared output --------------------------------------------------------------------


def versions_table(versions: Any) -> Table:
    """The versions as a table, newest first; the active one starred."""
    table = Table(show_edge=False)
    for column in ("version", "created (UTC)", "entry", "size", "files", "matches",
                   "crashes", "timeouts", "illegal", "restarts", "cpu ms mean/max"):
        table.add_column(column, justify="right" if column in (
            "size", "files", "matches", "crashes", "timeouts", "illegal", "restarts") else "left")
    for v in versions:
        stats = v.stats
        table.add_row(
            ("* " if v.active else "  ") + v.version_id[:SHORT_ID],
            time.strftime("%Y-%m-%d %H:%M", time.gmtime(v.created_ms / 1000)),
            safe(v.entry), human_size(v.size), str(v.files), str(stats.matches),
            str(stats.crashes), str(stats.timeouts), str(stats.illegal_outputs),
            str(stats.restarts), f"{stats.cpu_ms_mean:.1f} / {stats.cpu_ms_max:.1f}")
    return table


def human_size(size: int) -> str:
    """Bytes as "812 B", "40.2 KiB", "3.1 MiB"."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"


def version_json(v: hosting_pb2.VersionInfo) -> dict[str, Any]:
    """A version as the commands' --json prints it (numbers as numbers)."""
    stats = v.stats
    return {
        "version_id": v.version_id, "content_hash": v.content_hash, "entry": v.entry,
        "build": v.build, "size": v.size, "unpacked_size": v.unpacked_size, "files": v.files,
        "created_ms": v.created_ms, "active": v.active, "build_log": v.build_log,
        "stats": {
            "matches": stats.matches, "decisions": stats.decisions, "crashes": stats.crashes,
            "timeouts": stats.timeouts, "illegal_outputs": stats.illegal_outputs,
            "restarts": stats.restarts, "cpu_ms_mean": stats.cpu_ms_mean,
            "cpu_ms_max": stats.cpu_ms_max,
            "failures": [{
                "match_id": f.match_id, "at_ms": f.at_ms, "crashes": f.crashes,
                "timeouts": f.timeouts, "illegal_outputs": f.illegal_outputs,
                "restarts": f.restarts, "stderr_tail": f.stderr_tail, "seat": f.seat,
                "step": f.step, "reason": f.reason,
            } for f in stats.failures],
        },
    }


def rating_line(info: matchmaking_pb2.AgentInfo) -> str:
    """The agent's own rating as every surface names it (its best arena row)."""
    if not info.rating_arena_id:
        return "not rated in any arena yet"
    version = f" v{info.rating_version}" if info.rating_version else ""
    return (f"rating mu {info.mu:.2f} sigma {info.sigma:.2f} "
            f"(mu-3sigma {info.mu - 3 * info.sigma:.2f}) over {info.matches} matches in "
            f"{info.rating_arena_id}{version}")


def ratings_table(ratings: Any) -> Table:
    """Every arena rating of the agent's versions; the leaderboard's row starred."""
    table = Table(show_edge=False)
    for column in ("arena", "version", "mu-3sigma", "mu", "sigma", "games", "wins"):
        table.add_column(column, justify="left" if column == "arena" else "right")
    for r in ratings:
        table.add_row(r.arena_id, ("* " if r.current else "  ") + f"v{r.version}",
                      f"{r.mu - 3 * r.sigma:.2f}", f"{r.mu:.2f}", f"{r.sigma:.2f}",
                      str(r.games), str(r.wins))
    return table


def ago(ms: int, now_ms: int | None = None) -> str:
    """How long ago, short: "42s ago", "3m ago", "5h ago", "2d ago"."""
    seconds = max(0, ((now_ms if now_ms is not None else int(time.time() * 1000)) - ms)
                  // 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def recent_table(recent: Any) -> Table:
    """The agent's recent arena matches, newest first (replay: ``twistarena replay ID``)."""
    table = Table(show_edge=False)
    for column in ("when", "arena", "version", "opponents", "place", "score", "match"):
        table.add_column(column, justify="right" if column in ("place", "score") else "left")
    for m in recent:
        table.add_row(ago(m.ended_at.ToMilliseconds()), m.arena_id,
                      f"v{m.version}" if m.version else "-",
                      safe(", ".join(m.opponents)), str(m.place), f"{m.score:g}", m.match_id)
    return table


def details_json(d: hosting_pb2.AgentDetails, info: matchmaking_pb2.AgentInfo) -> dict[str, Any]:
    """``agent show --json``: the rating every surface shows, every arena rating
    (``ratings``), recent matches and versions."""
    return {**rating_json(info), "active_version_id": d.active_version_id, "owner": d.owner,
            "ratings": [arena_rating_json(r) for r in info.arena_ratings],
            "recent_matches": [recent_match_json(m) for m in info.recent_matches],
            "versions": [version_json(v) for v in d.versions]}
