"""What a new bot author reads is true: the pages a bridged bot is written from
(docs/bots.md, the rules pages, ``--help``) name what the code has."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from twistarena import engine
from twistarena.bots import LADDER, STRATEGIES
from twistarena.clients.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
BOTS_MD = (ROOT / "docs" / "bots.md").read_text()


def _section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section of a markdown text."""
    start = text.index(f"## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_five_minute_path_names_every_rung_of_the_ladder() -> None:
    practice = _section(BOTS_MD, "Five minutes")
    strength = practice[practice.index("--strength"):practice.index("```", practice.index(
        "--strength"))]
    assert [rung for rung in LADDER if f"`{rung}`" not in strength] == []


def test_no_page_counts_the_starters_wrong() -> None:
    starters = sorted(p.name for p in (ROOT / "clients" / "starters").iterdir() if p.is_dir())
    rows = re.findall(r"^\| [^|]+ \| \[`clients/starters/(\w+)/", _section(BOTS_MD, "The starters"),
                      re.MULTILINE)
    assert sorted(rows) == starters
    assert "All three" not in BOTS_MD


def test_match_create_help_lists_every_house_strategy(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # one line per option: no word split at a hyphen
    with pytest.raises(SystemExit):
        build_parser().parse_args(["match", "create", "--help"])
    bots = next(line for line in capsys.readouterr().out.splitlines()
                if line.strip().startswith("--bots"))
    assert [s for s in STRATEGIES if s not in bots] == []


@pytest.mark.parametrize(("game", "players"), [("tricky_twist", 3), ("twisted", 2),
                                                ("twhist", 3)])
def test_the_last_phase_is_over_in_every_game_and_its_rules_page(game: str,
                                                                 players: int) -> None:
    state = engine.make(game, players, seed=3)
    rng = random.Random(3)
    while state.to_act():
        seat = state.to_act()[0]
        state.apply(seat, rng.choice(state.legal_action_ids(seat)))
    assert state.observation(0)["phase"] == "over"
    page = (ROOT / "docs" / "rules" / f"{game}.md").read_text()
    assert "| `over` |" in page and "`game_over`" not in page


def test_observation_fields_link_to_the_field_reference() -> None:
    row = next(line for line in BOTS_MD.splitlines() if line.startswith("| `observation` |"))
    assert "(protocol-reference.md#observationsproto)" in row
    assert "section 13" not in BOTS_MD
