"""Hosted agents on the node: their versions (the Hosting service) and the hub
that hands their seats to runner processes (the Runners service)."""
