"""The connection layer below every client of the node: channels, call metadata,
refusals read one way, and the one retry and failover policy.

The author's SDK, the hosted-program runner and the web gateway all build on
it and on nothing of each other's for it (docs/architecture.md). It imports
grpc and, of ours, only the contract's metadata keys.
"""

from twistarena.wire.metadata import OWNER_KEY, REASON_KEY, RETRY_AFTER_KEY

from .channels import (
    CHANNEL_OPTIONS,
    CallError,
    bearer,
    call_error,
    describe,
    error_reason,
    make_channel,
    metadata_value,
    parse_servers,
    read_root_cert,
    redirect_target,
    retry_after_s,
    stub,
)
from .failover import (
    EVERY_FAILURE,
    FATAL_REASONS,
    FOREVER,
    RETRYABLE,
    Backoff,
    Failover,
    ServerList,
    ServiceClient,
    call_with_failover,
    follow_stream,
    is_retryable,
    unary,
)

__all__ = [
    "CHANNEL_OPTIONS",
    "EVERY_FAILURE",
    "FATAL_REASONS",
    "FOREVER",
    "OWNER_KEY",
    "REASON_KEY",
    "RETRYABLE",
    "RETRY_AFTER_KEY",
    "Backoff",
    "CallError",
    "Failover",
    "ServerList",
    "ServiceClient",
    "bearer",
    "call_error",
    "call_with_failover",
    "describe",
    "error_reason",
    "follow_stream",
    "is_retryable",
    "make_channel",
    "metadata_value",
    "parse_servers",
    "read_root_cert",
    "redirect_target",
    "retry_after_s",
    "stub",
    "unary",
]
