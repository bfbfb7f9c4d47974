"""End to end in a real browser: headless Chromium (the system's, driven by Playwright) plays
a full hand of Soko and of Follow the Bitch by clicking, and what the page shows (cards, pot,
wild rank, result) is checked against the server's game at every decision. Screenshots go to
runs/play_e2e/. Without Playwright or a Chromium these tests skip and say why.

``STUD_CHROMIUM`` names another browser binary (default ``/usr/bin/chromium``).
"""

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from arena.play.table import Table, TableConfig

pytestmark = pytest.mark.timeout(240)

CHROMIUM = os.environ.get("STUD_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SHOTS = Path(__file__).resolve().parents[1] / "runs" / "play_e2e"


def _browser_or_skip():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright (python) is not installed: pip install playwright")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set STUD_CHROMIUM)")
    pytest.importorskip("uvicorn")
    return sync_playwright


@pytest.fixture(scope="module")
def server():
    _browser_or_skip()
    from arena.play.server import LocalServer, ServerConfig, create_app

    app = create_app(ServerConfig(default_opponent="call", pace_ms=0))
    with LocalServer(app) as s:
        yield app, s.url


@pytest.fixture()
def page(request):
    sync_playwright = _browser_or_skip()
    profile = tempfile.mkdtemp(prefix="stud-chromium-")  # a fresh --user-data-dir
    width, height = getattr(request, "param", (1280, 860))
    with sync_playwright() as p:
        # Playwright passes the profile folder as --user-data-dir itself.
        ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True,
                                                   args=ARGS, viewport={"width": width, "height": height})
        errors = []
        pg = ctx.pages[0] if ctx.pages else ctx.new_page()
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.set_default_timeout(20000)
        yield pg
        ctx.close()
    shutil.rmtree(profile, ignore_errors=True)
    assert errors == [], errors


def _seed_with_wild_cards(players: int) -> int:
    """A seed whose first Follow the Bitch hand, everyone checking or calling, ends with a
    wild rank after a queen ended an earlier one (so the page has both to show)."""
    for seed in range(500):
        t = Table(TableConfig(game="follow_the_bitch", players=players, opponents=("call",), seed=seed))
        t.play_agents()
        while not t.game.is_over:
            t.act(1)
        wilds = [e for e in t.game.log if e.kind == "wild"]
        if t.game.wild_rank and any(e.rank is None for e in wilds):
            return seed
    raise AssertionError("no seed with a queen ending a wild rank in 500")


def _cards(locator) -> list[str]:
    return [c.get_attribute("data-card") for c in locator.locator(".card").all()]


def _check_page_against_game(page, game, you: int):
    """The page shows the server's game: every seat's cards (others' hole cards as backs until
    shown), the pot, and the wild rank."""
    assert page.locator("#pot").inner_text() == str(game.pot)
    for seat in range(game.num_players):
        box = page.locator(f'.seat[data-seat="{seat}"]')
        shown = _cards(box)
        hole = [str(c) for c in game.hole_cards(seat)]
        up = [str(c) for c in game.up_cards(seat)]
        if seat == you or (game.is_over and not game.folded[seat]):
            assert shown == hole + up, (seat, shown)
        else:
            assert shown == ["back"] * len(hole) + up, (seat, shown)
    if game.rules.follow_the_queen:
        wild = page.locator("#wild")
        assert wild.get_attribute("data-rank") == (game.wild_rank or "")
        assert (f"Wild: {game.wild_rank}s" in wild.inner_text()) == (game.wild_rank is not None)


def _play_hand(page, app, url, *, game_name, players, seed, shot):
    page.goto(url)
    page.wait_for_selector("#game option", state="attached")
    page.select_option("#game", game_name)
    page.fill("#players", str(players))
    page.dispatch_event("#players", "input")
    for box in page.locator("#opponents input").all():
        box.fill("call")
    page.fill("#seed", str(seed))
    page.click("#start-button")
    page.wait_for_selector("button.action")
    table_id = page.evaluate("location.hash").split("=", 1)[1]
    table = app.state.registry.tables[table_id].table
    assert table.seed == seed and table.rules.name == game_name
    clicks = 0
    while True:
        page.wait_for_selector("button.action, #next-hand")
        if page.locator("#next-hand").count():
            break
        _check_page_against_game(page, table.game, table.human)
        legal = [b.get_attribute("data-id") for b in page.locator("button.action").all()]
        assert legal[0] in ("0", "1") and "1" in legal
        before = page.evaluate("live.shown.turn")
        page.click('button.action[data-id="1"]')  # check, call or bring in
        clicks += 1
        # Until the page shows the last frame of the answer (the server then waits for us).
        page.wait_for_function(f"() => live.shown.turn !== {before} && !live.queue.length && !live.timer")
        assert clicks < 50
    g = table.game
    assert g.is_over
    _check_page_against_game(page, g, table.human)
    result = page.locator("#result")
    you = g.payoffs[table.human]
    assert f"{'+' if you > 0 else ''}{you} chips" in page.locator("#payoff").inner_text()
    for pot in page.locator("#result .pots li").all():
        assert "from the main pot" in pot.inner_text() or "side pot" in pot.inner_text()
    winners = sorted({e.seat for e in g.log if e.kind == "win"})
    text = result.inner_text()
    for seat in winners:
        assert ("You win" if seat == table.human else f"(seat {seat}) wins") in text
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / shot), full_page=True)
    return table, clicks


def test_soko_hand_by_clicking(server, page):
    app, url = server
    _, clicks = _play_hand(page, app, url, game_name="soko", players=3, seed=4, shot="soko.png")
    assert clicks >= 4                      # a decision on each betting round at least
    page.click("#next-hand")                # the next hand is dealt and shown
    page.wait_for_selector("button.action, .waiting")
    page.wait_for_function("() => live.shown && live.shown.hand === 1")
    assert page.locator("#hand-no").inner_text() == "2"
    assert (SHOTS / "soko.png").stat().st_size > 10_000


def test_follow_the_bitch_hand_by_clicking(server, page):
    app, url = server
    seed = _seed_with_wild_cards(4)
    table, _ = _play_hand(page, app, url, game_name="follow_the_bitch", players=4, seed=seed, shot="ftb.png")
    ended = page.locator("#wild").inner_text()
    assert "ended" in ended and f"Wild: {table.game.wild_rank}s" in ended
    # The hand's replay steps back to the start and forward to the end.
    page.click("#replay-this")
    page.wait_for_selector("#replay-view:not([hidden])")
    page.wait_for_function("() => replay.frames.length > 0")
    n = page.evaluate("replay.frames.length")
    assert page.locator("#rp-pos").inner_text() == f"1 / {n}"
    assert page.locator("#rp-pot").inner_text() == str(table.rules.ante * 4)
    page.click("#rp-last")
    assert page.locator("#rp-pot").inner_text() == str(table.game.pot)
    page.click("#rp-prev")
    assert page.locator("#rp-pos").inner_text() == f"{n - 1} / {n}"


@pytest.mark.parametrize("page", [(390, 844)], indirect=True)
def test_phone_width_fits(server, page):
    app, url = server
    _play_hand(page, app, url, game_name="follow_the_bitch_low_chicago", players=3, seed=2, shot="phone.png")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a phone"
    assert page.locator("#chicago").is_visible()


def _frames_after_first_call(seed: int) -> int:
    t = Table(TableConfig(game="soko", players=4, opponents=("call",), seed=seed))
    t.play_agents()
    return len(t.act(1))


def test_agents_actions_appear_one_by_one(server, page):
    """At a pace of 400 ms the agents' actions after a click are shown one after another, each
    for about that long, and the buttons come back only after the last."""
    _, url = server
    received = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.append(payload)))
    page.goto(url)
    page.wait_for_selector("#game option", state="attached")
    page.evaluate("localStorage.setItem('pace', '400')")
    page.evaluate("""() => { window.seen = [];
        const box = document.getElementById('last-action');
        new MutationObserver(() => seen.push(box.textContent))
            .observe(box, { childList: true, characterData: true, subtree: true }); }""")
    page.fill("#players", "4")
    page.dispatch_event("#players", "input")
    for box in page.locator("#opponents input").all():
        box.fill("call")
    seed = next(k for k in range(200) if _frames_after_first_call(k) >= 3)
    page.fill("#seed", str(seed))
    page.click("#start-button")
    page.wait_for_selector("button.action")
    count = len(received)
    before = page.evaluate("live.shown.turn")
    start = time.monotonic()
    page.click('button.action[data-id="1"]')
    page.wait_for_function(f"() => live.shown.turn !== {before} && live.queue.length > 0")
    assert page.locator("button.action:enabled").count() == 0   # no buttons while agents act
    page.wait_for_function("() => !live.queue.length && !live.timer")
    elapsed = time.monotonic() - start
    answer = [json.loads(m) for m in received[count:]]
    frames = next(m["frames"] for m in answer if m["type"] == "frames")
    assert len(frames) >= 3                      # the person's action and at least two agents'
    assert elapsed >= 0.4 * (len(frames) - 1) * 0.9
    seen = page.evaluate("seen")
    lasts = [f["last"] for f in frames]
    it = iter(seen)
    assert all(any(text == last for text in it) for last in lasts), (lasts, seen)


def test_reload_resumes_the_table(server, page):
    app, url = server
    page.goto(url)
    page.wait_for_selector("#game option", state="attached")
    page.locator("#opponents input").first.fill("tight")   # a bad spec: one sentence, no table
    page.click("#start-button")
    page.wait_for_function("() => document.getElementById('start-error').textContent !== ''")
    assert page.locator("#start-error").inner_text().startswith("unknown agent 'tight'")
    for box in page.locator("#opponents input").all():
        box.fill("call")
    page.fill("#seed", "8")
    page.click("#start-button")
    page.wait_for_selector("button.action")
    before = page.evaluate("live.shown.turn")
    page.click('button.action[data-id="1"]')
    page.wait_for_function(f"() => live.shown.turn !== {before} && !live.queue.length && !live.timer")
    shown = page.evaluate("JSON.stringify([live.shown.turn, live.shown.pot, live.shown.seats])")
    cards = _cards(page.locator("#my-seat"))
    page.reload()
    page.wait_for_function("() => live.shown && !live.queue.length && !live.timer")
    assert page.evaluate("JSON.stringify([live.shown.turn, live.shown.pot, live.shown.seats])") == shown
    assert _cards(page.locator("#my-seat")) == cards
    assert page.locator("#tabs a").count() >= 1     # the browser's tables, listed in the header
    table_id = page.evaluate("live.id")
    assert table_id in app.state.registry.tables
    page.click("#leave")                            # leave: back to the start page, table gone
    page.wait_for_selector("#start:not([hidden])")
    assert table_id not in app.state.registry.tables
