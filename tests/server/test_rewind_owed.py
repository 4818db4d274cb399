"""A seat away when its match was rewound is told on its return, whatever seq
it resumes from, and back to the earliest rewind it missed.

A seat whose stream ended after its answer's acceptance and before that
answer's own event resumes exactly at the rewind's ``to_seq``; a seat that
takes no events resumes from 0. Either may hold an accepted answer the rewind
took back, and a seat told nothing keeps believing it (a silent loss).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from twistarena.server.match.losses import REASON_CAP, owed_after
from twistarena.server.match.outbox import Outbox
from twistarena.server.match.rewinds import resume_seat_from
from twistarena.v1 import play_pb2 as ppb


def _referee(owed: dict[int, ppb.Rewound]) -> Any:
    """What ``resume_seat_from`` reads of a referee: the Rewounds it owes."""
    return SimpleNamespace(match_id="m1", owed=owed)


async def _told(outbox: Outbox) -> list[ppb.Rewound]:
    told = []
    while outbox._items:
        msg = await asyncio.wait_for(outbox.get(), 5)
        if isinstance(msg, ppb.ServerMessage) and msg.WhichOneof("msg") == "rewound":
            told.append(msg.rewound)
    return told


@pytest.mark.parametrize("resume_from", [100, 0], ids=["at-to_seq", "no-events"])
def test_a_seat_away_for_a_rewind_is_told_whatever_seq_it_resumes_from(
        resume_from: int) -> None:
    async def main() -> None:
        rewound = ppb.Rewound(to_seq=100, actions=40, lost_actions=3, reason="lost")
        referee = _referee(owed_after({}, rewound, away=[1]))
        outbox = Outbox()
        # Seat 1 was away; it comes back at the rewind's seq, or from 0.
        assert resume_seat_from(referee, 1, outbox, resume_from) == min(resume_from, 100)
        assert await _told(outbox) == [rewound]
        # Told once: a later resume is not told again, nor are the seats present.
        again = Outbox()
        assert resume_seat_from(referee, 1, again, 130) == 130
        assert resume_seat_from(referee, 0, again, 130) == 130
        assert await _told(again) == []

    asyncio.run(main())


def test_a_seat_away_for_two_rewinds_goes_back_to_the_earliest() -> None:
    async def main() -> None:
        first = ppb.Rewound(to_seq=100, actions=40, lost_actions=3, reason="first")
        second = ppb.Rewound(to_seq=110, actions=44, lost_actions=2, reason="second")
        owed = owed_after({}, first, away=[1])
        # Seat 2 left meanwhile: it is owed only the second; seat 1 both.
        owed = owed_after(owed, second, away=[1, 2])
        referee = _referee(owed)
        outbox = Outbox()
        assert resume_seat_from(referee, 1, outbox, 120) == 100
        (told,) = await _told(outbox)
        assert (told.to_seq, told.actions, told.lost_actions) == (100, 40, 6)
        outbox = Outbox()
        assert resume_seat_from(referee, 2, outbox, 120) == 110
        assert await _told(outbox) == [second]

    asyncio.run(main())


def test_what_a_seat_away_for_many_rewinds_is_owed_stays_bounded() -> None:
    owed: dict[int, ppb.Rewound] = {}
    for n in range(200):
        lost = ppb.Rewound(to_seq=100 + n, actions=40 + n, lost_actions=1,
                           reason=f"the store restarted with {40 + n} of {41 + n} actions")
        owed = owed_after(owed, lost, away=[1])
    told = owed[1]
    assert (told.to_seq, told.actions, told.lost_actions) == (100, 40, 200)
    assert len(told.reason) <= REASON_CAP
    assert len(told.SerializeToString()) < REASON_CAP * 4 + 32
