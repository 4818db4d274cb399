"""Results of played games, standings with confidence intervals and ratings, paired
comparisons, and their CSV/JSON forms (as strings: the caller decides where they go).

Games that share a hand (one deal played in every seating) are not independent,
so intervals and tests use the *block* (round, table, deal) as their unit: an
entrant's figures for a block are the mean over its seats in that block.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from .ratings import PlackettLuce, Rating
from .schedule import ScheduledGame
from .stats import PairedTest, mean, mean_ci, paired_test, wilson_ci


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game: who sat where, final scores and places (1 = won, ties share)."""

    round: int
    table: int
    deal: int
    seed: int
    seats: tuple[str, ...]
    scores: tuple[int, ...]
    places: tuple[int, ...]

    @classmethod
    def of(cls, game: ScheduledGame, scores: Sequence[int], places: Sequence[int]) -> GameResult:
        return cls(game.round, game.table, game.deal, game.seed, game.seats,
                   tuple(scores), tuple(places))

    @property
    def block(self) -> str:
        return f"{self.round}/{self.table}/{self.deal}"

    def win_shares(self) -> list[float]:
        """1 split evenly among the seats placed first: the shares of a game sum to 1."""
        first = sum(1 for p in self.places if p == 1)
        return [1.0 / first if p == 1 else 0.0 for p in self.places]

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "table": self.table, "deal": self.deal, "seed": self.seed,
                "seats": list(self.seats), "scores": list(self.scores),
                "places": list(self.places)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameResult:
        return cls(int(data["round"]), int(data["table"]), int(data["deal"]), int(data["seed"]),
                   tuple(str(s) for s in data["seats"]), tuple(int(x) for x in data["scores"]),
                   tuple(int(x) for x in data["places"]))


@dataclass(frozen=True, slots=True)
class Standing:
    """One entrant's line. ``games`` counts seats played (an entrant may hold several
    seats of one game); ``wins`` is its summed win share; intervals are 95% by default."""

    entrant: str
    games: int
    blocks: int
    mean_score: float
    score_ci_low: float
    score_ci_high: float
    wins: float
    win_share: float
    win_ci_low: float
    win_ci_high: float
    mean_place: float
    mu: float
    sigma: float
    conservative: float


def rate_results(results: Iterable[GameResult], model: PlackettLuce | None = None,
                 initial: Mapping[str, Rating] | None = None) -> dict[str, Rating]:
    """Ratings after every game in order. An entrant holding several seats of one
    game is rated per seat from its rating before the game; the updates are averaged."""
    model = model or PlackettLuce()
    ratings: dict[str, Rating] = dict(initial or {})
    for r in results:
        before = [ratings.get(name) or model.rating() for name in r.seats]
        after = model.rate(before, r.places)
        grouped: dict[str, list[Rating]] = {}
        for name, new in zip(r.seats, after, strict=True):
            grouped.setdefault(name, []).append(new)
        for name, news in grouped.items():
            ratings[name] = Rating(mean([x.mu for x in news]), mean([x.sigma for x in news]))
    return ratings


def per_block(results: Iterable[GameResult]) -> dict[str, dict[str, tuple[float, float]]]:
    """entrant -> block -> (mean score, mean win share) over its seats in that block."""
    acc: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for r in results:
        shares = r.win_shares()
        for name, score, share in zip(r.seats, r.scores, shares, strict=True):
            acc.setdefault(name, {}).setdefault(r.block, []).append((score, share))
    return {name: {b: (mean([float(s) for s, _ in v]), mean([w for _, w in v]))
                   for b, v in blocks.items()}
            for name, blocks in acc.items()}


def compute_standings(results: Sequence[GameResult], model: PlackettLuce | None = None,
                      level: float = 0.95) -> list[Standing]:
    """Standings, best conservative rating first (then mean score)."""
    ratings = rate_results(results, model)
    blocks = per_block(results)
    seat_games: dict[str, list[tuple[int, float, int]]] = {}
    for r in results:
        for name, score, share, place in zip(r.seats, r.scores, r.win_shares(), r.places,
                                             strict=True):
            seat_games.setdefault(name, []).append((score, share, place))
    out = []
    for name, rows in seat_games.items():
        per = list(blocks[name].values())
        low, high = mean_ci([s for s, _ in per], level)
        block_wins = sum(w for _, w in per)
        wlow, whigh = wilson_ci(block_wins, len(per), level)
        rating = ratings[name]
        wins = sum(w for _, w, _ in rows)
        out.append(Standing(
            entrant=name, games=len(rows), blocks=len(per),
            mean_score=mean([float(s) for s, _, _ in rows]), score_ci_low=low, score_ci_high=high,
            wins=wins, win_share=wins / len(rows), win_ci_low=wlow, win_ci_high=whigh,
            mean_place=mean([float(p) for _, _, p in rows]),
            mu=rating.mu, sigma=rating.sigma, conservative=rating.conservative))
    out.sort(key=lambda s: (-s.conservative, -s.mean_score, s.entrant))
    return out


@dataclass(frozen=True, slots=True)
class Comparison:
    """A's score minus B's over the blocks where both played (paired by deal)."""

    a: str
    b: str
    test: PairedTest


def pairwise(results: Sequence[GameResult], entrants: Sequence[str] | None = None,
             level: float = 0.95) -> list[Comparison]:
    """Paired per-block score differences of every pair of entrants (in the given order)."""
    blocks = per_block(results)
    names = list(entrants) if entrants is not None else sorted(blocks)
    out = []
    for a, b in itertools.combinations(names, 2):
        common = [k for k in blocks.get(a, {}) if k in blocks.get(b, {})]
        xs = [blocks[a][k][0] for k in common]
        ys = [blocks[b][k][0] for k in common]
        out.append(Comparison(a, b, paired_test(xs, ys, level)))
    return out


# -- export --------------------------------------------------------------------------

_COLUMNS = [f.name for f in fields(Standing)]


def standings_to_csv(standings: Sequence[Standing],
                     names: Mapping[str, str] | None = None) -> str:
    """The standings as CSV: each entrant's ``name`` (from ``names``, else its id) first,
    then its id (``entrant``) and the figures. ``standings_from_csv`` reads it back."""
    names = names or {}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["name", *_COLUMNS])
    for s in standings:
        writer.writerow([names.get(s.entrant, s.entrant),
                         *(repr(v) if isinstance(v, float) else v for v in asdict(s).values())])
    return buf.getvalue()


def standings_from_csv(text: str) -> list[Standing]:
    rows = list(csv.DictReader(io.StringIO(text)))
    return [_standing(row) for row in rows]


def _standing(row: Mapping[str, Any]) -> Standing:
    kinds = {f.name: f.type for f in fields(Standing)}
    values: dict[str, Any] = {}
    for name, kind in kinds.items():
        raw = row[name]
        values[name] = raw if kind == "str" else int(raw) if kind == "int" else float(raw)
    return Standing(**values)


def report_json(standings: Sequence[Standing], results: Sequence[GameResult] = (),
                comparisons: Sequence[Comparison] = (),
                meta: Mapping[str, Any] | None = None) -> str:
    """Standings (and optionally every game and the paired comparisons) as JSON."""
    doc: dict[str, Any] = {
        "meta": dict(meta or {}),
        "standings": [asdict(s) for s in standings],
        "comparisons": [{"a": c.a, "b": c.b, **{k: _finite_or_none(v)
                                                 for k, v in asdict(c.test).items()}}
                        for c in comparisons],
        "results": [r.to_json() for r in results],
    }
    return json.dumps(doc, indent=2, allow_nan=False)


def _finite_or_none(value: Any) -> Any:
    """JSON has no infinity (a t statistic of identical non-zero differences)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def report_from_json(text: str) -> tuple[list[Standing], list[GameResult], dict[str, Any]]:
    """Standings, results and meta back from ``report_json``."""
    doc = json.loads(text)
    standings = [_standing(s) for s in doc["standings"]]
    results = [GameResult.from_json(r) for r in doc.get("results", [])]
    return standings, results, dict(doc.get("meta", {}))
