"""The JSON behind the pages: contract messages turned into what ``/api/...`` serves.

Only what a spectator may see goes out: a match's seed and action log appear
once the match is over (the server's replay of a finished match is public),
never while it runs. A replay also carries every seat's hidden cards at each
step (hands, Tricky Twist reserves, Twisted's face-down expert cards): they
follow from the seed, so they are shown exactly when the server opens the
replay (after the end; a duplicate-block game once its block ended).
"""

from __future__ import annotations

from typing import Any

from twistarena import engine
from twistarena.clients.sdk.arenas import arena_rating_json, rating_json, recent_match_json
from twistarena.clients.sdk.convert import REASONS, STATUSES, MatchResult, struct_to_dict
from twistarena.league import PlackettLuce, Rating
from twistarena.v1 import arenas_pb2, hosting_pb2, match_pb2, matchmaking_pb2, tournaments_pb2

JSON = dict[str, Any]

OVER = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED)
TOURNAMENT_STATUSES = {v: k.removeprefix("TOURNAMENT_").lower()
                       for k, v in tournaments_pb2.TournamentStatus.items()}
FORMATS = {v: k.lower() for k, v in tournaments_pb2.TournamentFormat.items()}


def seat_label(seat: match_pb2.SeatInfo | None, index: int) -> str:
    """The name a page shows for a seat: its name, else its house bot, else 'seat N'."""
    if seat is None:
        return f"seat {index}"
    return seat.name or (f"{seat.house_bot} (house)" if seat.house_bot else f"seat {index}")


def match_json(match: match_pb2.Match, node: str = "") -> JSON:
    """One match as the lobby and the match page show it."""
    tc = match.options.time_control
    seats = {s.seat: s for s in match.seats}
    over = match.status in OVER
    out: JSON = {
        "match_id": match.match_id,
        "game_id": match.options.game_id,
        "game": engine.game(match.options.game_id).name
        if match.options.game_id in engine.GAME_IDS else match.options.game_id,
        "num_players": match.options.num_players,
        "status": STATUSES.get(match.status, str(match.status)).lower(),
        "actions": match.actions,
        "created_at": match.created_at.ToJsonString() if match.HasField("created_at") else "",
        "created_ts": match.created_at.seconds + match.created_at.nanos / 1e9,
        "node": node,
        "decision_ms": tc.decision_ms,
        "seats": [{"seat": i, "name": seat_label(seats.get(i), i),
                   "house_bot": seats[i].house_bot if i in seats else "",
                   "connected": seats[i].connected if i in seats else False,
                   "timeouts": seats[i].timeouts if i in seats else 0}
                  for i in range(match.options.num_players)],
        "game_options": struct_to_dict(match.options.game_options),
        "result": MatchResult.from_proto(match.result).to_json() if over else None,
    }
    if over:
        out["seed"] = match.seed
    return out


def hands_of(state: engine.State) -> list[JSON]:
    """Every seat's hidden cards now, as that seat sees them: its hand, its Tricky
    Twist reserve, its Twhist cards and its Twisted face-down expert cards
    (which not even their owner sees during play, so they come from the deal)."""
    zones = state.card_zones()
    hands: list[JSON] = []
    for seat in range(state.num_players):
        seen = state.observation(seat)
        hands.append({"seat": seat, "hand": seen.get("hand", []),
                      "reserve": seen.get("reserve", []),
                      "twhist": seen.get("twhist_hand", []),
                      "face_down": zones.get(f"face_down_{seat}", [])})
    return hands


def replay_json(replay: match_pb2.Replay) -> JSON:
    """A finished match step by step: the public view after each recorded action,
    rebuilt on the engine from the public replay, with the events in words and
    every seat's hidden cards (``hands``: the replay is public, so is the deal)."""
    match = replay.match
    options = match.options
    info = engine.game(options.game_id)
    state = engine.make(options.game_id, num_players=options.num_players, seed=match.seed,
                        options=struct_to_dict(options.game_options))
    seen = 0

    def new_lines() -> list[str]:
        nonlocal seen
        lines = [line for e in state.events[seen:] if (line := info.narrate(e.view(None)))]
        seen = len(state.events)
        return lines

    steps: list[JSON] = [{"view": state.public_view(), "hands": hands_of(state),
                          "lines": new_lines(), "action": None}]
    for recorded in replay.actions:
        action = state.describe(recorded.seat, recorded.action_id)
        state.apply(recorded.seat, recorded.action_id)
        steps.append({"view": state.public_view(), "hands": hands_of(state),
                      "lines": new_lines(),
                      "action": {"seat": recorded.seat, "label": action.label,
                                 "timeout": recorded.timeout}})
    return {"match": match_json(match), "steps": steps}


def standing_json(row: tournaments_pb2.StandingRow, names: dict[str, str]) -> JSON:
    return {"entrant": row.entrant, "name": names.get(row.entrant, row.entrant),
            "games": row.games, "wins": row.wins, "win_share": row.win_share,
            "win_ci": [row.win_ci_low, row.win_ci_high], "mean_score": row.mean_score,
            "score_ci": [row.score_ci_low, row.score_ci_high], "mean_place": row.mean_place,
            "mu": row.mu, "sigma": row.sigma, "conservative": row.conservative}


def rating_history(record: tournaments_pb2.Tournament) -> dict[str, list[list[float]]]:
    """Each entrant's rating (mu, sigma) after each of its played games, in schedule
    order, by the same Plackett-Luce model the standings use."""
    model = PlackettLuce()
    ratings: dict[str, Rating] = {}
    history: dict[str, list[list[float]]] = {}
    for entrant in record.spec.entrants:
        ratings[entrant] = model.rating()
        history[entrant] = [[model.mu, model.sigma]]
    for game in record.games:
        if not game.places:
            continue
        seats = list(game.seats)
        current = [ratings.setdefault(s, model.rating()) for s in seats]
        for entrant, rating in zip(seats, model.rate(current, list(game.places)), strict=True):
            ratings[entrant] = rating
            history.setdefault(entrant, []).append([round(rating.mu, 3),
                                                    round(rating.sigma, 3)])
    return history


def tournament_json(record: tournaments_pb2.Tournament, names: dict[str, str],
                    full: bool = True) -> JSON:
    """A tournament's standings, progress and (``full``) games and rating history."""
    spec = record.spec
    out: JSON = {
        "tournament_id": record.tournament_id,
        "game_id": spec.game_id,
        "num_players": spec.num_players,
        "format": FORMATS.get(spec.format, ""),
        "duplicate": spec.duplicate_deals,
        "status": TOURNAMENT_STATUSES.get(record.status, "").replace("tournament_", ""),
        "games_planned": record.games_planned,
        "games_done": record.games_done,
        "entrants": [{"entrant": e, "name": names.get(e, e)} for e in spec.entrants],
        "standings": [standing_json(r, names) for r in record.standings],
        "detail": record.detail,
        "created_at": record.created_at.ToJsonString() if record.HasField("created_at")
        else "",
    }
    if full:
        out["games"] = [{"round": g.round, "table": g.table, "deal": g.deal,
                         "seats": [names.get(s, s) for s in g.seats],
                         "match_id": g.match_id, "scores": list(g.scores),
                         "places": list(g.places)} for g in record.games]
        out["ratings"] = rating_history(record)
    return out


def arena_json(arena: arenas_pb2.Arena) -> JSON:
    """An arena as the lobby and its page show it."""
    return {"arena_id": arena.arena_id, "game_id": arena.game_id,
            "game": engine.game(arena.game_id).name
            if arena.game_id in engine.GAME_IDS else arena.game_id,
            "num_players": arena.num_players,
            "status": arenas_pb2.ArenaStatus.Name(arena.status)
            .removeprefix("ARENA_STATUS_").lower(),
            "house_bots": list(arena.house_bots), "matches_per_minute": arena.matches_per_minute,
            "max_concurrent_per_agent": arena.max_concurrent_per_agent,
            "matches_played": arena.matches_played, "players": arena.players,
            "enrolled": arena.enrolled}


def leaderboard_json(board: arenas_pb2.Leaderboard) -> JSON:
    """An arena's leaderboard and the rating history (mu, sigma) of its top rows."""
    rows = [{"rank": r.rank, "agent_id": r.agent_id, "name": r.name, "version": r.version,
             "conservative": r.conservative, "mu": r.mu, "sigma": r.sigma, "games": r.games,
             "wins": r.wins, "win_share": r.win_share, "last_match_id": r.last_match_id,
             "last_match_at": r.last_match_at.ToJsonString()
             if r.HasField("last_match_at") else "", "house": r.house}
            for r in board.rows]
    ratings = {f"{h.agent_id}@{h.version}": [[round(p.mu, 3), round(p.sigma, 3), p.ended_ms]
                                             for p in h.points] for h in board.history}
    # The legend's names are the table's: the name, and the version when there is one.
    names = {f"{r.agent_id}@{r.version}": f"{r.name} v{r.version}" if r.version else r.name
             for r in board.rows}
    return {"arena": arena_json(board.arena), "rows": rows, "ratings": ratings,
            "names": names}


def agent_json(info: matchmaking_pb2.AgentInfo,
               details: hosting_pb2.AgentDetails | None) -> JSON:
    """An agent's page: its ratings per arena and version with their curves, its
    recent arena matches, its hosted versions and their error and timeout counts."""
    versions = [] if details is None else [
        {"version_id": v.version_id, "created_ms": v.created_ms, "active": v.active,
         "number": len(details.versions) - i, "matches": v.stats.matches,
         "crashes": v.stats.crashes, "timeouts": v.stats.timeouts,
         "illegal_outputs": v.stats.illegal_outputs}
        for i, v in enumerate(details.versions)]
    return {**rating_json(info), "errors": info.errors, "timeouts": info.timeouts,
            "ratings": [arena_rating_json(r, history=True) for r in info.arena_ratings],
            "recent_matches": [recent_match_json(m) for m in info.recent_matches],
            "versions": versions}


def reason_name(reason: int) -> str:
    return REASONS.get(reason, str(reason))
