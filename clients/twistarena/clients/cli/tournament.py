"""``twistarena tournament``: tournaments run by the server.

``create`` starts one (house bot strategies and registered agent ids as
entrants) and follows it with a live standings table and a progress bar;
``follow`` does the same for a running one; ``show`` prints the standings
once; ``--csv``/``--json`` export them (with every game, in the JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from twistarena.bridge import JSON_FORM, TEXT_FORM
from twistarena.bridge.hosted import play_hosted, program_commands, register_programs
from twistarena.engine import GAME_IDS
from twistarena.league import report_json, standings_to_csv
from twistarena.sandbox import (
    MODES,
    SandboxLimits,
    SandboxUnavailable,
    sandbox_mode,
    spec_for_command,
)
from twistarena.v1 import tournaments_pb2

from ..sdk import AgentError
from ..sdk.tournaments import FORMATS, TournamentClient, results_of, standings_of
from ..terminal import make_console, safe
from . import admintoken
from .command import FAILED, connect, print_json, tls_of
from .options import (
    JSON_HELP,
    add_actions,
    add_admin_token,
    add_cancel,
    add_connection_args,
    add_flag_table,
    add_json,
    add_players,
)


def register(sub: Any) -> None:
    actions = add_actions(sub, "tournament", "tournaments run by the server", __doc__)
    create = actions.add_parser("create", help="start a tournament and follow it")
    add_connection_args(create)
    create.add_argument("--game", required=True, choices=GAME_IDS)
    create.add_argument("--format", default="round-robin", choices=sorted(FORMATS))
    create.add_argument("--entrants", required=True,
                        help="comma-separated: house bots (random, heuristic, ismcts, "
                             "'heuristic#2'...), registered agent ids, and "
                             "exec:[NAME=]COMMAND for a program this command runs itself "
                             "(docs/bots.md), one process per match under the limits below")
    hosting = create.add_argument_group(
        "programs entered as exec:[NAME=]COMMAND",
        "each runs in the sandbox: its folder read-only at /bot, no network, the limits "
        "below (docs/bots.md)")
    hosting.add_argument("--text", action="store_true",
                         help="they read the plain-text messages instead of JSON lines")
    hosting.add_argument("--sandbox", default="bwrap", choices=MODES,
                         help="bwrap (default; needs Debian's bubblewrap package) or none "
                              "(run them bare, with a warning at every start)")
    add_flag_table(hosting, (
        ("--cpu-seconds", {"default": 60},
         "CPU time of each of a program's processes (default 60; 0: no limit)"),
        ("--memory-mb", {"default": 1024},
         "memory of a program's whole tree (default 1024; 0: no limit)"),
        ("--processes", {"default": 64},
         "processes and threads of a program (default 64; 0: no limit)"),
        ("--open-files", {"default": 256}, "open file descriptors (default 256; 0: no limit)"),
        ("--tmp-mb", {"default": 64}, "size of its private /tmp and home (default 64)"),
    ), type=int)
    add_players(create)
    create.add_argument("--rounds", type=int, default=0, help="Swiss rounds (default 3)")
    create.add_argument("--games-per-pairing", type=int, default=1,
                        help="deals per table, each in every seating (default 1)")
    create.add_argument("--duplicate", action="store_true",
                        help="duplicate deals: every seating of a table plays the same deals")
    create.add_argument("--seed", type=int, default=None)
    create.add_argument("--parallel", type=int, default=0,
                        help="matches at once (default: the server's, 4)")
    create.add_argument("--decision-ms", type=int, default=0)
    create.add_argument("--join-timeout-ms", type=int, default=0,
                        help="a game whose entrants have not all joined this long after it "
                             "was created is abandoned; those present win it "
                             "(0: the server's --waiting-timeout)")
    add_admin_token(create)
    create.add_argument("--no-follow", action="store_true",
                        help="print the id and return at once")
    _export_args(create)
    create.set_defaults(run=run_create)
    for name, helptext in (("show", "print the standings once"),
                           ("follow", "follow a tournament until it ends")):
        p = actions.add_parser(name, help=helptext)
        add_connection_args(p)
        p.add_argument("tournament_id")
        _export_args(p)
        p.set_defaults(run=run_show if name == "show" else run_follow)
    listing = actions.add_parser("list", help="tournaments, newest first")
    add_connection_args(listing)
    add_json(listing, "a list of the tournaments")
    listing.set_defaults(run=run_list)
    cancel = add_cancel(actions, "tournament", "stop a tournament")
    cancel.set_defaults(run=run_cancel)


def _export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--csv", default=None, metavar="PATH", help="write the standings as CSV")
    parser.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                        help=f"{JSON_HELP}: the standings and every game, one line; with "
                             "PATH, written to that file instead ('-': stdout)")


def _client(args: argparse.Namespace) -> TournamentClient:
    return connect(TournamentClient, args)


def run_create(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json == "-")
    entrants = [e.strip() for e in args.entrants.split(",") if e.strip()]
    client = _client(args)

    async def go() -> tuple[tournaments_pb2.Tournament, dict[str, str]]:
        tls = tls_of(args)
        mode = _sandbox_for(entrants, args.sandbox)
        named, hosted = await register_programs(args.server, entrants,
                                                admin_token=admintoken.from_args(args), **tls)
        if hosted and args.no_follow:
            raise AgentError("exec: entrants are run by this command: drop --no-follow")
        created = await client.create(
            args.game, named, players=args.players, format=args.format, rounds=args.rounds,
            games_per_pairing=args.games_per_pairing, duplicate=args.duplicate, seed=args.seed,
            decision_ms=args.decision_ms, parallel=args.parallel,
            join_timeout_ms=args.join_timeout_ms)
        console.print(f"tournament [bold]{created.tournament_id}[/bold]: "
                      f"{created.games_planned} games", highlight=False)
        for entrant in hosted:
            console.print(f"  {safe(entrant.name)} ({entrant.agent_id}): "
                          f"{safe(entrant.command)}",
                          highlight=False)
        if args.no_follow:
            return created, {}
        limits = SandboxLimits(memory_mb=args.memory_mb, cpu_seconds=args.cpu_seconds,
                               processes=args.processes, tmp_mb=args.tmp_mb,
                               open_files=args.open_files)
        players = created.spec.num_players
        programs: dict[asyncio.Future[Any], str] = {asyncio.ensure_future(play_hosted(
            e, server=args.server, tournament_id=created.tournament_id, game=args.game,
            players=players, limits=limits, sandbox=mode,
            form=TEXT_FORM if args.text else JSON_FORM, **tls)): e.name
            for e in hosted}
        follow = asyncio.ensure_future(_follow(client, created.tournament_id, console))
        try:
            await until_over(follow, programs, created.tournament_id)
            await asyncio.gather(*programs)
        finally:
            for task in (follow, *programs):
                task.cancel()
        return follow.result()

    record, names = asyncio.run(go())
    return _finish(args, record, names, console)


async def until_over(follow: asyncio.Future[Any], programs: dict[asyncio.Future[Any], str],
                     tid: str) -> None:
    """Wait until ``follow`` (the tournament followed to its end) is done. An entrant
    this command plays (``programs``: task -> entrant name) that stops with an error
    ends the wait with that error: its games would otherwise wait for it, and this
    command with them, until the server's join timeout."""
    waiting: set[asyncio.Future[Any]] = {follow, *programs}
    while not follow.done():
        done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is follow or task.cancelled() or task.exception() is None:
                continue
            error = task.exception()
            raise AgentError(f"entrant {programs[task]} stopped: {error}. Tournament {tid} "
                             f"goes on without it: `twistarena tournament cancel {tid}` "
                             "ends it") from error
    follow.result()  # its own error, if it failed


def _sandbox_for(entrants: list[str], requested: str) -> str:
    """The sandbox the exec: entrants will run in, checked before anything is created: a
    host without bubblewrap, or a command whose program cannot be found, is refused."""
    commands = program_commands(entrants)
    if not commands:
        return requested
    try:
        mode = sandbox_mode(requested)
    except SandboxUnavailable as error:
        raise AgentError(str(error)) from error
    for command in commands if mode != "none" else ():
        try:
            spec_for_command(command)
        except ValueError as error:
            raise AgentError(f"exec:{command}: the program could not start: {error}") from error
    return mode


def run_follow(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json == "-")
    record, names = asyncio.run(_follow(_client(args), args.tournament_id, console))
    return _finish(args, record, names, console)


def run_show(args: argparse.Namespace) -> int:
    console = make_console(stderr=args.json == "-")
    client = _client(args)
    async def fetch() -> tuple[tournaments_pb2.Tournament, dict[str, str]]:
        record = await client.get(args.tournament_id)
        return record, await client.entrant_names(list(record.spec.entrants))

    record, names = asyncio.run(fetch())
    console.print(standings_table(record, names))
    return _finish(args, record, names, console)


def run_list(args: argparse.Namespace) -> int:
    client = _client(args)

    async def fetch() -> tuple[list[tournaments_pb2.Tournament], dict[str, str]]:
        records = await client.list()
        leaders = sorted({r.standings[0].entrant for r in records if r.standings})
        return records, await client.entrant_names(leaders)

    records, names = asyncio.run(fetch())
    if args.json:
        print_json([_summary(r) for r in records])
        return 0
    table = Table(title="Tournaments")
    for column in ("id", "game", "format", "status", "games", "leader", "leader id",
                   "driven by"):
        table.add_column(column)
    for r in records:
        s = _summary(r)
        table.add_row(s["tournament_id"], s["game"], s["format"], s["status"],
                      f"{s['games_done']}/{s['games_planned']}",
                      safe(names.get(s["leader"], s["leader"])), safe(s["leader"]), s["driver"])
    make_console().print(table)
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    record = asyncio.run(_client(args).cancel(args.tournament_id, args.reason))
    make_console().print(f"tournament {record.tournament_id}: "
                  f"{tournaments_pb2.TournamentStatus.Name(record.status)}")
    return 0


def _summary(r: tournaments_pb2.Tournament) -> dict[str, Any]:
    return {"tournament_id": r.tournament_id, "game": r.spec.game_id,
            "format": tournaments_pb2.TournamentFormat.Name(r.spec.format),
            "status": tournaments_pb2.TournamentStatus.Name(r.status),
            "games_done": r.games_done, "games_planned": r.games_planned,
            "leader": r.standings[0].entrant if r.standings else "", "driver": r.driver}


async def _follow(client: TournamentClient, tid: str,
                  console: Console) -> tuple[tournaments_pb2.Tournament, dict[str, str]]:
    """Follow the tournament to its end: on a terminal, live standings and a progress
    bar; piped, a line each time games end (``progress_line``: a live display is
    redrawn for a terminal's width, which would cut the table's cells), then the
    final standings. Returns it and its entrants' names."""
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn())
    task = progress.add_task("games", total=None)
    record: tournaments_pb2.Tournament | None = None
    names: dict[str, str] | None = None
    printed = -1
    live = Live(Group(progress), console=console, refresh_per_second=4, transient=False)
    with live if console.is_terminal else contextlib.nullcontext(live):
        async for record in client.watch(tid):
            if names is None:
                names = await client.entrant_names(list(record.spec.entrants))
            progress.update(task, completed=record.games_done, total=record.games_planned)
            if console.is_terminal:
                live.update(Group(standings_table(record, names), progress))
            elif record.games_done != printed:
                printed = record.games_done
                console.print(progress_line(record, names), markup=False, highlight=False)
    assert record is not None and names is not None
    if not console.is_terminal:
        console.print(standings_table(record, names))
    return record, names


def _finish(args: argparse.Namespace, record: tournaments_pb2.Tournament,
            names: dict[str, str], console: Console) -> int:
    standings = standings_of(record)
    if args.csv:
        with open(args.csv, "w", encoding="utf-8") as f:
            f.write(standings_to_csv(standings, names))
    if args.json:
        meta = {"tournament_id": record.tournament_id, **_summary(record),
                "seed": record.spec.seed, "entrants": list(record.spec.entrants),
                "names": names,
                "num_players": record.spec.num_players,
                "duplicate_deals": record.spec.duplicate_deals}
        text = report_json(standings, results_of(record), (), meta)
        if args.json == "-":
            print_json(json.loads(text))
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                f.write(text)
    return 0 if record.status != tournaments_pb2.TOURNAMENT_CANCELLED else FAILED


def progress_line(record: tournaments_pb2.Tournament, names: dict[str, str]) -> str:
    """One line of a followed tournament's progress, for a pipe or a log file: games
    done and the leader (its name shown printable only: it came from a client)."""
    line = f"tournament {record.tournament_id}: {record.games_done}/{record.games_planned} games"
    if record.standings:
        top = record.standings[0]
        name = "".join(c if c.isprintable() else "?" for c in names.get(top.entrant, top.entrant))
        line += f", leader {name} ({top.entrant}) {top.wins:.1f} wins"
    return line


def standings_table(record: tournaments_pb2.Tournament,
                    names: dict[str, str] | None = None) -> Table:
    """The standings, entrants by name, with the deals (blocks) each played."""
    names = names or {}
    blocks = {s.entrant: s.blocks for s in standings_of(record)}
    status = tournaments_pb2.TournamentStatus.Name(record.status).removeprefix("TOURNAMENT_")
    table = Table(title=f"Tournament {record.tournament_id}: {record.spec.game_id}, "
                        f"{tournaments_pb2.TournamentFormat.Name(record.spec.format)}, "
                        f"{record.games_done}/{record.games_planned} games, {status.lower()}")
    for column in ("#", "entrant", "id", "games", "blocks", "wins", "win share (95% CI)",
                   "mean score", "mean place", "mu ± sigma"):
        table.add_column(column, justify="left" if column in ("entrant", "id") else "right")
    for i, s in enumerate(record.standings, 1):
        table.add_row(str(i), safe(names.get(s.entrant, s.entrant)), safe(s.entrant),
                      str(s.games),
                      str(blocks.get(s.entrant, 0)), f"{s.wins:.1f}",
                      f"{s.win_share:.2f} ({s.win_ci_low:.2f}-{s.win_ci_high:.2f})",
                      f"{s.mean_score:.1f}", f"{s.mean_place:.2f}",
                      f"{s.mu:.1f} ± {s.sigma:.1f}")
    return table
