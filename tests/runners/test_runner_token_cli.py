"""``twistarena runner-token``: an admin mints a runner token from the command line.

A server with an admin token refuses the call without it; with it, the printed
token is one a runner connects with (its Connect stream is welcomed)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
import pytest
from twistarena.clients.cli import main

from tests.security.hostile import limited_server
from tests.support.rawrunner import RawRunner

ADMIN = "admin-token-for-the-runner-token-test"


def test_runner_token_needs_the_admin_and_lets_a_runner_in(
        valkey: Any, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TWISTARENA_ADMIN_TOKEN", raising=False)
    with limited_server(valkey, admin_token=ADMIN) as server:
        assert main(["runner-token", "--server", server.target, "--name", "box-1"]) == 2
        refused = capsys.readouterr()
        assert "admin" in (refused.out + refused.err).lower()

        assert main(["runner-token", "--server", server.target, "--name", "box-1",
                     "--admin-token", ADMIN, "--json"]) == 0
        minted = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert minted["name"] == "box-1" and minted["runner_token"]

        async def connect(token: str) -> str:
            async with grpc.aio.insecure_channel(server.target) as channel:
                runner = await RawRunner(channel, token).connect()
                key = runner.welcome.session_key
                runner.call.cancel()
                return key

        assert asyncio.run(connect(minted["runner_token"]))
        with pytest.raises(grpc.aio.AioRpcError) as wrong:
            asyncio.run(connect(minted["runner_token"] + "x"))
        assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED
