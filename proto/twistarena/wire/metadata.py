"""The gRPC metadata keys of the contract, named once for servers and clients alike.

A key is part of the contract as much as a field is: the server writes it and
every client (the SDK, the runner, the tools, other languages' agents) reads
it, so one spelling here keeps the two sides from drifting. The meaning of
each is in docs/protocol.md (sections 8 and 9) and runners.proto.
"""

from __future__ import annotations

#: Call metadata of an authenticated call: ``Bearer <token>`` (seat, api, runner
#: or admin token).
AUTHORIZATION_KEY = "authorization"
#: Trailing metadata of a failed call: the ErrorReason name beside its status.
REASON_KEY = "twistarena-reason"
#: Trailing metadata of a NOT_OWNER or STORE_UNAVAILABLE refusal: HOST:PORT of
#: the node that owns the match (or will).
OWNER_KEY = "twistarena-owner"
#: Trailing metadata of a refusal: do not call this server again before this many ms.
RETRY_AFTER_KEY = "twistarena-retry-after-ms"
#: Call metadata of a runner's FetchVersion and ReportSeat: its session key (secret).
RUNNER_SESSION_KEY = "twistarena-runner-session"
