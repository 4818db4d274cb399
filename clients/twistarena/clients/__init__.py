"""twistarena.clients: what bot authors and hosts run (bots, SDK, command line)."""
