"""Matchmaking, tournaments, hosted agents' versions, the runners that play them
and arenas, as one unit the app adds to its gRPC server."""

from __future__ import annotations

from collections.abc import Callable

from grpc import aio
from twistarena.v1 import arenas_pb2 as apb
from twistarena.v1 import arenas_pb2_grpc as agrpc
from twistarena.v1 import hosting_pb2 as hpb
from twistarena.v1 import hosting_pb2_grpc as hgrpc
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.v1 import runners_pb2 as rpb
from twistarena.v1 import runners_pb2_grpc as rgrpc
from twistarena.v1 import tournaments_pb2 as tpb
from twistarena.v1 import tournaments_pb2_grpc as tgrpc

from .cluster import Cluster
from .config import ServerConfig
from .hostedagents.runnerhub import RunnerHub
from .hostedagents.service import Hosting
from .league.agents import Agents
from .league.arenaplay import ArenaScheduler
from .league.arenas import Arenas, Ladder
from .league.matchmaker import Matchmaker
from .league.matchmaking import Matchmaking
from .league.tournaments import Director, Tournaments
from .limits import Quotas

SERVICE_NAMES: tuple[str, ...] = (
    kpb.DESCRIPTOR.services_by_name["Matchmaking"].full_name,
    tpb.DESCRIPTOR.services_by_name["Tournaments"].full_name,
    apb.DESCRIPTOR.services_by_name["Arenas"].full_name,
    rpb.DESCRIPTOR.services_by_name["Runners"].full_name,
    hpb.DESCRIPTOR.services_by_name["Hosting"].full_name,
)


class LeagueAndHosting:
    """Agents, the matchmaker, the tournament director, the runner hub and the arena
    scheduler of one node."""

    def __init__(self, cluster: Cluster, config: ServerConfig,
                 address: Callable[[], str], quotas: Quotas) -> None:
        #: What MatchAssigned.server_address says: the advertised address, else
        #: empty ("the server you are connected to").
        advertised: Callable[[], str] = lambda: config.advertise  # noqa: E731
        self.agents = Agents(cluster.store)
        self.runners = RunnerHub(cluster.store.runners, cluster.store.versions, config)
        self.matchmaker = Matchmaker(cluster, self.agents, config, advertised)
        self.director = Director(cluster, self.agents, advertised, self.runners)
        self.address = address
        self.matchmaking = Matchmaking(cluster, config, self.agents, self.matchmaker, quotas,
                                       self.runners)
        self.tournaments = Tournaments(cluster, config, self.agents, self.director, quotas)
        self.arenas = Arenas(cluster.store, config, self.agents)
        #: Applies arena results to ratings.
        self.ladder = Ladder(cluster.store)
        self.matchmaking.arenas = self.arenas
        self.scheduler = ArenaScheduler(cluster, self.ladder, self.runners, self.agents,
                                        advertised)
        self.config = config
        self.hosting = Hosting(config, self.agents, quotas)

    def add_to_server(self, server: aio.Server) -> None:
        """Register the Matchmaking, Tournaments, Hosting, Runners and Arenas services."""
        agrpc.add_ArenasServicer_to_server(self.arenas, server)  # type: ignore[no-untyped-call]
        kgrpc.add_MatchmakingServicer_to_server(self.matchmaking, server)  # type: ignore[no-untyped-call]
        tgrpc.add_TournamentsServicer_to_server(self.tournaments, server)  # type: ignore[no-untyped-call]
        rgrpc.add_RunnersServicer_to_server(self.runners, server)  # type: ignore[no-untyped-call]
        hgrpc.add_HostingServicer_to_server(self.hosting, server)  # type: ignore[no-untyped-call]

    async def start(self) -> None:
        """Start the matchmaker, the tournament director, the runner hub and the
        arena scheduler (opening the arenas ``serve --arena`` names)."""
        await self.matchmaker.start()
        await self.director.start()
        await self.runners.start()
        await self.arenas.open_configured(self.config.arenas, self.config.arena_house)
        await self.scheduler.start()

    async def close(self) -> None:
        """Stop them (on drain or shutdown)."""
        await self.scheduler.close()
        await self.runners.close()
        await self.director.close()
        await self.matchmaker.close()
