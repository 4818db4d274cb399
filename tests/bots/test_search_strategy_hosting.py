"""A search strategy hosted as a network agent says that it plays its heuristic."""

from __future__ import annotations

from structlog.testing import capture_logs
from twistarena import engine
from twistarena.bots import make_bot
from twistarena.clients.sdk.hosting import StrategyBot


def test_ismcts_over_the_network_warns_and_plays_like_the_heuristic() -> None:
    state = engine.make("twisted", 3, 11, {})
    hosted = StrategyBot("ismcts", 4, lambda: "twisted")
    heuristic = make_bot("heuristic", "twisted", 4)
    with capture_logs() as logs:
        for _ in range(40):
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            obs, legal = state.observation(seat), state.legal_actions(seat)
            action = hosted.act(obs, legal)
            assert action == heuristic(obs, legal)
            state.apply(seat, action)
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert len(warnings) == 1 and warnings[0]["strategy"] == "ismcts"


def test_plain_strategies_do_not_warn() -> None:
    state = engine.make("twisted", 3, 11, {})
    seat = state.to_act()[0]
    with capture_logs() as logs:
        StrategyBot("heuristic", 4, lambda: "twisted").act(state.observation(seat),
                                                           state.legal_actions(seat))
    assert not [e for e in logs if e["log_level"] == "warning"]
