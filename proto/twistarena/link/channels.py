"""Channels to the node, call metadata, and reading a refusal's trailers.

The lowest client layer: the SDK, the hosted-program runner and the web
gateway all open their channels and read the node's refusals here, so a
refusal means the same to each of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
from twistarena.wire.metadata import (
    AUTHORIZATION_KEY,
    OWNER_KEY,
    REASON_KEY,
    RETRY_AFTER_KEY,
)

#: Channel options: fast reconnects, keepalive so that a dead peer is noticed.
CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.keepalive_time_ms", 20000),
    ("grpc.keepalive_timeout_ms", 10000),
    # Unanswered pings close the connection after this, not after the keepalive
    # timeout (gRPC core's default is 60 s).
    ("grpc.http2.ping_timeout_ms", 10000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
)

#: The reasons whose refusal names the node to call instead.
REDIRECTING_REASONS = frozenset({"NOT_OWNER", "STORE_UNAVAILABLE"})


class CallError(Exception):
    """A call that failed for good: not retryable, or retried until the policy gave up.

    ``code`` and ``reason`` are the last refusal's status and ``twistarena-reason``;
    ``refusal`` is that refusal in one line (``describe``)."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None,
                 reason: str = "", refusal: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.refusal = refusal or message


def stub(stub_class: Any, channel: grpc.aio.Channel) -> Any:
    """A generated service stub (generated code is untyped; keep the Any in one place)."""
    return stub_class(channel)


def parse_servers(servers: str | Sequence[str]) -> list[str]:
    """``"a:1,b:2"`` or ``["a:1", "b:2"]`` -> ``["a:1", "b:2"]`` (at least one)."""
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out = [s.strip() for s in items if s and s.strip()]
    if not out:
        raise ValueError("no server address given (HOST:PORT[,HOST:PORT...])")
    return out


def read_root_cert(root_cert: bytes | str | Path | None) -> bytes | None:
    """Accept PEM bytes or a path to a PEM file."""
    if root_cert is None or isinstance(root_cert, bytes):
        return root_cert
    return Path(root_cert).read_bytes()


def make_channel(address: str, root_cert: bytes | None = None, tls: bool = False,
                 extra_options: Sequence[tuple[str, int | str]] = ()) -> grpc.aio.Channel:
    """An insecure channel, or a TLS one when a root cert is given or ``tls`` is set."""
    options = [*CHANNEL_OPTIONS, *extra_options]
    if root_cert is not None or tls:
        creds = grpc.ssl_channel_credentials(root_certificates=root_cert)
        return grpc.aio.secure_channel(address, creds, options=options)
    return grpc.aio.insecure_channel(address, options=options)


def bearer(token: str | None) -> tuple[tuple[str, str], ...]:
    """Call metadata carrying ``token`` as a bearer token (nothing without one)."""
    return ((AUTHORIZATION_KEY, f"Bearer {token}"),) if token else ()


def metadata_value(metadata: object, key: str) -> str:
    """One value of a (possibly missing) gRPC metadata sequence, '' if absent."""
    if not metadata:
        return ""
    try:
        for item in metadata:  # type: ignore[attr-defined]
            k, v = item[0], item[1]
            if k == key:
                return v.decode() if isinstance(v, bytes) else str(v)
    except (TypeError, IndexError):
        return ""
    return ""


def error_reason(error: grpc.aio.AioRpcError) -> str:
    """The machine-readable ``twistarena-reason`` trailer of a failed call."""
    return metadata_value(error.trailing_metadata(), REASON_KEY)


def redirect_target(error: grpc.aio.AioRpcError) -> str:
    """Where a refusal (NOT_OWNER, or STORE_UNAVAILABLE from a node cut from its
    store) says the match lives ('' if it does not say)."""
    if error_reason(error) not in REDIRECTING_REASONS:
        return ""
    return metadata_value(error.trailing_metadata(), OWNER_KEY)


def retry_after_s(error: grpc.aio.AioRpcError) -> float:
    """How long the refusing server asked not to be called again (0: no hint)."""
    try:
        return max(0.0, int(metadata_value(error.trailing_metadata(), RETRY_AFTER_KEY)
                            or 0) / 1000)
    except ValueError:
        return 0.0


def describe(error: grpc.aio.AioRpcError) -> str:
    """A refusal in one line: ``CODE [REASON]: details``."""
    reason = error_reason(error)
    extra = f" [{reason}]" if reason else ""
    return f"{error.code().name}{extra}: {error.details() or ''}"


def call_error(what: str, error: grpc.aio.AioRpcError) -> CallError:
    """The ``CallError`` of a refusal, ``what`` saying which call at which address."""
    refusal = describe(error)
    return CallError(f"{what}: {refusal}", error.code(), error_reason(error), refusal)
