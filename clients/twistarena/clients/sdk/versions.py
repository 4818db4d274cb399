"""Hosted agents from the author's side: submit versions, list, activate, inspect.

    from twistarena.clients.sdk.versions import VersionClient
    from twistarena.hosted.archives import pack_directory

    client = VersionClient("127.0.0.1:50051", api_token=TOKEN)
    stored = await client.submit(pack_directory(Path("my_bot")), entry="python3 bot.py")
    print(stored.version.version_id, stored.created)

Submitting is safe to repeat (the same archive, entry and build give the same
version), so an upload cut by a server failing over is sent again whole.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from twistarena.v1 import hosting_pb2, hosting_pb2_grpc

from .connection import ServiceClient, call_with_failover, stub

#: Bytes per SubmitVersion message, well under the server's message cap.
CHUNK_BYTES = 256 * 1024
#: An upload of the largest archive over a slow link still finishes within this.
UPLOAD_TIMEOUT_S = 600.0
#: Called with the bytes handed to the connection so far.
Progress = Callable[[int], Any]


class VersionClient(ServiceClient):
    """Hosting calls for one agent (its api token) against one or more servers."""

    STUB = hosting_pb2_grpc.HostingStub
    RETRY_ON = frozenset({grpc.StatusCode.UNAVAILABLE})

    def __init__(self, server: str, *, api_token: str | None = None,
                 root_cert: bytes | str | Path | None = None, tls: bool = False) -> None:
        # The api token goes where ServiceClient puts a bearer token.
        super().__init__(server, root_cert=root_cert, tls=tls, admin_token=api_token)

    async def submit(self, archive: bytes, entry: str, *, build: str = "",
                     build_log: str = "", activate: bool = False,
                     progress: Progress | None = None) -> hosting_pb2.SubmitVersionResponse:
        """Upload ``archive`` as a version started by ``entry``."""
        manifest = hosting_pb2.VersionManifest(entry=entry, build=build, build_log=build_log,
                                               size=len(archive), activate=activate)

        async def chunks() -> AsyncIterator[hosting_pb2.SubmitVersionChunk]:
            yield hosting_pb2.SubmitVersionChunk(manifest=manifest)
            for start in range(0, len(archive), CHUNK_BYTES):
                yield hosting_pb2.SubmitVersionChunk(data=archive[start:start + CHUNK_BYTES])
                if progress is not None:
                    progress(min(start + CHUNK_BYTES, len(archive)))

        async def call(channel: grpc.aio.Channel) -> hosting_pb2.SubmitVersionResponse:
            client = stub(self.STUB, channel)
            response: hosting_pb2.SubmitVersionResponse = await client.SubmitVersion(
                chunks(), metadata=self._metadata, timeout=UPLOAD_TIMEOUT_S)
            return response

        return await call_with_failover(self.servers, self.root_cert, call, self.backoff,
                                        self.tls, self.RETRY_ON)

    async def versions(self) -> hosting_pb2.ListVersionsResponse:
        """The agent's versions, newest first, with their stats and build logs."""
        listed: hosting_pb2.ListVersionsResponse = await self._unary(
            "ListVersions", hosting_pb2.ListVersionsRequest())
        return listed

    async def activate(self, version_id: str) -> hosting_pb2.VersionInfo:
        """Make a version (id or unique prefix) the one the agent's seats run."""
        done: hosting_pb2.ActivateVersionResponse = await self._unary(
            "ActivateVersion", hosting_pb2.ActivateVersionRequest(version_id=version_id))
        return done.version

    async def delete(self, version_id: str) -> hosting_pb2.DeleteVersionResponse:
        """Delete a version (id or unique prefix) that no seat needs."""
        done: hosting_pb2.DeleteVersionResponse = await self._unary(
            "DeleteVersion", hosting_pb2.DeleteVersionRequest(version_id=version_id))
        return done

    async def details(self, agent_id: str) -> hosting_pb2.AgentDetails:
        """An agent with its versions; private parts when it is this client's agent."""
        details: hosting_pb2.AgentDetails = await self._unary(
            "GetAgentDetails", hosting_pb2.GetAgentDetailsRequest(agent_id=agent_id))
        return details

    async def seat_logs(self, match_id: str) -> hosting_pb2.SeatLogs:
        """What this client's agent's seats in a match wrote to stderr, decision by
        decision (only its own seats)."""
        logs: hosting_pb2.SeatLogs = await self._unary(
            "GetSeatLogs", hosting_pb2.GetSeatLogsRequest(match_id=match_id))
        return logs


def seat_logs_json(logs: hosting_pb2.SeatLogs) -> dict[str, Any]:
    """Seat logs as ``agent logs --json`` prints them and the console serves them."""
    return {"match_id": logs.match_id, "seats": [
        {"seat": s.seat, "version_id": s.version_id,
         "steps": [{"step": t.step, "text": t.text, "failure": t.failure, "why": t.why}
                   for t in s.steps]} for s in logs.seats]}
