"""twistarena.server: the grpc.aio game service.

One module per concern: ``config`` (settings), ``embedded`` (private Valkey),
``runner`` (one runner per live match), ``timecontrol`` (deadlines and
fallbacks), ``auth`` (tokens), ``services`` (Matches/Play/Watch), ``cluster``
(many nodes over one store), ``matchmaking``/``matchmaker``/``agents`` and
``tournaments``, ``metrics``, ``logs`` and ``app`` (assemble, serve, drain).
Everything kept in Redis is behind ``twistarena.storage``. Engine dicts
become contract messages in ``twistarena.wire``; house bots come from
``twistarena.bots`` and tournaments' schedules, standings and ratings from
``twistarena.league``.
"""
