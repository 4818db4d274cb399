"""Stored formats are written and read by one pair of functions each, in storage
(page tokens in the contract, which clients build too): what one writes, the
other reads back, and text that is none of them is refused, never half read."""

from __future__ import annotations

import contextlib
from typing import Any

import grpc
import pytest
from twistarena.storage import QueueHold
from twistarena.storage.arenas import house_bot, house_player, player_key, split_player
from twistarena.v1 import arenas_pb2 as apb
from twistarena.v1 import arenas_pb2_grpc as agrpc
from twistarena.v1 import match_pb2 as mpb
from twistarena.v1 import match_pb2_grpc as mgrpc
from twistarena.wire import REASON_KEY, pages

from tests.clients.helpers import run


def test_a_queue_hold_reads_back_what_it_wrote_and_whatever_ms_it_was_written_with() -> None:
    hold = QueueHold("tricky_twist", 4, 1_700_000_000_123.0)
    assert hold.encode() == "tricky_twist:4:1700000000123"
    assert QueueHold.decode(hold.encode()) == hold
    # A hold written with a fractional ms is a hold like any other.
    fractional = QueueHold.decode("twhist:5:1700000000123.5")
    assert fractional == QueueHold("twhist", 5, 1_700_000_000_123.5)
    assert fractional.alive(1_700_000_000_124.0, 5000)
    assert not fractional.alive(1_700_000_005_124.0, 5000)


@pytest.mark.parametrize("raw", ["", "twisted:2", "twisted:two:5", ":2:5", "twisted:2:",
                                 "twisted:2:soon", "twisted:2:inf", "twisted:2:nan"])
def test_text_that_is_no_queue_hold_holds_nothing(raw: str) -> None:
    assert QueueHold.decode(raw) is None


def test_player_keys_and_house_rungs_read_back() -> None:
    assert split_player(player_key("ag_12ab", 3)) == ("ag_12ab", 3)
    assert split_player(player_key("ag_12ab", 0)) == ("ag_12ab", 0)
    agent_id, version = split_player(house_player("heuristic"))
    assert (house_bot(agent_id), version) == ("heuristic", 0)
    assert house_bot("ag_12ab") == ""


def test_page_tokens_read_back_and_nothing_else_is_one() -> None:
    assert pages.parse_offset(pages.offset_token(0)) == 0
    assert pages.parse_offset(pages.offset_token(150)) == 150
    assert pages.parse_cursor(pages.cursor_token(1_700_000_000_000, "ab12")) == \
        (1_700_000_000_000, "ab12")
    for bad in ("x", "-1", " 1", "+1", "1_0", "\u00b2", "\u0661", "9" * 5000):
        assert pages.parse_offset(bad) is None, bad
        assert pages.parse_cursor(f"{bad}:ab12") is None, bad
    assert pages.parse_cursor("17") is None  # no match id: no cursor


#: Tokens no response gives: ``int`` would take some of them, or fail on them
#: after ``str.isdigit`` let them pass ('²', an offset of 5000 digits).
BAD_TOKENS = ["x", "-1", " 1", "1_0", "\u00b2", "\u00b2:ab12", "9" * 5000, f"{'9' * 5000}:ab"]


def test_every_list_call_refuses_a_bad_page_token_alike(server: Any) -> None:
    async def scenario() -> None:
        async with grpc.aio.insecure_channel(server.target) as channel:
            matches, arenas = mgrpc.MatchesStub(channel), agrpc.ArenasStub(channel)
            with contextlib.suppress(grpc.aio.AioRpcError):  # another test may have it
                await arenas.CreateArena(apb.CreateArenaRequest(game_id="twisted",
                                                                num_players=2))
            calls = {
                "ListMatches": lambda t: matches.ListMatches(
                    mpb.ListMatchesRequest(page_token=t)),
                "ListMatches by arena": lambda t: matches.ListMatches(
                    mpb.ListMatchesRequest(arena_id="twisted-2", page_token=t)),
                "GetLeaderboard": lambda t: arenas.GetLeaderboard(
                    apb.GetLeaderboardRequest(arena_id="twisted-2", page_token=t)),
                "ListAgents": lambda t: arenas.ListAgents(apb.ListAgentsRequest(page_token=t)),
            }
            for name, call in calls.items():
                for token in BAD_TOKENS:
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await call(token)
                    error = refused.value
                    assert (error.code(), error.details()) == (
                        grpc.StatusCode.INVALID_ARGUMENT, pages.BAD_PAGE_TOKEN), (name, token)
                    assert dict(error.trailing_metadata() or ())[REASON_KEY] == \
                        "MALFORMED_MESSAGE"
                await call("")  # the channel and the server go on

    run(scenario(), 60)
