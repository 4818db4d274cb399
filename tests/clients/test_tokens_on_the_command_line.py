"""Every token the server hands out can be pasted after ``--token`` as printed.

A bare ``secrets.token_urlsafe`` starts with "-" once in 64 draws, and
argparse then takes it for an option: the bot exited and its match waited.
"""

from __future__ import annotations

from typing import Any

from twistarena.clients.cli import build_parser
from twistarena.clients.sdk import MatchClient
from twistarena.server import auth

from .helpers import run


def test_fresh_tokens_parse_as_the_token_argument() -> None:
    parser = build_parser()
    for prefix in (auth.SEAT_TOKEN_PREFIX, auth.AGENT_TOKEN_PREFIX):
        for _ in range(2000):
            token = auth.new_token(prefix)
            assert token.startswith(prefix)
            args = parser.parse_args(["bot", "--match", "m", "--token", token])
            assert args.token == token


def test_created_matches_hand_out_prefixed_seat_tokens(server: Any) -> None:
    created = run(MatchClient(server.target).create_match("tricky_twist", 4))
    assert [t.token[:3] for t in created.seat_tokens] == [auth.SEAT_TOKEN_PREFIX] * 4
