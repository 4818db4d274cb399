"""Transport security: TLS, client certificates, and no plaintext off loopback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc import aio
from twistarena.server.app import App, ConfigError
from twistarena.server.config import ServerConfig, TlsConfig

from tests.support.agents import create, options, run
from tests.support.process import ServeProcess
from tests.support.server import InProcessServer
from tests.support.valkey import free_ports

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _key_and_cert(cwd: Path, name: str, cn: str, ext: str) -> None:
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=cwd)
    (cwd / f"{name}.ext").write_text(ext)
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", f"{name}.pem", "-days", "2",
             "-extfile", f"{name}.ext", cwd=cwd)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("pki")
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
             "-subj", "/CN=twistarena test CA", cwd=d)
    _key_and_cert(d, "server", "localhost",
                  "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    _key_and_cert(d, "client", "agent", "extendedKeyUsage=clientAuth\n")
    return d


def _tls_server(valkey: Any, pki: Path, client_ca: bool) -> InProcessServer:
    tls = TlsConfig(cert_file=pki / "server.pem", key_file=pki / "server.key",
                    client_ca_file=(pki / "ca.pem") if client_ca else None)
    return InProcessServer(ServerConfig(port=0, redis_url=valkey.url, tls=tls)).start()


@pytest.fixture(scope="module")
def tls_server(valkey: Any, pki: Path) -> Iterator[InProcessServer]:
    srv = _tls_server(valkey, pki, client_ca=False)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def mtls_server(valkey: Any, pki: Path) -> Iterator[InProcessServer]:
    srv = _tls_server(valkey, pki, client_ca=True)
    try:
        yield srv
    finally:
        srv.stop()


def _creds(pki: Path, client_cert: bool) -> grpc.ChannelCredentials:
    if client_cert:
        return grpc.ssl_channel_credentials(
            root_certificates=(pki / "ca.pem").read_bytes(),
            private_key=(pki / "client.key").read_bytes(),
            certificate_chain=(pki / "client.pem").read_bytes())
    return grpc.ssl_channel_credentials(root_certificates=(pki / "ca.pem").read_bytes())


async def _fails(channel: aio.Channel) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await asyncio.wait_for(create(channel, options("twisted", 2)), 15)
    return err.value.code()


def test_tls_on_and_plaintext_refused_by_a_tls_server(tls_server: InProcessServer,
                                                      pki: Path) -> None:
    async def main() -> None:
        async with aio.secure_channel(tls_server.target, _creds(pki, False)) as ch:
            resp = await create(ch, options("twisted", 2))
            assert resp.match.match_id
        async with aio.insecure_channel(tls_server.target) as ch:
            assert await _fails(ch) == grpc.StatusCode.UNAVAILABLE

    run(main())


def test_tls_plaintext_server_works_without_tls(server: Any, pki: Path) -> None:
    async def main() -> None:
        async with aio.insecure_channel(server.target) as ch:
            assert (await create(ch, options("twisted", 2))).match.match_id
        async with aio.secure_channel(server.target, _creds(pki, False)) as ch:
            assert await _fails(ch) == grpc.StatusCode.UNAVAILABLE

    run(main())


def test_client_certificate_required_with_client_ca(mtls_server: InProcessServer,
                                                    pki: Path) -> None:
    async def main() -> None:
        async with aio.secure_channel(mtls_server.target, _creds(pki, True)) as ch:
            assert (await create(ch, options("twisted", 2))).match.match_id
        async with aio.secure_channel(mtls_server.target, _creds(pki, False)) as ch:
            assert await _fails(ch) == grpc.StatusCode.UNAVAILABLE

    run(main())


def test_plaintext_off_loopback_is_refused() -> None:
    app = App(ServerConfig(host="0.0.0.0", port=0, redis_url="redis://127.0.0.1:1/0"))
    with pytest.raises(ConfigError, match="--insecure"):
        asyncio.run(app.start())
    proc = ServeProcess(["--host", "0.0.0.0", "--port", "0"])
    with pytest.raises(RuntimeError, match="refusing to serve plaintext"):
        proc.start(timeout=30)
    proc.cleanup()


def test_serve_cli_with_tls_and_admin_token(pki: Path, valkey: Any) -> None:
    proc = ServeProcess(["--port", "0", "--redis-url", valkey.url,
                         "--tls-cert", str(pki / "server.pem"),
                         "--tls-key", str(pki / "server.key"),
                         "--admin-token", "cli-admin"]).start()
    try:
        async def main() -> None:
            async with aio.secure_channel(proc.target, _creds(pki, False)) as ch:
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await create(ch, options("twisted", 2))
                assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
                resp = await create(ch, options("twisted", 2),
                                    metadata=[("authorization", "Bearer cli-admin")])
                assert resp.match.match_id

        run(main())
        assert proc.terminate() == 0
    finally:
        proc.cleanup()


def test_cluster_with_tls_checks_its_nodes_ready_over_tls(pki: Path, tmp_path: Path) -> None:
    """``cluster --tls-cert`` waits for its nodes over TLS (trusting that chain): over
    plaintext a TLS node never answers, and the cluster never starts."""
    chain = tmp_path / "chain.pem"
    chain.write_bytes((pki / "server.pem").read_bytes() + (pki / "ca.pem").read_bytes())
    proc = subprocess.Popen(
        [sys.executable, "-m", "twistarena.clients.cli", "cluster", "--nodes", "1",
         "--base-port", str(free_ports(1)), "--no-web", "--runners", "0",
         "--for-seconds", "1", "--node-logs", str(tmp_path / "logs"),
         "--tls-cert", str(chain), "--tls-key", str(pki / "server.key")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the cluster's node and Valkey too
    assert proc.returncode == 0, out
    assert "Ctrl-C drains the nodes" in out
