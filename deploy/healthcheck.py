"""Container health check: ask a twistarena node's gRPC health service.

The image runs it as its HEALTHCHECK; Compose runs it too. It uses only what
the server already depends on (grpcio, grpcio-health-checking), so the image
needs no extra probe binary. Kubernetes does not use it: its native gRPC
probe asks the same service.

    python healthcheck.py [ADDRESS] [--service NAME] [--timeout SECONDS]

ADDRESS defaults to $TWISTARENA_HEALTH_ADDRESS or 127.0.0.1:50051. When the
node serves TLS, set TWISTARENA_HEALTH_CA to a PEM file that signs its
certificate (and TWISTARENA_HEALTH_TLS_NAME when the certificate does not
name ADDRESS's host). Exit status: 0 SERVING, 1 anything else.
"""

from __future__ import annotations

import argparse
import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def check(address: str, service: str = "", timeout: float = 3.0,
          ca_file: str | None = None, tls_name: str | None = None) -> str:
    """The status name the node reports for ``service`` ("" is the whole node)."""
    if ca_file:
        with open(ca_file, "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        options = [("grpc.ssl_target_name_override", tls_name)] if tls_name else []
        channel = grpc.secure_channel(address, creds, options=options)
    else:
        channel = grpc.insecure_channel(address)
    with channel:
        stub = health_pb2_grpc.HealthStub(channel)
        reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="gRPC health check of a twistarena node")
    parser.add_argument("address", nargs="?",
                        default=os.environ.get("TWISTARENA_HEALTH_ADDRESS", "127.0.0.1:50051"))
    parser.add_argument("--service", default="", help="health service name ('' = the node)")
    parser.add_argument("--timeout", type=float, default=3.0)
    args = parser.parse_args(argv)
    try:
        status = check(args.address, args.service, args.timeout,
                       os.environ.get("TWISTARENA_HEALTH_CA") or None,
                       os.environ.get("TWISTARENA_HEALTH_TLS_NAME") or None)
    except grpc.RpcError as error:
        code = error.code() if hasattr(error, "code") else None
        print(f"unhealthy: {args.address}: {code}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"unhealthy: {error}", file=sys.stderr)
        return 1
    if status != "SERVING":
        print(f"unhealthy: {args.address}: {status}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
