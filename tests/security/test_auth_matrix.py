"""An auth matrix: every combination of token, where it is sent (Join field,
call metadata in its accepted and near-miss forms), seat and match, on Play
and on the admin calls of a server with an admin token. None is accepted
wrongly, and the right ones are accepted (so the matrix tests something)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import grpc
from grpc import aio
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import matchmaking_pb2 as kpb
from twistarena.v1 import matchmaking_pb2_grpc as kgrpc
from twistarena.v1 import play_pb2 as ppb
from twistarena.v1 import play_pb2_grpc as pgrpc
from twistarena.v1 import tournaments_pb2 as tpb

from tests.security.hostile import limited_server
from tests.support.agents import create, options, run, tokens

ADMIN = "admin-secret-token-for-the-matrix"
REFUSED = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
BATCH = 40


def _values(seat_tokens: dict[str, str], api_token: str) -> dict[str, str]:
    a0 = seat_tokens["A0"]
    return {**seat_tokens, "admin": ADMIN, "api": api_token, "stranger": "st_" + "q" * 32,
            "empty": "", "suffixed": a0 + "x", "truncated": a0[:-1], "upper": a0.upper(),
            "spaced": " " + a0, "long": "st_" + "z" * 5000, "admin-ish": ADMIN + " ",
            "unicode": "st_\u00e9\u00e9\u00e9"}


def _metadata(form: str, value: str) -> tuple[tuple[str, str], ...]:
    return {"none": (), "bearer": (("authorization", f"Bearer {value}"),),
            "lower": (("authorization", f"bearer {value}"),),
            "padded": (("authorization", f"Bearer   {value} "),),
            "bare": (("authorization", value),), "basic": (("authorization", f"Basic {value}"),),
            "other-key": (("x-api-key", f"Bearer {value}"),),
            "second": (("authorization", "Bearer st_wrong"),
                       ("authorization", f"Bearer {value}"))}[form]


def _parsed_bearer(form: str, value: str) -> str:
    """The token the contract says the metadata carries ('' for none)."""
    return value.strip() if form in ("bearer", "lower", "padded") else ""


def _ascii(value: str) -> bool:
    return value.isascii() and value == value.strip("\r\n")


def test_auth_matrix(valkey: Any) -> None:
    with limited_server(valkey, admin_token=ADMIN, creates_per_minute=0, live_per_client=0,
                        joins_per_minute_per_token=0, joins_per_minute_per_peer=0) as srv:
        async def main() -> int:
            admin_md = (("authorization", f"Bearer {ADMIN}"),)
            async with aio.insecure_channel(srv.target) as ch:
                seat_tokens: dict[str, str] = {}
                matches: dict[str, str] = {}
                for name in "AB":
                    created = await create(ch, options("twisted", 2, decision_ms=600_000),
                                           admin_md)
                    matches[name] = created.match.match_id
                    for seat, tok in tokens(created).items():
                        seat_tokens[f"{name}{seat}"] = tok
                matches["missing"] = "0123456789abcdef"
                agent = await kgrpc.MatchmakingStub(ch).RegisterAgent(
                    kpb.RegisterAgentRequest(name="matrix"), metadata=admin_md)
                values = _values(seat_tokens, agent.api_token)
                owner = {tok: key for key, tok in seat_tokens.items()}
                cases: list[Any] = []
                # Play: the Join field and the metadata, every pair, every match.
                for (fk, field), (mk, meta), form, match in itertools.product(
                        values.items(), values.items(), ("none", "bearer", "basic"),
                        ("A", "B", "missing")):
                    if (form == "none" and mk != "empty") or not _ascii(meta):
                        continue
                    effective = field or _parsed_bearer(form, meta)
                    seat = owner.get(effective)
                    expect = seat is not None and seat[0] == match
                    cases.append(("join", (fk, mk, form, match), field, _metadata(form, meta),
                                  matches[match], int(seat[1]) if expect and seat else None))
                # Admin calls: every token in every metadata form.
                for (vk, value), form, method in itertools.product(
                        values.items(), ("none", "bearer", "lower", "padded", "bare", "basic",
                                         "other-key", "second"),
                        ("CreateMatch", "CancelMatch", "RegisterAgent", "CreateTournament")):
                    if not _ascii(value):
                        continue
                    expect = _parsed_bearer(form, value) == ADMIN
                    cases.append(("admin", (vk, form, method), method, _metadata(form, value),
                                  "", expect))
                outcomes = []
                for start in range(0, len(cases), BATCH):
                    batch = cases[start:start + BATCH]
                    if batch[0][0] == "join":
                        # One at a time: a seat token may hold only a few streams at once.
                        for case in batch:
                            outcomes.append(await _run_case(ch, case))
                    else:
                        outcomes += await asyncio.gather(*(_run_case(ch, c) for c in batch))
                wrong = [(c[0], c[1], got) for c, got in zip(cases, outcomes, strict=True)
                         if got != c[5]]
                assert not wrong, wrong[:10]
                assert sum(1 for c in cases if c[5] not in (None, False)) >= 50
                return len(cases)
        assert run(main()) >= 1000


async def _run_case(ch: aio.Channel, case: Any) -> Any:
    kind, _label, what, metadata, match_id, _expect = case
    if kind == "join":
        call = pgrpc.PlayStub(ch).Play(metadata=metadata)
        try:
            await call.write(ppb.AgentMessage(join=ppb.Join(match_id=match_id, seat_token=what)))
            msg = await asyncio.wait_for(call.read(), 10)
        except aio.AioRpcError as err:
            assert err.code() in (*REFUSED, grpc.StatusCode.NOT_FOUND), err
            return None
        finally:
            call.cancel()
        if msg is aio.EOF:
            code = await call.code()
            assert code in (*REFUSED, grpc.StatusCode.NOT_FOUND), code
            return None
        return msg.joined.seat if msg.WhichOneof("msg") == "joined" else None
    stubs: dict[str, Any] = {
        "CreateMatch": lambda: ch.unary_unary("/twistarena.v1.Matches/CreateMatch")(
            mpb.CreateMatchRequest(options=options("twisted", 2)).SerializeToString(),
            metadata=metadata),
        "CancelMatch": lambda: ch.unary_unary("/twistarena.v1.Matches/CancelMatch")(
            mpb.CancelMatchRequest(match_id="0123456789abcdef").SerializeToString(),
            metadata=metadata),
        "RegisterAgent": lambda: kgrpc.MatchmakingStub(ch).RegisterAgent(
            kpb.RegisterAgentRequest(name="x"), metadata=metadata),
        "CreateTournament": lambda: ch.unary_unary(
            "/twistarena.v1.Tournaments/CreateTournament")(
            tpb.CreateTournamentRequest().SerializeToString(), metadata=metadata),
    }
    try:
        await stubs[what]()
    except aio.AioRpcError as err:
        return err.code() not in REFUSED
    return True
