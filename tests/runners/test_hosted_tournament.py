"""A tournament of hosted agents, played by the runners ``serve`` starts itself.

Real parts: ``twistarena serve`` as a subprocess on its own Valkey, with its
two runner processes; versions stored in that Valkey; the tournament created
with ``tournament create --no-follow`` (nobody keeps a command running for the
hosted entrants) and followed over gRPC until it is over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from twistarena.clients.cli import main as cli
from twistarena.clients.sdk import register_agent
from twistarena.clients.sdk.tournaments import TournamentClient
from twistarena.v1 import tournaments_pb2 as tpb

from tests.support.hosting import FIRST_LEGAL, store_version
from tests.support.process import ServeProcess, json_records
from tests.support.valkey import ValkeyProcess
from tests.support.waiting import wait_until


class Arena:
    """A serve subprocess with its runners, on a Valkey of its own."""

    def __init__(self, valkey: ValkeyProcess, serve: ServeProcess) -> None:
        self.valkey = valkey
        self.serve = serve

    @property
    def url(self) -> str:
        return str(self.valkey.url)


@pytest.fixture(scope="module")
def arena() -> Iterator[Arena]:
    valkey = ValkeyProcess().start()
    serve = ServeProcess(["--port", "0", "--redis-url", valkey.url, "--runners", "2",
                          "--runner-slots", "4", "--sandbox", "none", "--log-format", "json",
                          "--no-web"])
    try:
        serve.start()
        yield Arena(valkey, serve)
    finally:
        serve.terminate()
        serve.cleanup()
        valkey.stop()


async def hosted(arena: Arena, name: str) -> str:
    agent_id, _token = await register_agent(arena.serve.target, name)
    await store_version(arena.url, agent_id, {"bot.py": FIRST_LEGAL}, "python3 bot.py")
    return agent_id


def test_a_tournament_of_hosted_agents_plays_to_the_end_with_no_command_kept_up(
        arena: Arena, capsys: pytest.CaptureFixture[str]) -> None:
    async def agents() -> tuple[str, str]:
        return await hosted(arena, "alpha"), await hosted(arena, "beta")

    a, b = asyncio.run(agents())
    code = cli(["tournament", "create", "--server", arena.serve.target,
                "--game", "tricky_twist", "--entrants", f"agent:{a},agent:{b},random",
                "--decision-ms", "2000", "--parallel", "6", "--no-follow"])
    assert code == 0
    tid = capsys.readouterr().out.split("tournament ", 1)[1].split(":", 1)[0].strip()

    async def go() -> tpb.Tournament:
        client = TournamentClient(arena.serve.target)

        async def over() -> tpb.Tournament | None:
            record = await client.get(tid)
            return record if record.status != tpb.TOURNAMENT_RUNNING else None

        return await wait_until(over, "the tournament is over", timeout=60, interval=0.3)

    record = asyncio.run(go())
    assert record.status == tpb.TOURNAMENT_FINISHED
    # One table of three, in its three seatings: two hosted seats in each game.
    assert record.games_done == record.games_planned == 3
    logged = json_records(arena.serve.output())
    reported = {(r["match_id"], r["seat"]) for r in logged
                if r.get("event") == "runner_seat_reported"}
    assert len(reported) == 6
