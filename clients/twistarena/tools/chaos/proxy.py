"""A TCP proxy on loopback that can cut a link the way a network does.

``cut()`` stops forwarding in both directions without closing anything (no
FIN, no RST: the peers see silence), ``heal()`` resets the silenced
connections (as a peer's late RST would) and forwards new ones again,
``retarget(port)`` sends new connections elsewhere (a failover behind a fixed
address). ``trip`` cuts the link the moment a client sends bytes containing it
(that chunk is dropped): a fault at one chosen command; with ``on_trip`` set,
that chunk is forwarded first and ``on_trip`` runs (in the proxy's thread,
replies held meanwhile) before the link goes silent. ``delay`` holds every
chunk that long (a slow link); ``sent``, when a list, keeps what clients send,
chunk by chunk.

The proxy runs in a thread of its own with its own event loop, so that a
caller blocked in a synchronous call (a test, a subprocess wait) does not stall
the links it forwards. Used by ``twistarena chaos`` and by the test suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Proxy:
    """Forwards connections from a free loopback port (``port``) to ``target_port``."""

    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.host = host
        self.target_port = target_port
        self.port = free_port()
        self.silent = False
        #: Seconds every chunk waits before it is forwarded (an artificially slow link).
        self.delay = 0.0
        #: Byte strings that cut the link when a client sends one (see above).
        self.trip: tuple[bytes, ...] = ()
        #: Run once a trip's chunk was forwarded, before the link goes silent.
        self.on_trip: Callable[[], None] | None = None
        #: Set once a trip fired.
        self.tripped = threading.Event()
        #: When a list, every chunk a client sends is kept in it (which commands
        #: travel together, in one write).
        self.sent: list[bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> Proxy:
        self._thread = threading.Thread(target=self._run, name="tcp-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("proxy did not start")
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        server = loop.run_until_complete(
            asyncio.start_server(self._accept, self.host, self.port))
        self._ready.set()
        loop.run_forever()
        server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.silent:
            self._writers.add(writer)  # accepted, then nothing: a cut link
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        await asyncio.gather(self._pipe(reader, up_writer, upstream=True),
                             self._pipe(up_reader, writer), return_exceptions=True)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                    upstream: bool = False) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if upstream and self.sent is not None:
                    self.sent.append(data)
                if upstream and self.trip and any(t in data for t in self.trip):
                    self.trip = ()
                    if self.on_trip is not None:
                        writer.write(data)
                        await writer.drain()
                        self.on_trip()
                    self.silent = True
                    self.tripped.set()
                if self.silent:
                    continue  # dropped on the floor
                if self.delay:
                    await asyncio.sleep(self.delay)
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            # A silenced connection stays listed until ``heal`` resets it: its peer
            # must learn then that it is gone, as it would from the late RST.
            if not self.silent:
                with contextlib.suppress(Exception):
                    writer.close()
                self._writers.discard(writer)

    def _call(self, fn: Callable[[], None]) -> None:
        """Run ``fn`` in the proxy's loop and wait for it (at most 5 s)."""
        assert self._loop is not None
        done = threading.Event()

        def run() -> None:
            try:
                fn()
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(5)

    def cut(self) -> None:
        """Silence every connection, open or new."""
        self._call(lambda: setattr(self, "silent", True))

    def _reset(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def heal(self) -> None:
        """Reset the silenced connections (as a peer's late RST would) and forward again."""
        def go() -> None:
            self.silent = False
            self._reset()
        self._call(go)

    def retarget(self, port: int) -> None:
        """New connections go to ``port``; open ones are reset."""
        def go() -> None:
            self.target_port = port
            self._reset()
        self._call(go)

    def stop(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
