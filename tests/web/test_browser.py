"""The web face in a real headless browser against a real server with real matches.

Each table is checked card by card: the cards the page draws in each zone
(``data-zone``/``data-card`` of every drawn card) must be the cards the
public view at that moment holds there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from twistarena import engine
from twistarena.clients.sdk import MatchClient, TournamentClient, play
from twistarena.clients.sdk.convert import oneof_to_dict, struct_to_dict

from tests.support.agents import run
from tests.support.browser import Page, browser_page, find_browser
from tests.support.hosting import finished_match
from tests.support.server import InProcessServer
from tests.support.waiting import wait_until

PLAYERS = {"tricky_twist": 3, "twisted": 2, "twhist": 3}

DRAWN = """(() => { const z = {};
  document.querySelectorAll('#table .card').forEach((c) => {
    (z[c.dataset.zone] = z[c.dataset.zone] || []).push(c.dataset.card); });
  return z; })()"""


def expected_zones(game: str, view: dict[str, Any]) -> dict[str, list[str]]:
    """The cards each zone of the table must show for ``view`` (empty zones omitted)."""
    zones: dict[str, list[str]] = {}

    def put(zone: str, cards: list[Any]) -> None:
        if cards:
            zones[zone] = [str(c) for c in cards]

    def backs(zone: str, count: int) -> None:
        put(zone, [f"back{i}" for i in range(count)])

    if game == "tricky_twist":
        put("trick", [p["card"]["id"] for p in view["trick"]])
        for p in view["players"]:
            s = p["seat"]
            backs(f"hand-{s}", p["hand_count"])
            put(f"known-{s}", [c["id"] for c in p["known_in_hand"]])
            put(f"tricks-{s}", [c["id"] for t in p["tricks"] for c in t["cards"]])
            put(f"false-{s}", [c["id"] for t in p["false_tricks"] for c in t["cards"]])
    elif game == "twisted":
        put("row", view["row"])
        for s in view["seats"]:
            backs(f"hand-{s['seat']}", s["hand_count"])
            put(f"minus-{s['seat']}", s["minus_pile"])
            put(f"plus-{s['seat']}", s["plus_pile"])
    else:
        # A Twhist card played lies in the trick instead of a number card.
        put("trick", [f"tw:{t['twhist']}" if t["twhist"] else t["card"]["id"]
                      for t in view["trick"]])
        if view["pool"] or view["open_cards"] or view["picked"]:
            put("pool", [c["id"] for c in view["pool"]])
            put("open", [c["id"] for c in view["open_cards"]])
            put("picked", [c["id"] for c in view["picked"]])
        rules = view["rules"]
        for p in view["players"]:
            s = p["seat"]
            backs(f"hand-{s}", p["hand_count"])
            # TH-1.1: ten FLIP cards each, star side up for those in star_side.
            put(f"flip-{s}", [f"{v}*" if v in p["star_side"] else v
                              for v in range(rules["flip_min"], rules["flip_max"] + 1)])
            if p["twhist_names"]:
                put(f"twhist-{s}", [f"tw:{name}" for name in p["twhist_names"]])
            else:
                backs(f"twhist-{s}", p["twhist_count"])
    return zones


@pytest.fixture(scope="module")
def chromium() -> str:
    return find_browser()


class Gate:
    """Seats that move only when the test lets one move happen."""

    def __init__(self) -> None:
        self.permits = asyncio.Semaphore(0)

    async def act(self, observation: Any, legal_actions: list[Any]) -> int:
        await self.permits.acquire()
        return int(legal_actions[0].id)


async def latest_view(client: MatchClient, match_id: str, views: list[dict[str, Any]],
                      over: asyncio.Event) -> None:
    """Keep ``views`` as the spectator views of the match, as they come."""
    async for msg in client.watch(match_id):
        if msg.WhichOneof("msg") == "view":
            views.append(oneof_to_dict(msg.view))
    over.set()


async def expect_table(page: Page, game: str, view: dict[str, Any], what: str) -> None:
    want = expected_zones(game, view)
    drawn: list[Any] = [None]

    async def drawn_as_held() -> bool:
        drawn[0] = await page.evaluate(DRAWN)
        return bool(drawn[0] == want)

    try:
        await wait_until(drawn_as_held, what, timeout=15)
    except AssertionError:
        raise AssertionError(f"{what}: the page draws {drawn[0]}, the public view holds "
                             f"{want}") from None


def assert_no_console_errors(page: Page) -> None:
    assert page.errors == [], f"the page logged errors: {page.errors}"


@contextlib.asynccontextmanager
async def gated_match(server: InProcessServer, game: str) -> AsyncIterator[tuple[str, Gate]]:
    """A match of ``game`` whose remote seats move one decision per permit."""
    client = MatchClient(server.target)
    players = PLAYERS[game]
    created = await client.create_match(game, players, seed=11, decision_ms=60_000,
                                        seat_names=[f"gated-{i}" for i in range(players)])
    gate = Gate()
    seats = [asyncio.create_task(play(gate, server=server.target,
                                      match_id=created.match.match_id, token=t.token))
             for t in created.seat_tokens]
    try:
        yield created.match.match_id, gate
    finally:
        for task in seats:
            task.cancel()
        await asyncio.gather(*seats, return_exceptions=True)
        with contextlib.suppress(Exception):
            await client.cancel_match(created.match.match_id, "test over")


@pytest.mark.parametrize("game", list(PLAYERS))
def test_lobby_lists_a_live_match_whose_page_moves_with_it(
        game: str, server: InProcessServer, web: str, chromium: str) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        async with gated_match(server, game) as (match_id, gate), \
                browser_page(chromium) as page:
            views: list[dict[str, Any]] = []
            over = asyncio.Event()
            watcher = asyncio.create_task(latest_view(client, match_id, views, over))
            try:
                await page.goto(f"{web}/?game={game}")
                await page.wait_for(
                    f"!!document.querySelector('#live tr[data-match=\"{match_id}\"]')",
                    what=f"the lobby to list live match {match_id}")
                await page.screenshot(f"lobby-{game}")
                await page.goto(f"{web}/matches/{match_id}")
                await wait_until(lambda: views, "the watcher's first view", interval=0.02)
                await expect_table(page, game, views[-1], "before any move")
                for move in range(3):
                    seen = len(views)
                    gate.permits.release()
                    await wait_until(lambda: len(views) > seen,  # noqa: B023 (awaited here)
                                     "the match moved", timeout=15, interval=0.02)
                    await asyncio.sleep(0)  # let any view of the same move arrive
                    await expect_table(page, game, views[-1], f"after move {move + 1}")
                assert await page.evaluate("document.body.dataset.mode") == "live"
                await page.screenshot(f"match-live-{game}")
                assert_no_console_errors(page)
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher

    run(scenario(), timeout=120)


def public_views(replay: Any) -> list[dict[str, Any]]:
    """The public view after each recorded action, re-simulated on the engine."""
    return [state.public_view() for state in replayed(replay)]


def replayed(replay: Any) -> Iterator[engine.State]:
    """The engine state before the first and after each recorded action."""
    options = replay.match.options
    state = engine.make(options.game_id, num_players=options.num_players,
                        seed=replay.match.seed, options=struct_to_dict(options.game_options))
    yield state
    for action in replay.actions:
        state.apply(action.seat, action.action_id)
        yield state


def hidden_zones(game: str, state: engine.State) -> dict[str, list[str]]:
    """The zones "show hands" adds or turns face up: every seat's hand, Tricky
    Twist reserve, Twhist cards and Twisted face-down expert cards, as sets."""
    zones = state.card_zones()
    out: dict[str, list[str]] = {}
    for seat in range(state.num_players):
        out[f"hand-{seat}"] = sorted(str(c) for c in zones[f"hand_{seat}"])
        if game == "tricky_twist":
            out[f"reserve-{seat}"] = sorted(str(c) for c in zones[f"reserve_{seat}"])
        if game == "twisted":
            out[f"facedown-{seat}"] = sorted(str(c) for c in zones[f"face_down_{seat}"])
        if game == "twhist":
            held = state.observation(seat)["twhist_hand"]
            out[f"twhist-{seat}"] = sorted(f"tw:{name}" for name in held)
    return {zone: cards for zone, cards in out.items() if cards}


HIDDEN_DRAWN = """(() => { const z = {};
  document.querySelectorAll('#table .card').forEach((c) => {
    const zone = c.dataset.zone;
    if (/^(hand|reserve|facedown|twhist)-/.test(zone))
      (z[zone] = z[zone] || []).push(c.dataset.card); });
  Object.values(z).forEach((cards) => cards.sort());
  return z; })()"""


async def go_to_step(page: Page, step: int) -> None:
    """Move the replay's slider to ``step`` as a user drags it, and wait for the draw."""
    await page.evaluate(f"(() => {{ const s = document.getElementById('step');"
                        f" s.value = '{step}'; s.dispatchEvent(new Event('input')); }})()")
    await page.wait_for(f"document.body.dataset.step === '{step}'", what=f"step {step}")


@pytest.mark.parametrize("game", list(PLAYERS))
def test_replay_scrubber_draws_the_public_view_of_each_step(
        game: str, server: InProcessServer, web: str, chromium: str) -> None:
    async def scenario() -> None:
        client = MatchClient(server.target)
        created = await client.create_match(game, PLAYERS[game], seed=5,
                                            house_bots=["random"] * PLAYERS[game])
        match_id = created.match.match_id
        await finished_match(server.target, match_id, "the house bots finished the match")
        recorded = await client.get_replay(match_id)
        views = public_views(recorded)
        step = len(views) // 2
        async with browser_page(chromium) as page:
            await page.goto(f"{web}/matches/{match_id}?step={step}")
            await page.wait_for("document.body.dataset.step", what="the replay to draw")
            assert await page.evaluate("document.body.dataset.mode") == "replay"
            assert int(await page.evaluate("document.body.dataset.step")) == step
            await expect_table(page, game, views[step], f"step {step}")
            await page.screenshot(f"match-replay-{game}")
            await page.press("ArrowRight", "ArrowRight", 39)
            await page.wait_for(f"document.body.dataset.step === '{step + 1}'",
                                what="the right arrow to step forward")
            await expect_table(page, game, views[step + 1], f"step {step + 1}")
            assert f"step={step + 1}" in await page.evaluate("window.location.search")
            await page.evaluate("document.getElementById('back').click()")
            await page.evaluate("document.getElementById('back').click()")
            await page.wait_for(f"document.body.dataset.step === '{step - 1}'",
                                what="the back button to step back twice")
            await expect_table(page, game, views[step - 1], f"step {step - 1}")
            last = len(views) - 1
            states = [hidden_zones(game, s) for s in replayed(recorded)]
            assert states[step], "the middle step holds hidden cards"
            # The match is over: its last step shows every hand, without the switch.
            await go_to_step(page, last)
            assert await page.evaluate("document.body.dataset.hands") == "shown"
            assert await page.evaluate(HIDDEN_DRAWN) == states[last]
            header = await page.evaluate("document.querySelector('#table').innerText")
            assert "-1..-1" not in header and "undefined" not in header
            # Each event is numbered with its step; a multi-line event keeps its lines.
            numbers = await page.evaluate(
                "[...document.querySelectorAll('#events li')].map((li) => Number(li.value))")
            assert numbers == sorted(numbers) and numbers[-1] <= last and numbers[0] == 0
            if game == "twisted":
                over = await page.evaluate(
                    "[...document.querySelectorAll('#events li')].map((li) => li.innerText)"
                    ".filter((t) => t.startsWith('Round 1 over'))[0]")
                assert over.count("\n") == PLAYERS[game], over
                assert "· total" not in header
            await go_to_step(page, step)
            assert "back0" in json.dumps(await page.evaluate(HIDDEN_DRAWN))
            await page.evaluate("document.getElementById('show-hands').click()")
            await page.wait_for("document.body.dataset.hands === 'shown'", what="show hands")
            for at in (step, last):
                await go_to_step(page, at)
                drawn = await page.evaluate(HIDDEN_DRAWN)
                assert drawn == states[at], f"step {at}: drawn {drawn}, dealt {states[at]}"
            await page.screenshot(f"match-replay-hands-{game}")
            assert_no_console_errors(page)

    run(scenario(), timeout=120)


def test_tournament_page_shows_standings_and_other_pages_load(
        server: InProcessServer, web: str, chromium: str) -> None:
    async def scenario() -> None:
        tournaments = TournamentClient(server.target)
        created = await tournaments.create("twisted", ["random", "heuristic"], players=2,
                                           games_per_pairing=2, seed=3)
        tid = created.tournament_id

        async def all_played() -> Any:
            record = await tournaments.get(tid)
            return record if record.games_done == record.games_planned else None

        record = await wait_until(all_played, "the tournament finished", timeout=90,
                                  interval=0.2)
        async with browser_page(chromium) as page:
            await page.goto(f"{web}/tournaments/{tid}")
            rows = await page.wait_for(
                "document.querySelectorAll('#standings tr[data-entrant]').length",
                what="the standings")
            assert rows == len(record.standings) == 2
            drawn = await page.evaluate(
                "[...document.querySelectorAll('#standings tr[data-entrant]')]"
                ".map((r) => r.dataset.entrant)")
            assert drawn == [r.entrant for r in record.standings]
            games = await page.evaluate(
                "document.querySelectorAll('#games a[href^=\"/matches/\"]').length")
            assert games == len([g for g in record.games if g.match_id])
            assert await page.evaluate("document.querySelectorAll('#ratings polyline').length") \
                == 2
            await page.screenshot("tournament")
            for path, ready, name in (
                    ("/agents", "#agents", "agents"), ("/nodes", "#nodes tr td", "nodes"),
                    ("/rules/twhist", "main h1, main .rules-missing, main article", "rules")):
                await page.goto(f"{web}{path}")
                await page.wait_for(f"!!document.querySelector('{ready}')", what=path)
                await page.screenshot(name)
            assert_no_console_errors(page)

    run(scenario(), timeout=150)


#: An agent name that is markup in an HTML page or an SVG drawing.
HOSTILE_NAME = 'mid</title><b id="injected">x</b><img src=x onerror="document.body.id=1">'


def test_arena_leaderboard_agent_page_and_lobby_show_the_ladder(
        server: InProcessServer, web: str, chromium: str) -> None:
    from twistarena.clients.sdk import register_agent
    from twistarena.clients.sdk.arenas import ArenaLadderClient

    ladder = server.app.leaguehosting.ladder

    async def rate(*args: Any) -> bool:
        return bool(await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
            ladder.record(*args), server.loop)))  # type: ignore[arg-type]

    async def scenario() -> None:
        arenas = ArenaLadderClient(server.target)
        await arenas.create("tricky_twist", 4, house=["random"])
        # One name is markup: every page shows it as text (nothing is injected).
        strong, mid, weak = [(await register_agent(server.target, f"web-{name}"))[0]
                             for name in ("strong", HOSTILE_NAME, "weak")]
        played = (await MatchClient(server.target).create_match(
            "tricky_twist", 3, seed=9, house_bots=["random"] * 3)).match.match_id
        table = [f"{strong}@1", f"{mid}@1", "house:random@0", f"{weak}@1"]
        for match_id in (played, "w1", "w2"):
            assert await rate("tricky_twist-4", match_id, table, [1, 2, 3, 4], True)
        # The weak agent's second version plays once.
        await rate("tricky_twist-4", "w-new", [*table[:3], f"{weak}@2"], [2, 3, 4, 1], True)
        board = await arenas.leaderboard("tricky_twist-4")
        async with browser_page(chromium) as page:
            await page.goto(f"{web}/arenas/tricky_twist-4")
            await page.wait_for("document.querySelectorAll('#leaderboard tr[data-agent]').length",
                                what="the leaderboard")
            drawn = await page.evaluate(
                "[...document.querySelectorAll('#leaderboard tr[data-agent]')]"
                ".map((r) => [r.dataset.agent, r.cells[2].textContent, r.cells[3].textContent,"
                " !!r.querySelector('.anchor')])")
            assert drawn == [[r.agent_id, f"v{r.version}" if r.version else "—",
                              f"{r.conservative:.2f}", r.house] for r in board.rows]
            assert await page.evaluate("document.querySelectorAll('#ratings polyline').length") \
                == len(board.history) == len(board.rows)
            # Last match: relative time, the ISO time in its tooltip.
            last = await page.evaluate(
                "[...document.querySelectorAll('#leaderboard tr[data-agent] time')]"
                ".map((t) => [t.textContent, t.title])")
            assert last and all(text.endswith(" ago") and title.endswith("Z")
                                for text, title in last)
            # One y axis with round ticks; the legend names the table's names.
            assert await page.evaluate("document.querySelectorAll('#ratings .y-axis').length") == 1
            assert await page.evaluate("document.querySelectorAll('#ratings .y-tick').length") >= 3
            table_names = [(r.name + (f" v{r.version}" if r.version else "")).strip()
                           for r in board.rows]
            legend = await page.evaluate(
                "[...document.querySelectorAll('.legend-entry')].map((e) => e.textContent.trim())")
            assert legend == table_names
            styles = "Object.fromEntries([...document.querySelectorAll('#ratings polyline')]" \
                     ".map((p) => [p.dataset.key, p.getAttribute('stroke') + '|' +" \
                     " p.getAttribute('stroke-dasharray')]))"
            before = await page.evaluate(styles)
            assert await page.evaluate("document.getElementById('injected') === null")
            assert f"web-{HOSTILE_NAME} v1" in await page.evaluate(
                "[...document.querySelectorAll('#ratings title')].map((t) => t.textContent)")
            await page.screenshot("arena")
            # The ranks change; every entrant keeps its colour and dash.
            for n in range(3):
                await rate("tricky_twist-4", f"w-flip{n}", [*table[:3], f"{weak}@2"][::-1],
                           [1, 2, 3, 4], True)
            await page.goto(f"{web}/arenas/tricky_twist-4")
            await page.wait_for("document.querySelectorAll('#ratings polyline').length",
                                what="the chart again")
            after = await page.evaluate(styles)
            assert {k: after[k] for k in before} == before
            order = await page.evaluate(
                "[...document.querySelectorAll('#leaderboard tr[data-agent]')]"
                ".map((r) => r.dataset.agent)")
            assert order != [r.agent_id for r in board.rows]
            await page.evaluate("(() => { const s = document.getElementById('x-axis');"
                                " s.value = 'time'; s.dispatchEvent(new Event('change')); })()")
            assert await page.evaluate("document.querySelector('#ratings svg')"
                                       ".getAttribute('aria-label')") == "rating over time"
            await page.goto(f"{web}/agents/{weak}")
            await page.wait_for("document.querySelectorAll('#ratings-table tr[data-arena]')"
                                ".length === 2", what="both versions of the agent")
            versions = await page.evaluate(
                "[...document.querySelectorAll('#ratings-table tr[data-arena]')]"
                ".map((r) => r.dataset.version)")
            assert versions == ["1", "2"]
            links = await page.evaluate(
                "[...document.querySelectorAll('#recent-matches tr[data-match]')]"
                ".map((r) => r.dataset.match)")
            assert links[0] == "w-flip2" and "w-new" in links and played in links
            assert "0 errors" in await page.evaluate(
                "document.getElementById('counts').textContent")
            await page.screenshot("agent")
            await page.goto(f"{web}/")
            await page.wait_for("!!document.querySelector('#arenas a[href=\"/arenas/"
                                "tricky_twist-4\"]')", what="the lobby's arena link")
            await page.goto(f"{web}/arenas")
            await page.wait_for("!!document.querySelector("
                                "'#arenas tr[data-arena=\"tricky_twist-4\"]')",
                                what="the arenas page")
            assert_no_console_errors(page)

    run(scenario(), timeout=90)


def test_one_agent_shows_one_rating_on_every_surface(
        server: InProcessServer, web: str, chromium: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An agent plays an arena; GetAgent, ListAgents, ``agent show --json``,
    /api/agents, /api/agents/ID, /agents, /agents/ID and the leaderboard give it
    the same rating (its arena row) and list the match it played."""
    from twistarena.clients.cli import main
    from twistarena.clients.sdk import AgentError, get_agent, queue_and_play, register_agent
    from twistarena.clients.sdk.arenas import ArenaLadderClient

    def first_legal(observation: object, legal_actions: list[Any]) -> int:
        return int(legal_actions[0].id)

    async def scenario() -> None:
        ladder = ArenaLadderClient(server.target)
        try:
            await ladder.create("twisted", 2, house=["random"])
        except AgentError as exists:  # another test of this session's server opened it
            assert exists.reason == "ARENA_EXISTS"
            await ladder.update("twisted-2", house=["random"])
        agent_id, token = await register_agent(server.target, "one-story")
        await ArenaLadderClient(server.target, admin_token=token).enroll("twisted-2", agent_id)
        await queue_and_play(first_legal, server.target, token, "twisted", 2,
                             tournament_only=True)

        async def rated() -> Any:
            board = await ladder.leaderboard("twisted-2")
            mine = [r for r in board.rows if r.agent_id == agent_id]
            return mine[0] if mine and mine[0].games == 1 else None

        row = await wait_until(rated, "the match rated", timeout=15)
        want = (round(row.mu, 6), round(row.sigma, 6), row.games)
        info = await get_agent(server.target, agent_id)
        assert (round(info.mu, 6), round(info.sigma, 6), info.matches) == want
        assert info.rating_arena_id == "twisted-2"
        [recent] = info.recent_matches
        assert recent.match_id == row.last_match_id and recent.opponents == ["house:random"]
        listed = [a for a in (await ladder.agents(name_contains="one-story")).agents]
        assert [(round(a.mu, 6), round(a.sigma, 6), a.matches) for a in listed] == [want]

        assert await asyncio.to_thread(main, ["agent", "show", "--server", server.target,
                                              agent_id, "--json"]) == 0
        out = capsys.readouterr().out  # the server's log lines too: its loop runs here
        shown, _end = json.JSONDecoder().raw_decode(out[out.index("\n{\n") + 1:])
        assert (round(shown["mu"], 6), round(shown["sigma"], 6), shown["matches"]) == want
        assert [(r["arena_id"], round(r["mu"], 6)) for r in shown["ratings"]] == [
            ("twisted-2", want[0])]
        assert shown["recent_matches"][0]["match_id"] == row.last_match_id

        async with browser_page(chromium) as page:
            await page.goto(f"{web}/agents")
            api = await page.evaluate("fetch('/api/agents').then((r) => r.json())")
            [mine] = [a for a in api["agents"] if a["agent_id"] == agent_id]
            assert (round(mine["mu"], 6), round(mine["sigma"], 6), mine["matches"]) == want
            assert mine["rating_arena_id"] == "twisted-2"
            one = await page.evaluate(f"fetch('/api/agents/{agent_id}').then((r) => r.json())")
            assert (round(one["mu"], 6), round(one["sigma"], 6), one["matches"]) == want
            mine_row = f"document.querySelector('#agents tr[data-agent=\"{agent_id}\"]')"
            await page.wait_for(f"!!{mine_row}", what="the agent's row")
            cells = await page.evaluate(f"[...{mine_row}.cells].map((c) => c.textContent)")
            assert cells[2:6] == [f"{row.conservative:.2f}", f"{row.mu:.2f}",
                                  f"{row.sigma:.2f}", "1"]
            assert cells[6] == "twisted-2"
            await page.goto(f"{web}/agents/{agent_id}")
            await page.wait_for("!!document.getElementById('rating')", what="the agent page")
            header = await page.evaluate("document.getElementById('rating').textContent")
            assert f"μ {row.mu:.2f}" in header and "twisted-2" in header
            replay = await page.evaluate(
                "[...document.querySelectorAll('#recent-matches tr[data-match]')]"
                ".map((r) => [r.dataset.match, r.cells[3].textContent,"
                " r.querySelector('time').title])")
            assert replay[0][:2] == [row.last_match_id, "house:random"]
            assert replay[0][2] == row.last_match_at.ToJsonString()
            assert_no_console_errors(page)

    run(scenario(), timeout=90)
