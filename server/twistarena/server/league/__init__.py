"""The league services of the node: matchmaking and agents, tournaments,
arenas and their scheduler (the pure schedules and ratings are twistarena.league)."""
