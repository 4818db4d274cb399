"""A TCP proxy on loopback that can cut a link as a network does: silence in
both directions, no FIN, no RST (``cut``), then every silenced connection reset
(``heal``). Runs in the campaign's event loop."""

from __future__ import annotations

import asyncio
import contextlib


class Proxy:
    """Forwards connections from a free loopback port to ``target_port``."""

    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.host = host
        self.target_port = target_port
        self.port = 0
        self.silent = False
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def start(self, port: int = 0) -> Proxy:
        self._server = await asyncio.start_server(self._accept, self.host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        if self.silent:
            return  # accepted, then nothing: a cut link
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            self._writers.discard(writer)
            writer.transport.abort()
            return
        self._writers.add(up_writer)
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer),
                             return_exceptions=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if self.silent:
                    continue
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            if not self.silent:
                with contextlib.suppress(Exception):
                    writer.close()
                self._writers.discard(writer)

    def cut(self) -> None:
        """Stop forwarding, both ways, on every connection, new ones included."""
        self.silent = True

    def heal(self) -> None:
        """Reset the silenced connections (their peers learn they are gone, as
        from a late RST) and forward new ones again."""
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        self.silent = False

    async def stop(self) -> None:
        self.heal()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
