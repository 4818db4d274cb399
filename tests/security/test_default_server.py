"""A default ``twistarena serve`` (no --admin-token, the embedded Valkey): an
anonymous client gets no admin power and no runner token, the commands of the
same machine still work without flags (they read the token ``serve`` made up),
and the embedded Valkey answers no one without its password."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from grpc import aio
from twistarena.clients.cli import main
from twistarena.v1 import arenas_pb2 as apb
from twistarena.v1 import arenas_pb2_grpc as agrpc
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.v1 import runners_pb2 as rpb
from twistarena.v1 import runners_pb2_grpc as rgrpc
from twistarena.v1 import tournaments_pb2 as tpb
from twistarena.v1 import tournaments_pb2_grpc as tgrpc

from tests.support.process import ServeProcess

SERVER_CODE = Path(__file__).resolve().parents[2] / "server" / "twistarena" / "server"
REFUSED = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


def admin_calls(channel: aio.Channel) -> dict[str, Any]:
    """Every admin call of the contract, each with a request that would be valid."""
    matches: Any = mgrpc.MatchesStub(channel)  # type: ignore[no-untyped-call]
    making: Any = kgrpc.MatchmakingStub(channel)  # type: ignore[no-untyped-call]
    tours: Any = tgrpc.TournamentsStub(channel)  # type: ignore[no-untyped-call]
    arenas: Any = agrpc.ArenasStub(channel)  # type: ignore[no-untyped-call]
    runners: Any = rgrpc.RunnersStub(channel)  # type: ignore[no-untyped-call]
    return {
        "CreateMatch": lambda: matches.CreateMatch(mpb.CreateMatchRequest(
            options=mpb.MatchOptions(game_id="twisted", num_players=2))),
        "CancelMatch": lambda: matches.CancelMatch(mpb.CancelMatchRequest(match_id="0" * 16)),
        "RegisterAgent": lambda: making.RegisterAgent(kpb.RegisterAgentRequest(name="intruder")),
        "CreateTournament": lambda: tours.CreateTournament(tpb.CreateTournamentRequest(
            spec=tpb.TournamentSpec(game_id="twisted", num_players=2,
                                    entrants=["random", "heuristic"]))),
        "CancelTournament": lambda: tours.CancelTournament(
            tpb.CancelTournamentRequest(tournament_id="0" * 16)),
        "CreateArena": lambda: arenas.CreateArena(apb.CreateArenaRequest(
            game_id="twisted", num_players=2)),
        "SetArenaPaused": lambda: arenas.SetArenaPaused(apb.SetArenaPausedRequest(
            arena_id="twisted-2", paused=True)),
        "UpdateArena": lambda: arenas.UpdateArena(apb.UpdateArenaRequest(
            arena_id="twisted-2", matches_per_minute=1)),
        "CloseArena": lambda: arenas.CloseArena(apb.CloseArenaRequest(arena_id="twisted-2")),
        "EnrollAgent": lambda: arenas.EnrollAgent(apb.EnrollAgentRequest(
            arena_id="twisted-2", agent_id="0" * 16)),
        "MintRunnerToken": lambda: runners.MintRunnerToken(
            rpb.MintRunnerTokenRequest(name="intruder")),
    }


def admin_methods_in_code() -> set[str]:
    """The servicer methods whose body asks for the admin (``require_admin``)."""
    found: set[str] = set()
    for path in SERVER_CODE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.AsyncFunctionDef) and node.name[:1].isupper() and any(
                    isinstance(n, ast.Name) and n.id == "require_admin"
                    for n in ast.walk(node)):
                found.add(node.name)
    return found


def started_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  *flags: str) -> Iterator[ServeProcess]:
    """``serve --data-dir`` with its made-up admin token, plus ``flags``."""
    monkeypatch.delenv("TWISTARENA_ADMIN_TOKEN", raising=False)
    monkeypatch.setenv("TWISTARENA_RUNTIME_DIR", str(tmp_path / "runtime"))
    env = {k: v for k, v in os.environ.items() if k != "TWISTARENA_ADMIN_TOKEN"}
    serve = ServeProcess(["--port", "0", "--data-dir", str(tmp_path / "data"), "--no-web",
                          *flags], env=env, secure_default=True)
    serve.start()
    try:
        yield serve
    finally:
        serve.terminate()


@pytest.fixture()
def default_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServeProcess]:
    """``serve --data-dir`` with nothing else about security: the default."""
    yield from started_serve(tmp_path, monkeypatch)


@pytest.fixture()
def open_registration_serve(tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> Iterator[ServeProcess]:
    """A default serve whose host opened registration, two agents an hour per address."""
    yield from started_serve(tmp_path, monkeypatch, "--open-registration",
                             "--registers-per-hour", "2")


def test_an_anonymous_client_gets_no_admin_power_on_a_default_server(
        default_serve: ServeProcess, tmp_path: Path) -> None:
    async def go() -> dict[str, grpc.StatusCode]:
        codes: dict[str, grpc.StatusCode] = {}
        async with aio.insecure_channel(default_serve.target) as channel:
            for name, call in admin_calls(channel).items():
                with pytest.raises(aio.AioRpcError) as refused:
                    await call()
                codes[name] = refused.value.code()
        return codes

    codes = asyncio.run(go())
    assert admin_methods_in_code() <= set(codes), "an admin call this test does not try"
    assert {name: code for name, code in codes.items() if code not in REFUSED} == {}

    # The token is kept mode 0600 with the data, published for this machine, never printed.
    kept = tmp_path / "data" / "admin-token"
    published = tmp_path / "runtime" / f"admin-token-{default_serve.port}"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(published.stat().st_mode) == 0o600
    token = kept.read_text().strip()
    assert published.read_text().strip() == token
    assert token not in default_serve.output()
    assert str(published) in default_serve.output()


def test_open_registration_lets_strangers_register_and_nothing_else(
        open_registration_serve: ServeProcess) -> None:
    async def go() -> tuple[list[str], grpc.StatusCode, dict[str, grpc.StatusCode]]:
        async with aio.insecure_channel(open_registration_serve.target) as channel:
            making: Any = kgrpc.MatchmakingStub(channel)  # type: ignore[no-untyped-call]
            agents = [(await making.RegisterAgent(
                kpb.RegisterAgentRequest(name=f"stranger{i}"))).agent_id for i in range(2)]
            with pytest.raises(aio.AioRpcError) as over:
                await making.RegisterAgent(kpb.RegisterAgentRequest(name="one too many"))
            codes: dict[str, grpc.StatusCode] = {}
            for name, call in admin_calls(channel).items():
                if name != "RegisterAgent":
                    with pytest.raises(aio.AioRpcError) as refused:
                        await call()
                    codes[name] = refused.value.code()
            return agents, over.value.code(), codes

    agents, over, codes = asyncio.run(go())
    assert len(set(agents)) == 2 and all(agents)
    assert over == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert {name: code for name, code in codes.items() if code not in REFUSED} == {}


def test_the_commands_of_the_same_machine_read_the_made_up_token(
        default_serve: ServeProcess, capsys: pytest.CaptureFixture[str]) -> None:
    server = default_serve.target
    assert main(["tournament", "create", "--server", server, "--game", "twisted",
                 "--players", "2", "--entrants", "random,heuristic", "--no-follow"]) == 0
    assert main(["agent", "register", "--server", server, "--name", "local", "--json"]) == 0
    assert main(["runner-token", "--server", server, "--name", "box", "--json"]) == 0
    minted = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert minted["runner_token"].startswith("rt_")
    # Another server's address never gets this machine's token.
    from twistarena.clients.cli.admintoken import admin_token

    assert admin_token(None, f"192.0.2.1:{default_serve.port}") is None


def test_the_embedded_valkey_answers_no_one_without_its_password(
        default_serve: ServeProcess, tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert stat.S_IMODE(data.stat().st_mode) == 0o700  # the append-only file inside too
    password_file = data / "valkey-password"
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    password = password_file.read_text().strip()
    port, argv = _valkey_process(data)
    assert password.encode() not in argv, "the password is on a command line"
    with redis.Redis(host="127.0.0.1", port=port, socket_timeout=5) as anonymous, \
            pytest.raises(redis.AuthenticationError):
        anonymous.keys("*")
    with redis.Redis(host="127.0.0.1", port=port, password=password,
                     socket_timeout=5) as holder:
        assert holder.ping()
    assert password not in default_serve.output()


def _valkey_process(data: Path) -> tuple[int, bytes]:
    """The embedded Valkey's port and command line (its pid file is in ``data``)."""
    pid = int((data / "valkey.pid").read_text().strip())
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    # Valkey shows itself as "valkey-server 127.0.0.1:PORT".
    address = cmdline.split(b"\0")[0].split()[-1]
    return int(address.rpartition(b":")[2]), cmdline
