"""twistarena.server: the grpc.aio game service.

One module per concern: ``config`` (settings), ``embedded`` (private Valkey),
``store`` (Redis keys, fenced appends, batching), ``runner`` (one runner per
live match), ``timecontrol`` (deadlines and fallbacks), ``auth`` (tokens),
``services`` (Matches/Play/Watch), ``metrics``, ``logs`` and ``app`` (assemble,
serve, drain). Engine dicts become contract messages in ``twistarena.wire``;
house bots come from ``twistarena.bots`` and tournaments' schedules, standings
and ratings from ``twistarena.league``.
"""
