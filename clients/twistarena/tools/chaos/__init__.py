"""``twistarena chaos``: a fault campaign against a local deployment, and a
checker that knows what "lost" means here.

``deploy`` starts the deployment (a Valkey of its own or a given one, N nodes,
loopback TCP proxies between agents and nodes and between nodes and the store),
``workload`` plays matches with real SDK agents and spectators and keeps what
each heard, ``nemesis`` draws a seeded fault schedule and injects it, and
``checker`` compares the agents' records with the store's final state.
"""
