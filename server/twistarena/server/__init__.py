"""twistarena.server: the node, the grpc.aio game service, by concern.

The core here: ``app`` (assemble, serve, drain), ``config`` (settings),
``embedded`` (private Valkey), ``auth`` (tokens), ``errors`` and ``rpc`` (statuses),
``limits`` and ``front`` (quotas), ``logs``, ``metrics``, ``loops`` and
``leaguehosting`` (the league and hosting services as one unit). ``match``: one
referee per live match and the Matches/Play/Watch servicers; ``league``:
matchmaking, agents, tournaments, arenas; ``hostedagents``: hosted versions and
the runners' hub; ``cluster``: many nodes over one store; ``web``: the web
gateway. Everything kept in Redis is behind ``twistarena.storage``; engine dicts
become contract messages in ``twistarena.wire``.
"""
