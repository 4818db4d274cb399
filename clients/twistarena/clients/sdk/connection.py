"""The SDK's connection parts: channels, server lists, the retry and failover
policy and the errors an agent may raise, all from ``twistarena.link``, the
layer every client of the node shares (the runner and the web gateway too).

Kept apart from the agent so that the command line's admin calls (create,
list, watch, replay) fail over between servers the same way agents do.
"""

from __future__ import annotations

from twistarena.link import (
    CHANNEL_OPTIONS,
    FATAL_REASONS,
    OWNER_KEY,
    RETRY_AFTER_KEY,
    RETRYABLE,
    Backoff,
    CallError,
    Failover,
    ServerList,
    ServiceClient,
    bearer,
    call_with_failover,
    describe,
    error_reason,
    follow_stream,
    is_retryable,
    make_channel,
    metadata_value,
    parse_servers,
    read_root_cert,
    redirect_target,
    retry_after_s,
    stub,
    unary,
)

#: A failure retrying cannot fix (bad token, unknown match, seat taken over...) or
#: that the policy gave up on: the SDK's name for ``twistarena.link.CallError``.
AgentError = CallError

__all__ = [
    "CHANNEL_OPTIONS",
    "FATAL_REASONS",
    "OWNER_KEY",
    "RETRYABLE",
    "RETRY_AFTER_KEY",
    "AgentError",
    "Backoff",
    "Failover",
    "ServerList",
    "ServiceClient",
    "bearer",
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
