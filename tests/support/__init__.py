"""Test helpers shared by the test suites: a real Valkey server, an in-process
twistarena server and raw gRPC agents."""
