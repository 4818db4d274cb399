"""deploy/healthcheck.py, the image's HEALTHCHECK, against a real server."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from grpc_health.v1 import health_pb2
from twistarena.server.config import ServerConfig

from tests.deploy.helpers import HEALTHCHECK
from tests.support.server import InProcessServer
from tests.support.valkey import free_port


def run_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(HEALTHCHECK), *args], capture_output=True,
                          text=True, timeout=30, check=False)


def test_serving_node_is_healthy(server: Any) -> None:
    result = run_check(server.target)
    assert result.returncode == 0, result.stderr


def test_nothing_listening_is_unhealthy() -> None:
    result = run_check(f"127.0.0.1:{free_port()}", "--timeout", "1")
    assert result.returncode == 1
    assert "unhealthy" in result.stderr


def test_not_serving_node_is_unhealthy(valkey: Any) -> None:
    srv = InProcessServer(ServerConfig(port=0, redis_url=valkey.url)).start()
    try:
        srv.call(srv.app.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING))
        result = run_check(srv.target)
        assert result.returncode == 1
        assert "NOT_SERVING" in result.stderr
    finally:
        srv.stop()
