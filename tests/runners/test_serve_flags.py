"""``serve --runners``: how many runners ``serve`` starts, and with which token."""

from __future__ import annotations

import argparse

import pytest
from twistarena.clients.cli.runners import planned_runners, runner_count, runner_token


def flags(runners: str = "auto", token: str | None = None,
          sandbox: str = "bwrap") -> argparse.Namespace:
    return argparse.Namespace(runners=runner_count(runners), runner_token=token,
                              sandbox=sandbox)


def test_auto_starts_two_beside_the_embedded_valkey_and_none_on_a_shared_store() -> None:
    assert planned_runners(flags(), redis_url=None) == 2
    assert planned_runners(flags(), redis_url="redis://valkey:6379/0") == 0
    assert planned_runners(flags("3"), redis_url="redis://valkey:6379/0") == 3
    assert planned_runners(flags("0"), redis_url=None) == 0
    with pytest.raises(argparse.ArgumentTypeError):
        runner_count("-1")


def test_a_token_is_made_up_only_for_runners_serve_starts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TWISTARENA_RUNNER_TOKEN", raising=False)
    made = runner_token(flags(), starts_runners=True)
    assert made is not None and made.startswith("rt_") and len(made) > 30
    assert runner_token(flags(), starts_runners=True) != made
    assert runner_token(flags(), starts_runners=False) is None
    assert runner_token(flags(token="rt_given"), starts_runners=True) == "rt_given"
    monkeypatch.setenv("TWISTARENA_RUNNER_TOKEN", "rt_from_env")
    assert runner_token(flags(), starts_runners=False) == "rt_from_env"


def test_auto_starts_none_on_a_host_that_cannot_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """A runner there would refuse to start again and again: ``auto`` starts none (and
    says why once); asked for by number, or with ``--sandbox none``, they start."""
    from twistarena.sandbox import launch

    launch._bwrap_problem.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    try:
        assert planned_runners(flags(), redis_url=None) == 0
        assert planned_runners(flags("2"), redis_url=None) == 2
        assert planned_runners(flags(sandbox="none"), redis_url=None) == 2
    finally:
        launch._bwrap_problem.cache_clear()
