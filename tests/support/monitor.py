"""The commands a Valkey receives, as its MONITOR shows them: to count the store
calls of a scenario (how many round trips, in which order) on a real server."""

from __future__ import annotations

import re
import secrets
import socket
from types import TracebackType

#: A quoted argument of a MONITOR line (backslash escapes kept as they are).
_ARG = re.compile(rb'"((?:[^"\\]|\\.)*)"')


class Monitor:
    """Records every command from its start; ``commands()`` reads them back."""

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        self.address = (host, port)
        self._sock = socket.create_connection(self.address, timeout=10)
        self._file = self._sock.makefile("rb")
        self._sock.sendall(b"MONITOR\r\n")
        if self._file.readline().strip() != b"+OK":
            raise RuntimeError("MONITOR refused")

    def commands(self) -> list[list[str]]:
        """Every command received so far, each as its arguments (the name first)."""
        marker = f"monitor-mark-{secrets.token_hex(6)}"
        with socket.create_connection(self.address, timeout=10) as probe:
            probe.sendall(f"ECHO {marker}\r\n".encode())
            probe.recv(100)
        out: list[list[str]] = []
        for line in iter(self._file.readline, b""):
            args = [a.decode("unicode_escape") for a in _ARG.findall(line)]
            if args == ["ECHO", marker]:
                return out
            out.append(args)
        raise RuntimeError("MONITOR stream ended")

    def close(self) -> None:
        self._file.close()
        self._sock.close()

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None
                 ) -> None:
        self.close()
