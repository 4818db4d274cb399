"""twistarena.server: the grpc.aio game service.

One module per concern: ``config`` (settings), ``embedded`` (private Valkey),
``store`` (Redis keys, fenced appends, batching), ``runner`` (one runner per
live match), ``timecontrol`` (deadlines and fallbacks), ``convert`` (engine
dicts to protobuf), ``auth`` (tokens), ``services`` (Matches/Play/Watch),
``metrics``, ``logs`` and ``app`` (assemble, serve, drain).
"""
