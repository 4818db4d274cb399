"""The SDK's connection parts: channels, server lists, the retry and failover
policy and the errors an agent may raise, all from ``twistarena.link``, the
layer every client of the node shares (the runner and the web gateway too).

Kept apart from the agent so that the command line's admin calls (create,
list, watch, replay) fail over between servers the same way agents do.
"""

from __future__ import annotations

from twistarena.link import *  # noqa: F403  (the SDK's names for the link's parts)
from twistarena.link import CallError
from twistarena.link import __all__ as _LINK

#: A failure retrying cannot fix (bad token, unknown match, seat taken over...) or
#: that the policy gave up on: the SDK's name for ``twistarena.link.CallError``.
AgentError = CallError

__all__ = [*_LINK, "AgentError"]
