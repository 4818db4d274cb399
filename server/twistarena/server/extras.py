"""Matchmaking, tournaments and hosted agents' versions, as one unit the app adds
to its gRPC server."""

from __future__ import annotations

from collections.abc import Callable

from grpc import aio
from twistarena.v1 import hosting_pb2 as hpb
from twistarena.v1 import hosting_pb2_grpc as hgrpc
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.v1 import tournaments_pb2 as tpb
from twistarena.v1 import tournaments_pb2_grpc as tgrpc

from .agents import Agents
from .cluster import Cluster
from .config import ServerConfig
from .hosting import Hosting
from .limits import Quotas
from .matchmaker import Matchmaker
from .matchmaking import Matchmaking
from .tournaments import Director, Tournaments

SERVICE_NAMES: tuple[str, ...] = (
    kpb.DESCRIPTOR.services_by_name["Matchmaking"].full_name,
    tpb.DESCRIPTOR.services_by_name["Tournaments"].full_name,
    hpb.DESCRIPTOR.services_by_name["Hosting"].full_name,
)


class Extras:
    """Agents, the matchmaker and the tournament director of one node."""

    def __init__(self, cluster: Cluster, config: ServerConfig,
                 address: Callable[[], str], quotas: Quotas) -> None:
        #: What MatchAssigned.server_address says: the advertised address, else
        #: empty ("the server you are connected to").
        advertised: Callable[[], str] = lambda: config.advertise  # noqa: E731
        self.agents = Agents(cluster.store)
        self.matchmaker = Matchmaker(cluster, self.agents, config, advertised)
        self.director = Director(cluster, self.agents, advertised)
        self.address = address
        self.matchmaking = Matchmaking(cluster, config, self.agents, self.matchmaker, quotas)
        self.tournaments = Tournaments(cluster, config, self.agents, self.director, quotas)
        self.hosting = Hosting(config, self.agents, quotas)

    def add_to_server(self, server: aio.Server) -> None:
        """Register the Matchmaking, Tournaments and Hosting services."""
        kgrpc.add_MatchmakingServicer_to_server(self.matchmaking, server)  # type: ignore[no-untyped-call]
        tgrpc.add_TournamentsServicer_to_server(self.tournaments, server)  # type: ignore[no-untyped-call]
        hgrpc.add_HostingServicer_to_server(self.hosting, server)  # type: ignore[no-untyped-call]

    async def start(self) -> None:
        """Start the matchmaker and the tournament director."""
        await self.matchmaker.start()
        await self.director.start()

    async def close(self) -> None:
        """Stop them (on drain or shutdown)."""
        await self.director.close()
        await self.matchmaker.close()
