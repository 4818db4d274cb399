"""Assemble the service: store, referees, servicers, health, reflection; serve; drain."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
from grpc import aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from twistarena import wire
from twistarena.storage import Durability, Holder, Store, StoreError
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import play_pb2 as ppb

from . import leaguehosting, logs, metrics
from .cluster import Cluster
from .config import ServerConfig
from .embedded import EmbeddedValkey
from .errors import StatusInterceptor
from .front import ConnectionFront
from .limits import Quotas
from .match.export import MatchExport
from .match.hub import Hub
from .match.losses import LossPolicy
from .match.outbox import Streams
from .match.services import Matches, Play, Watch, add_streaming_services

log = logs.get("twistarena.app")

#: How often the store's reachability (and the embedded Valkey's process) is checked.
STORE_CHECK_S = 0.25
#: How often the match index drops matches whose keys expired.
TRIM_EVERY_S = 60.0
#: How long past its grace gRPC's stop may take before the drain goes on without it.
GRPC_STOP_MARGIN_S = 3.0

SERVICE_NAMES: tuple[str, ...] = (
    mpb.DESCRIPTOR.services_by_name["Matches"].full_name,
    ppb.DESCRIPTOR.services_by_name["Play"].full_name,
    ppb.DESCRIPTOR.services_by_name["Watch"].full_name,
    *leaguehosting.SERVICE_NAMES,
)


class ConfigError(Exception):
    """Settings that the server refuses to start with."""


def grpc_options(config: ServerConfig) -> list[tuple[str, Any]]:
    """Channel options of the server: message size limits and keepalive."""
    return [
        ("grpc.max_receive_message_length", config.max_receive_bytes),
        ("grpc.max_send_message_length", config.max_send_bytes),
        ("grpc.keepalive_time_ms", config.keepalive_time_ms),
        ("grpc.keepalive_timeout_ms", config.keepalive_timeout_ms),
        # gRPC core closes a transport whose pings go unanswered after its ping
        # timeout (default 60 s), not after keepalive_timeout_ms: without this a
        # silent peer (no FIN, no RST) is noticed only a minute later.
        ("grpc.http2.ping_timeout_ms", config.keepalive_timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.max_connection_idle_ms", 3_600_000),
        # A connection that has not finished its handshake (sent the HTTP/2
        # preface; TLS) by then is closed: it holds a descriptor for nothing.
        ("grpc.server_handshake_timeout_ms", int(config.limits.handshake_timeout_s * 1000)),
        ("grpc.so_reuseport", 1 if config.shared_port else 0),
        *config.extra_grpc_options,
    ]


def server_credentials(config: ServerConfig) -> grpc.ServerCredentials | None:
    """TLS credentials from the config (client certificates required when it names a
    CA); None: plaintext."""
    tls = config.tls
    if tls is None:
        return None
    key = Path(tls.key_file).read_bytes()
    cert = Path(tls.cert_file).read_bytes()
    ca = Path(tls.client_ca_file).read_bytes() if tls.client_ca_file else None
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca,
                                       require_client_auth=ca is not None)


class App:
    """One twistarena server process (or one in-process server in tests)."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.node_id = config.node_id or uuid.uuid4().hex[:12]
        self.embedded: EmbeddedValkey | None = None
        self.store: Store | None = None
        self.hub: Hub | None = None
        self.cluster: Cluster | None = None
        self.leaguehosting: leaguehosting.LeagueAndHosting | None = None
        self.server: aio.Server | None = None
        self.streams: Streams | None = None
        self.front: ConnectionFront | None = None
        self.health = health.aio.HealthServicer()
        self.port = 0
        self.metrics_port: int | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._watcher: asyncio.Task[None] | None = None
        #: The store's run id(s) when last checked (see ``Store.identity``).
        self._store_identity = ""

    @property
    def address(self) -> str:
        """HOST:PORT the server listens on (the bound port when 0 was asked)."""
        host = self.config.host
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    async def start(self) -> int:
        """Connect the store, join the cluster (resuming the matches placed here) and
        serve; returns the bound port."""
        config = self.config
        if not config.plaintext_allowed():
            raise ConfigError(
                f"refusing to serve plaintext on {config.host}: give --tls-cert/--tls-key, "
                "bind a loopback address, or pass --insecure")
        server = aio.server(options=grpc_options(config), interceptors=[StatusInterceptor()])
        public = self._bind(server)
        config = self.config
        url = config.redis_url
        if url is None:
            self.embedded = EmbeddedValkey(config.data_dir, fsync=config.durability)
            url = await asyncio.to_thread(self.embedded.start)
            log.info("embedded_valkey", address=self.embedded.address,
                     data_dir=str(config.data_dir or ""),
                     appendfsync=config.durability)
        durability = Durability(
            fsync_each=config.durability == "always" and self.embedded is None,
            replicas=config.wait_replicas, wait_ms=config.wait_timeout_ms)
        self.store = Store(url, Holder(self.node_id, config.advertise, config.lease_ms),
                           config.max_inflight_pipelines, durability,
                           retain_ms=int(config.retain_finished_s * 1000))

        if config.wait_replicas and self.store.cluster_mode:
            raise ConfigError("--wait-replicas is for one primary with replicas; a Redis "
                              "Cluster's appends span primaries (see deploy/README.md)")
        await self.store.connect()
        self._store_identity = await self.store.identity()
        self.hub = Hub(self.store, self.node_id, config.waiting_timeout_s,
                       config.max_match_decisions, config.max_match_s,
                       LossPolicy(config.on_store_loss))
        if config.archive_dir is not None:
            self.hub.export = MatchExport(config.archive_dir)
        self.cluster = Cluster(self.store, self.hub)
        quotas = Quotas(config, self._live, self._waiting_matches)

        mgrpc.add_MatchesServicer_to_server(Matches(self.cluster, config, quotas), server)  # type: ignore[no-untyped-call]
        self.streams = Streams(config.limits)
        add_streaming_services(server, Play(self.cluster, config, quotas, self.streams),
                               Watch(self.cluster, config, self.streams))
        self.leaguehosting = leaguehosting.LeagueAndHosting(self.cluster, config,
                                                            lambda: self.address, quotas)
        self.leaguehosting.add_to_server(server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
        if config.limits.connections_per_peer:
            self.front = ConnectionFront(config.limits.connections_per_peer)
            try:
                self.port = await self.front.start(config.host, config.port, self.port,
                                                   config.shared_port)
            except OSError as exc:
                raise ConfigError(f"could not bind {public}: {exc.strerror}") from None
        self.server = server
        # Register with the other nodes and resume the matches placed here.
        await self.cluster.start()
        await self.leaguehosting.start()
        self.streams.start()
        await server.start()
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        metrics.STORE_UP.set(1)
        self._watcher = asyncio.get_running_loop().create_task(self._watch_store())
        if config.metrics_port is not None:
            self.metrics_port = metrics.serve_metrics(config.metrics_port, config.host)
        log.info("listening", address=self.address, tls=config.tls is not None,
                 node=self.node_id, metrics_port=self.metrics_port)
        return self.port

    def _bind(self, server: aio.Server) -> str:
        """Bind the gRPC port(s) (before anything else: a worker of ``serve
        --workers`` advertises the port of its own it gets here); the public address."""
        config = self.config
        host = f"[{config.host}]" if ":" in config.host else config.host
        bind = public = f"{host}:{config.port}"
        creds = server_credentials(config)
        if config.limits.connections_per_peer:
            # The relay takes the public address; gRPC listens on loopback behind it.
            bind = "127.0.0.1:0"

        def add(address: str) -> int:
            port = (server.add_secure_port(address, creds) if creds is not None
                    else server.add_insecure_port(address))
            if not port:
                raise ConfigError(f"could not bind {address}")
            return port

        self.port = add(bind)
        if config.shared_port:
            own = add(f"{host}:0")
            advertised = config.advertise.rpartition(":")[0] or host
            self.config = replace(config, advertise=f"{advertised}:{own}")
        return public

    def _waiting_matches(self) -> int:
        """Matches of this node still waiting for their seats."""
        hub = self.hub
        if hub is None:
            return 0
        return sum(1 for r in hub.referees.values() if r.status == mpb.MATCH_STATUS_WAITING)

    async def _live(self, ids: list[str]) -> list[bool]:
        """Which of these ``match:<id>``/``tournament:<id>`` objects have not ended."""
        assert self.store is not None
        out: list[bool] = []
        for kind_id in ids:
            kind, _, object_id = kind_id.partition(":")
            if kind == "match":
                record = await self.store.matches.load(object_id)
                out.append(record is not None and record.status not in wire.MATCH_OVER)
            else:
                out.append(await self.store.tournaments.is_live(object_id))
        return out

    async def _set_health(self, status: Any) -> None:
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, status)

    async def _watch_store(self) -> None:
        """Health follows the store: NOT_SERVING while it does not answer (calls
        meanwhile end with UNAVAILABLE at once), SERVING again once it does, and
        then every live match placed here resumes. A store that is another
        process than before (its run id changed: a restart or failover that no
        ping saw fail) is treated the same, and every match this node
        acknowledged is checked against it. The embedded Valkey is restarted
        on its own data directory when it dies."""
        assert self.store is not None
        up = True
        next_trim = time.monotonic() + TRIM_EVERY_S
        while True:
            await asyncio.sleep(STORE_CHECK_S)
            if up and self.store.matches.retain_ms and time.monotonic() > next_trim:
                next_trim = time.monotonic() + TRIM_EVERY_S
                await self._trim_index()
            embedded = self.embedded
            if embedded is not None and not embedded.alive():
                up = await self._store_state(up, False, "embedded valkey exited")
                try:
                    await asyncio.to_thread(embedded.restart)
                except RuntimeError as exc:
                    log.error("embedded_valkey_restart_failed", error=str(exc)[-300:])
                    continue
                log.warning("embedded_valkey_restarted", address=embedded.address,
                            restarts=embedded.restarts)
            try:
                identity = await asyncio.wait_for(self.store.identity(), STORE_CHECK_S * 4)
            except (StoreError, TimeoutError) as exc:
                up = await self._store_state(up, False, repr(exc))
                continue
            restarted = identity != self._store_identity
            if not up or restarted:
                if restarted:
                    # However short the restart was: it may have lost what was
                    # acknowledged, so every match is checked (``Cluster.resume``).
                    log.warning("store_restarted", run_id=identity,
                                was=self._store_identity)
                try:
                    await self.store.reconnected()
                except StoreError as exc:
                    log.warning("store_not_ready", error=repr(exc))
                    continue
                up = await self._store_state(up, True, "")
                if self.cluster is None or await self.cluster.resume():
                    self._store_identity = identity

    async def _trim_index(self) -> None:
        """The match index forgets matches whose keys expired (retention)."""
        assert self.store is not None
        before = int(time.time() * 1000) - self.store.matches.retain_ms
        try:
            dropped = await self.store.matches.trim_index(before)
        except StoreError as exc:
            log.warning("index_trim_failed", error=repr(exc))
            return
        if dropped:
            log.info("index_trimmed", matches=dropped)

    async def _store_state(self, was_up: bool, up: bool, why: str) -> bool:
        if self.cluster is not None:
            self.cluster.store_reachable = up
        if up != was_up and not self.hub_draining():
            metrics.STORE_UP.set(1 if up else 0)
            if up:
                log.warning("store_back")
            else:
                log.error("store_unreachable", why=why)
            await self._set_health(health_pb2.HealthCheckResponse.SERVING if up
                                   else health_pb2.HealthCheckResponse.NOT_SERVING)
        return up

    def hub_draining(self) -> bool:
        """The node is draining: the drain, not the store watcher, owns the health status."""
        return self.hub is not None and self.hub.draining

    async def drain(self) -> None:
        """SIGTERM: NOT_SERVING at once, no new matches, finish appends, close streams."""
        if self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(self._drain())
        await asyncio.shield(self._stopping)

    async def _drain(self) -> None:
        grace = self.config.drain_grace_s
        deadline = time.monotonic() + grace
        log.info("draining")

        took: dict[str, float] = {}

        @contextlib.contextmanager
        def timed(what: str) -> Iterator[None]:
            """Note how long a step took (the ``stopped`` line lists them)."""
            began = time.monotonic()
            try:
                yield
            finally:
                took[what] = time.monotonic() - began

        async def within(step: Awaitable[None], what: str, least: float = 0.0) -> None:
            """One step of the drain, within what is left of the grace (at least
            ``least`` seconds): a store gone silent must not hold the node past it."""
            with timed(what):
                try:
                    await asyncio.wait_for(step, max(least, deadline - time.monotonic()))
                except TimeoutError:
                    log.warning("drain_step_overran", step=what, grace_s=grace)

        await within(self.health.enter_graceful_shutdown(), "health", least=0.5)
        hub, store = self.hub, self.store
        if self._watcher is not None:
            self._watcher.cancel()
        if hub is not None:
            hub.draining = True
            if self.cluster is not None:
                # Hand the matches to other nodes; streams are closed with a redirect.
                await within(self.cluster.drain(grace), "hand_off")
            with timed("stop_referees"):
                for referee in list(hub.referees.values()):
                    acquired = False
                    with contextlib.suppress(TimeoutError):
                        # One grace for the whole drain, not one per match.
                        await asyncio.wait_for(referee.lock.acquire(),
                                               max(0.0, deadline - time.monotonic()))
                        acquired = True
                    try:
                        referee.stop(grpc.StatusCode.UNAVAILABLE, "DRAINING", "server draining")
                    finally:
                        if acquired:
                            referee.lock.release()
        if self.leaguehosting is not None:
            await within(self.leaguehosting.close(), "leaguehosting", least=0.5)
        if self.streams is not None:
            await within(self.streams.close(), "close_streams", least=0.5)
        if self.front is not None:
            await self.front.close()
        if self.server is not None:
            # gRPC's own stop cancels what is left after its grace; should it not return
            # (seen once, after connections that never sent the HTTP/2 preface), the
            # drain goes on without it rather than hold the node forever.
            stop_grace = max(0.5, deadline - time.monotonic() - 0.5)
            await within(self.server.stop(stop_grace), "grpc_stop",
                         least=stop_grace + GRPC_STOP_MARGIN_S)
        if self.cluster is not None:
            # Says this node leaves (others stop counting on it at once).
            await within(self.cluster.close(), "leave", least=0.5)
        if store is not None:
            await within(store.close(), "store_close", least=0.5)
        if self.embedded is not None:
            with timed("embedded_stop"):
                await asyncio.to_thread(self.embedded.stop)
        # Where the drain spent its time: a slow exit names its step.
        log.info("stopped", **{f"{step}_ms": round(s * 1000) for step, s in took.items()})

    async def stop(self) -> None:
        """Drain (hand the matches over) and stop serving."""
        await self.drain()

    async def wait(self) -> None:
        """Until the server stops."""
        assert self.server is not None
        await self.server.wait_for_termination()


#: Something to run beside the server in its event loop, given the server's address
#: (``twistarena serve --web-port`` runs the web face this way; the server itself
#: knows nothing of what runs beside it).
Beside = Callable[[str], contextlib.AbstractAsyncContextManager[Any]]


async def serve(config: ServerConfig, beside: Beside | None = None) -> int:
    """Run until SIGTERM/SIGINT; prints ``listening on HOST:PORT`` once bound."""
    app = App(config)
    try:
        await app.start()
    except ConfigError as exc:
        print(f"twistarena serve: {exc}", file=sys.stderr, flush=True)
        await app.drain()
        return 2
    logs.write_line(f"listening on {app.address}")
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, lambda: loop.create_task(app.drain()))
    async with contextlib.AsyncExitStack() as stack:
        if beside is not None:
            await stack.enter_async_context(beside(app.address))
        await app.wait()
    await app.drain()
    return 0


def tune_gc(young: int = 50_000) -> None:
    """Run the cyclic garbage collector less often.

    Every decision allocates thousands of short-lived containers (the engine's
    observation dicts, messages, futures) that reference counting frees; with
    the default young-generation threshold (700) the collector still runs every
    few decisions and walks them, which cost the server a tenth of its CPU.
    What exists at startup (modules, the engine's tables) is frozen out of its
    way for good."""
    gc.collect()
    gc.freeze()
    _gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(young, gen1, gen2)


def run(config: ServerConfig, json_logs: bool | None = None,
        beside: Beside | None = None) -> int:
    """Blocking entry point for the CLI (uvloop when available)."""
    logs.configure(json_logs)
    tune_gc()
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is absent on some platforms
        return asyncio.run(serve(config, beside))
    return uvloop.run(serve(config, beside))
