"""Server settings in one frozen value, filled by the CLI or by tests."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from twistarena.bots import ARENA_HOUSE
from twistarena.hosted import archives

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """The server's certificate and key, and the CA of its clients if it checks them."""

    cert_file: Path
    key_file: Path
    #: When set, clients must present a certificate signed by this CA.
    client_ca_file: Path | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    """What one client may take of a server: the defaults protect a public server
    without getting in the way of a tournament host running many bots from one
    machine (docs/security.md explains each one)."""

    #: Creation calls (matches, tournaments, agents, practice) per minute, per
    #: client address and per token; bursts of a third of that.
    creates_per_minute: int = 120
    #: Matches and tournaments one client (address or token) may have waiting
    #: for players or running at once.
    live_per_client: int = 100
    #: Matches waiting for their seats on this server, from every client.
    max_waiting_matches: int = 1000
    #: Play stream Joins per minute per seat token (takeovers included)...
    joins_per_minute_per_token: int = 30
    #: ...and per client address.
    joins_per_minute_per_peer: int = 1200
    #: Messages waiting for one slow stream before it is cut.
    stream_queue: int = 128
    #: A stream whose pending write has not gone out for this long is cut.
    stalled_write_s: float = 4.0
    #: A stream that got nothing for this long (its match waits for players,
    #: nothing happens) is closed; the client may reconnect.
    idle_stream_s: float = 300.0
    #: A connection must finish its handshake (HTTP/2 preface, TLS) within this.
    handshake_timeout_s: float = 10.0
    #: Open connections per client address, enforced by a relay in front of the
    #: gRPC port (0: no cap and no relay; gRPC itself has no such cap).
    connections_per_peer: int = 0
    #: Agents registered per client address per hour (the admin token holder's
    #: calls are not counted).
    registers_per_hour: int = 30


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Everything ``serve`` can set, in one place (the CLI flags map onto it)."""

    host: str = "127.0.0.1"
    #: 0 picks a free port; the bound address is logged and printed.
    port: int = 50051
    #: None: start an embedded Valkey (``data_dir`` for persistence).
    redis_url: str | None = None
    data_dir: Path | None = None
    metrics_port: int | None = None
    #: None: admin calls are open (fine on loopback).
    admin_token: str | None = None
    #: RegisterAgent without the admin token (``serve --open-registration``): a public
    #: server's own sign-up; still bounded by ``registers_per_hour`` and the creation
    #: quotas. Every other admin call keeps needing the token.
    open_registration: bool = False
    tls: TlsConfig | None = None
    #: Allow plaintext on a non-loopback address.
    insecure: bool = False
    #: A Play stream must send its first message, Join, within this time
    #: (``serve --join-timeout``).
    stream_join_timeout_s: float = 10.0
    #: A match still waiting for seats this long after its creation is
    #: abandoned (0: matches wait forever; ``serve --waiting-timeout``; a match's
    #: own ``TimeControl.join_timeout_ms`` overrides it).
    waiting_timeout_s: float = 3600.0
    #: Caps on any match's length whatever its options (0: none): recorded
    #: actions, and seconds from creation. A match reaching one ends with
    #: END_REASON_LENGTH_LIMIT (``serve --max-match-decisions/--max-match-seconds``).
    max_match_decisions: int = 10_000
    max_match_s: float = 21_600.0
    #: Every message of a live Watch stream is held this long (``serve
    #: --spectator-delay-ms``; 0: sent at once). Seat streams are never delayed.
    spectator_delay_s: float = 0.0
    #: Concurrent Play streams presenting the same seat token.
    max_streams_per_token: int = 4
    #: Largest message the server accepts.
    max_receive_bytes: int = 1 << 20
    max_send_bytes: int = 16 << 20
    #: A connection is pinged every ``keepalive_time_ms``; one whose ping goes
    #: unanswered for ``keepalive_timeout_ms`` is closed, its seats' streams end
    #: and their reconnect grace starts (``serve --keepalive-time-ms/-timeout-ms``).
    keepalive_time_ms: int = 20_000
    keepalive_timeout_ms: int = 10_000
    #: Longest wait for in-flight work on SIGTERM.
    drain_grace_s: float = 5.0
    #: Identifies this process as a match owner (random when empty).
    node_id: str = ""
    #: HOST:PORT other nodes send this node's clients to. Empty: the node takes
    #: no part in placement (it runs the matches created on it and, at startup,
    #: the orphaned ones) and is never a redirect target.
    advertise: str = ""
    #: Other processes serve the same port (``serve --workers``): it is bound with
    #: SO_REUSEPORT, and this node also listens on a port of its own, which it
    #: advertises (on the host of ``advertise``, else ``host``) so that a
    #: redirect reaches this very process.
    shared_port: bool = False
    #: Ownership lease of a match: renewed every lease/4; a node stops running a
    #: match it could not renew in time, and another node may claim it.
    lease_ms: int = 2000
    #: What a detected loss of acknowledged actions does to the match: "rewind"
    #: (back to what the store kept; every seat and spectator is told) or "void".
    on_store_loss: str = "rewind"
    #: "always": every acknowledged action is fsynced first; "everysec": the AOF
    #: is fsynced every second (an OS crash of the store can lose ~1 s).
    durability: str = "everysec"
    #: Acknowledge only once this many replicas have the write (WAIT), waiting at
    #: most ``wait_timeout_ms``.
    wait_replicas: int = 0
    wait_timeout_ms: int = 1000
    #: A finished match's keys expire this long after its end (0: never).
    retain_finished_s: float = 7 * 86400.0
    #: Write every finished match (result and action log) to a JSON-lines file here.
    archive_dir: Path | None = None
    #: Redis appends in flight at once (each one pipeline of many matches).
    max_inflight_pipelines: int = 4
    #: Matchmaking: fill a queued agent's empty seats with house bots after this
    #: many seconds (None: only when the Queue request asks for it).
    house_fill_after_s: float | None = None
    #: Matchmaking: pair the longest waiter with the agents closest in rating
    #: (else strictly first come, first served).
    match_by_rating: bool = False
    #: Practice matches per minute per client without an api token.
    practice_per_minute: int = 30
    #: Arenas to open at start, ``GAME:PLAYERS`` each (kept as they are if open).
    arenas: tuple[str, ...] = ()
    #: The house rungs of the arenas opened at start: a lone author finds a table.
    arena_house: tuple[str, ...] = ARENA_HOUSE
    #: Runners (``twistarena runner``) authenticate with this token, or with one
    #: an admin minted (Runners.MintRunnerToken). None: only minted ones.
    runner_token: str | None = None
    limits: Limits = field(default_factory=Limits)
    #: Caps on a hosted version's archive: packed bytes, unpacked bytes, files
    #: (``serve --version-max-packed-mb/--version-max-unpacked-mb/--version-max-files``).
    version_caps: archives.Caps = field(default_factory=archives.Caps)
    #: Versions one agent may keep (until it deletes them; ``serve --version-max-per-agent``).
    max_versions_per_agent: int = 100
    #: Packed bytes of archives one agent's versions may keep, and the whole store
    #: (``serve --agent-max-archive-mb/--store-max-archive-mb``; 0: no cap).
    agent_max_archive_bytes: int = 100 * archives.MIB
    store_max_archive_bytes: int = 2048 * archives.MIB
    extra_grpc_options: tuple[tuple[str, int | str], ...] = field(default_factory=tuple)

    def plaintext_allowed(self) -> bool:
        """Plaintext only with --insecure or on a loopback address; TLS always."""
        return self.tls is not None or self.insecure or is_loopback(self.host)


def is_loopback(host: str) -> bool:
    """True for names and addresses that only this machine can reach."""
    name = host.strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    # A dual-stack socket shows an IPv4 client as ::ffff:a.b.c.d.
    mapped = getattr(address, "ipv4_mapped", None)
    return bool((mapped or address).is_loopback)
