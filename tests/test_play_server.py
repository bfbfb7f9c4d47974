"""The web table's protocol through the framework's test client: a scripted hand with exact
payoffs, refused actions that change nothing, bad messages, sessions, reconnects, timeouts,
and the leak test (the messages before showdown do not depend on the opponents' hole cards)."""

import json
import re
import time

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from arena.play.server import MAX_MESSAGE, ServerConfig, create_app
from arena.play.table import Table, TableConfig
from envs.engine.game import Game

# Soko heads-up, button seat 0, so seat 1 is dealt first: seat 1 Ah down, Kd up, 7s, 8s, 9h;
# seat 0 (the person) 2c down, 3c up, 3d, 5h, Jc. Seat 0 shows the low card and brings in; on
# betting round 2 seat 0's open pair of threes doubles the bet to 8; seat 1 (a calling station,
# lowest showing) acts first on rounds 2-4.
SOKO_DECK = "Ah 2c Kd 3c 7s 3d 8s 5h 9h Jc"


def make_client(deck=None, clock=None, **server):
    def make_table(cfg):
        return Table(cfg, deck_for_hand=(lambda k: deck) if deck else None)

    kw = {"clock": clock} if clock else {}
    server = {"allowed_hosts": ("testserver",), "default_opponent": "call"} | server
    app = create_app(ServerConfig(**server), make_table=make_table, **kw)
    client = TestClient(app)
    client.get("/")  # the session cookie
    return app, client


def new_table(client, **body):
    body = {"game": "soko", "players": 2, "opponents": ["call"], "seed": 5} | body
    r = client.post("/api/tables", json=body)
    assert r.status_code == 200, r.text
    return r.json()["id"]


def receive(ws):
    return json.loads(ws.receive_text())


def last_state(msg):
    assert msg["type"] == "frames", msg
    return msg["frames"][-1]


def act(ws, state, action):
    ws.send_text(json.dumps({"type": "action", "action": action, "hand": state["hand"],
                             "turn": state["turn"]}))
    return receive(ws)


def test_scripted_hand_pays_exactly():
    app, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client)
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            s = last_state(receive(ws))
            assert s["your_turn"] and s["current"] == 0
            assert [a["label"] for a in s["actions"]] == ["Bring in 2", "Complete to 4"]
            assert s["seats"][0]["hole"] == ["2c"] and s["seats"][1]["hole"] == [None]
            assert s["seats"][1]["up"] == ["Kd"]
            msg = act(ws, s, 1)                        # bring in 2; seat 1 calls, then checks on round 2
            assert [f["last"] for f in msg["frames"]] == ["Seat 0 brings in for 2", "Seat 1 calls 2",
                                                          "Seat 1 checks"]
            s = last_state(msg)
            assert s["bet_size"] == 8 and s["pot"] == 6 and s["seats"][0]["showing"] == "Pair of threes"
            assert [a["label"] for a in s["actions"]] == ["Check", "Bet 8"]
            s = last_state(act(ws, s, 2))              # bet 8, seat 1 calls; round 3: seat 1 checks
            assert s["pot"] == 22 and s["street"] == 2
            s = last_state(act(ws, s, 1))              # check; round 4: seat 1 checks
            s = last_state(act(ws, s, 2))              # bet 8, seat 1 calls: showdown
            r = s["result"]
            assert r["payoffs"] == [19, -19] and r["you"] == 19 and r["you_big_bets"] == 19 / 8
            assert r["pots"] == [{"pot": 0, "name": "Main pot", "amount": 38, "winners": [
                {"seat": 0, "name": "You", "amount": 38, "reason": "best hand", "why": "Pair of threes"}]}]
            assert s["seats"][1]["hole"] == ["Ah"]     # shown at the showdown
            assert s["session"] == {"hands": 1, "chips": 19, "big_bets": 2.375}
            # The server's game agrees with what was sent.
            game = app.state.registry.tables[table_id].table.game
            assert game.payoffs == (19, -19) and game.pot == s["pot"] == 38
            # Next hand: the button moves to seat 1.
            ws.send_text(json.dumps({"type": "next_hand"}))
            s2 = last_state(receive(ws))
            assert s2["hand"] == 1 and s2["button"] == 1 and s2["result"] is None
        hands = client.get(f"/api/tables/{table_id}/hands").json()
        assert hands == [{"hand": 0, "payoff": 19, "big_bets": 2.375}]
        frames = client.get(f"/api/tables/{table_id}/hands/0/replay").json()["frames"]
        assert len(frames) == 1 + 10                   # the deal, then each of the hand's 10 actions
        assert frames[-1]["result"] == r and frames[0]["seats"][1]["hole"] == [None]
        assert client.get(f"/api/tables/{table_id}/hands/7/replay").status_code == 404


def test_illegal_and_malformed_messages_change_nothing():
    app, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client)
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            s = last_state(receive(ws))
            bad = [
                # no folding to the bring-in; then a size that is not offered
                json.dumps({"type": "action", "action": 0, "hand": 0, "turn": s["turn"]}),
                json.dumps({"type": "action", "action": 3, "hand": 0, "turn": s["turn"]}),   # masked size
                json.dumps({"type": "action", "action": -1}),
                json.dumps({"type": "action", "action": "1"}),
                json.dumps({"type": "action", "action": 1.0}),
                json.dumps({"type": "action", "action": 1, "hand": 0, "turn": s["turn"] - 1}),  # stale
                json.dumps({"type": "next_hand"}),                                          # not over
                json.dumps({"type": "teleport"}),
                json.dumps([1, 2, 3]),
                "not json at all",
                "[" * 3000,
                "x" * (MAX_MESSAGE + 1),
            ]
            for text in bad:
                ws.send_text(text)
                msg = receive(ws)
                assert msg["type"] == "error" and msg["message"], text[:40]
            ws.send_bytes(b"\x00\x01")
            assert receive(ws)["type"] == "error"
            ws.send_text(json.dumps({"type": "state"}))
            assert last_state(receive(ws)) == s
            game = app.state.registry.tables[table_id].table.game
            assert len(game.log) == s["turn"] and game.current_player == 0


def test_errors_say_why():
    _, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client)
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            s = last_state(receive(ws))
            msg = act(ws, s, 0)
            assert msg == {"type": "error", "message": "action 0 is not legal now; legal ids: [1, 2]"}
        r = client.post("/api/tables", json={"game": "holdem"})
        assert r.status_code == 400 and r.json()["error"].startswith("unknown game 'holdem'")
        r = client.post("/api/tables", json={"game": "soko", "players": 9})
        assert r.status_code == 400 and "2 to 8 players" in r.json()["error"]
        r = client.post("/api/tables", json={"opponents": ["tight"]})
        assert r.status_code == 400 and r.json()["error"].startswith("unknown agent 'tight'")
        r = client.post("/api/tables", content=b"{not json")
        assert r.status_code == 400 and r.json()["error"] == "the request is not JSON"
        r = client.post("/api/tables", json={"seats": 3})
        assert r.status_code == 400 and "unknown field(s) seats" in r.json()["error"]


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_body_over_the_limit_is_dropped_without_being_read_whole(declared):
    """A client that sends a 10 MB body: with its Content-Length the server reads none of it,
    chunked it stops at the first chunk past the limit (64 KB chunks here)."""
    import asyncio

    from starlette.requests import Request

    from arena.play.server import read_body

    chunk, chunks = b"x" * 65536, 160
    received = []

    async def receive():
        received.append(len(chunk))
        return {"type": "http.request", "body": chunk, "more_body": len(received) < chunks}

    headers = [(b"content-length", str(len(chunk) * chunks).encode())] if declared else []
    request = Request({"type": "http", "method": "POST", "headers": headers}, receive)
    assert asyncio.run(read_body(request, 256 * 1024)) is None
    assert sum(received) == (0 if declared else 5 * 65536)
    small = Request({"type": "http", "method": "POST", "headers": []}, receive)
    received.clear()
    chunks = 3
    assert asyncio.run(read_body(small, 256 * 1024)) == chunk * 3


def test_a_page_never_makes_the_server_run_code_or_read_files_it_names(tmp_path, monkeypatch):
    """trust_pickled_code from a page is refused on any table (it would unpickle a file);
    on a table open to other machines no spec that reads a file (ppo, cfr, br paths) is
    taken either, so that a remote page learns nothing of the disk (an /etc/passwd spec
    answered 'not a readable agent file: header too large'). The built-in agents and the
    shipped champions play everywhere; on this machine's own table a model file still does."""
    import agents.agent_file

    def never(*args, **kwargs):
        raise AssertionError("a pickled model was loaded")

    monkeypatch.setattr(agents.agent_file, "global_generators_kept", never)
    champion = "ppo:agents/champions/soko.safetensors"
    for host, allowed in (("127.0.0.1", True), ("0.0.0.0", False)):
        _, client = make_client(SOKO_DECK, host=host)
        with client:
            client.get("/")
            for field in ("opponents", "coach"):
                r = client.post("/api/tables", json={field: "ppo:x.zip,trust_pickled_code=true"})
                assert r.status_code == 400 and r.json()["error"] == (
                    "agent 'ppo:x.zip,trust_pickled_code=true': the web table never loads pickled code; "
                    "convert the zip (python -m agents.convert) and name the agent file")
                r = client.post("/api/tables", json={field: "ppo:/etc/passwd"})
                assert r.status_code == 400 and ("open to other machines" in r.json()["error"]) != allowed
                r = client.post("/api/tables", json={field: champion})
                assert (r.status_code == 200) == allowed, r.text
            for spec in ("champion", "champion:soko", "equity:samples=50", "tag"):
                assert client.post("/api/tables", json={"opponents": [spec]}).status_code == 200
            r = client.post("/api/tables", json={"opponents": ["equity:samples=100000000"]})
            assert (r.status_code == 200) == allowed   # a decision's cost, bounded on an open table
            if not allowed:
                assert r.json()["error"].endswith("so an agent's samples are at most 2000")
    # A model the server itself offers (its --default-opponent) plays on an open table too.
    _, client = make_client(SOKO_DECK, host="0.0.0.0", default_opponent=champion)
    with client:
        client.get("/")
        assert client.get("/api/config").json()["default_opponent"] == champion
        assert client.post("/api/tables", json={"opponents": [champion]}).status_code == 200


def test_sessions_keep_tables_apart():
    app, alice = make_client(SOKO_DECK)
    with alice:
        table_id = new_table(alice)
        bob = TestClient(app)
        bob.get("/")
        assert bob.cookies.get("stud_session") != alice.cookies.get("stud_session")
        with bob.websocket_connect(f"/ws/{table_id}") as ws:
            assert receive(ws) == {"type": "error", "message": "no such table"}
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == 4404
        with alice.websocket_connect("/ws/no-such-id") as ws:
            assert receive(ws)["message"] == "no such table"
        assert bob.get("/api/tables").json() == []
        assert bob.get(f"/api/tables/{table_id}/hands").status_code == 404
        assert bob.delete(f"/api/tables/{table_id}").status_code == 404
        assert [t["id"] for t in alice.get("/api/tables").json()] == [table_id]
        nobody = TestClient(app)  # no cookie at all
        assert nobody.post("/api/tables", json={}).status_code == 403


def test_reconnect_resumes_and_tables_are_independent():
    _, client = make_client(SOKO_DECK)
    with client:
        first, second = new_table(client), new_table(client)
        with client.websocket_connect(f"/ws/{first}") as ws:
            s = last_state(act(ws, last_state(receive(ws)), 1))
        with client.websocket_connect(f"/ws/{first}") as ws:   # a reload
            assert last_state(receive(ws)) == s
            s = last_state(act(ws, s, 2))
            assert s["pot"] == 22
        with client.websocket_connect(f"/ws/{second}") as ws:  # untouched by the first
            s2 = last_state(receive(ws))
            assert s2["pot"] == 2 and s2["turn"] == 7


def test_flood_is_refused_and_other_tables_go_on():
    _, client = make_client(SOKO_DECK, rate_per_s=1.0, burst=5, max_dropped=20)
    with client:
        flooded, calm = new_table(client), new_table(client)
        with client.websocket_connect(f"/ws/{flooded}") as ws:
            receive(ws)
            kinds = []
            with pytest.raises(WebSocketDisconnect) as closed:
                for _ in range(40):
                    ws.send_text(json.dumps({"type": "state"}))
                    kinds.append(receive(ws)["type"])
            assert closed.value.code == 1008
            assert kinds[:5] == ["frames"] * 5 and "error" in kinds
        with client.websocket_connect(f"/ws/{calm}") as ws:
            s = last_state(receive(ws))
            assert last_state(act(ws, s, 1))["pot"] == 6


def test_idle_tables_are_dropped_after_the_timeout():
    now = [1000.0]
    app, client = make_client(SOKO_DECK, clock=lambda: now[0], table_timeout_s=60)
    with client:
        table_id = new_table(client)
        now[0] += 59
        assert app.state.registry.sweep() == 0
        now[0] += 2
        assert app.state.registry.sweep() == 1
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            assert receive(ws)["message"] == "no such table"


def test_too_many_tables_per_browser():
    _, client = make_client(SOKO_DECK, max_tables_per_session=2)
    with client:
        new_table(client)
        new_table(client)
        r = client.post("/api/tables", json={})
        assert r.status_code == 400 and "2 tables open" in r.json()["error"]


def test_coach_shows_the_agents_policy():
    _, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client, coach="call")
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            s = last_state(receive(ws))
            coach = receive(ws)
            assert coach["type"] == "coach" and coach["agent"] == "call" and coach["turn"] == s["turn"]
            assert [(c["id"], c["p"]) for c in coach["choices"]] == [(1, 1.0), (2, 0.0)]


def _opponent_down_positions(game, seats):
    """Deck positions of each of ``seats``' face-down cards (the i-th deal takes card i)."""
    out = {s: [] for s in seats}
    deals = [e for e in game.log if e.kind == "deal"]
    for i, e in enumerate(deals):
        if not e.up and e.seat in out:
            out[e.seat].append(i)
    return out


@pytest.mark.parametrize("game", ["soko", "follow_the_bitch_low_chicago"])
def test_messages_before_showdown_do_not_depend_on_hidden_cards(game):
    """Swap the two opponents' face-down cards: every message the browser gets before the
    showdown is byte for byte the same."""
    probe = Game(game, 3, seed=11)
    for _ in range(100):  # play the hand through with calls to learn who gets which deck card
        probe.check_or_call()
        if probe.is_over:
            break
    deck = [str(c) for c in probe.deck]
    swapped = list(deck)
    pos = _opponent_down_positions(probe, (1, 2))
    for a, b in zip(pos[1], pos[2]):
        swapped[a], swapped[b] = deck[b], deck[a]
    assert swapped != deck

    def transcript(order):
        _, client = make_client(" ".join(order))
        texts = []
        with client:
            table_id = new_table(client, game=game, players=3, seed=11, coach="tag")
            with client.websocket_connect(f"/ws/{table_id}") as ws:
                while True:
                    text = ws.receive_text()
                    texts.append(text)
                    msg = json.loads(text)
                    if msg["type"] == "frames":
                        s = msg["frames"][-1]
                        if s["result"]:
                            return texts
                        if s["your_turn"] and s["actions"]:
                            ws.send_text(json.dumps({"type": "action", "action": 1, "hand": s["hand"],
                                                     "turn": s["turn"]}))

    a, b = transcript(deck), transcript(swapped)
    assert len(a) == len(b)
    assert a[:-1] == b[:-1]
    last_a, last_b = json.loads(a[-1])["frames"], json.loads(b[-1])["frames"]
    before_a = [f for f in last_a if not f["result"]]
    before_b = [f for f in last_b if not f["result"]]
    assert json.dumps(before_a) == json.dumps(before_b)
    assert last_a[-1]["result"]["shows"] != last_b[-1]["result"]["shows"]  # the showdown does differ
    # The hidden cards are nowhere in the messages before the showdown (each card is dealt once,
    # so a face-down card never shows up face up).
    early = "".join(a[:-1]) + json.dumps(before_a)
    for i in pos[1] + pos[2]:
        assert not re.search(rf"\b{deck[i]}\b", early), deck[i]


def test_phh_download_and_upload():
    from envs.engine import phh

    _, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client)
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            s = last_state(receive(ws))
            while not s["result"]:
                s = last_state(act(ws, s, 1))
        r = client.get(f"/api/tables/{table_id}/hands/0/phh")
        assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
        game = phh.read_phh(r.text)
        assert game.payoffs == tuple(s["result"]["payoffs"])
        frames = client.post("/api/replay", content=r.text.encode()).json()["frames"]
        assert frames[-1]["result"]["payoffs"] == s["result"]["payoffs"]
        assert client.post("/api/replay", content=b"not a hand history").status_code == 400
        # A hand the person folds: the opponent's hole card (Ah) was never shown, so the
        # person's file does not hold it.
        folded = new_table(client, opponents=["raise"])
        with client.websocket_connect(f"/ws/{folded}") as ws:
            s = last_state(act(ws, last_state(receive(ws)), 1))   # bring in; the maniac completes
            s = last_state(act(ws, s, 0))                         # fold
            assert s["result"]["how"] == "seat 1 wins uncontested"
        text = client.get(f"/api/tables/{folded}/hands/0/phh").text
        assert "Ah" not in text and "2c" in text


def test_page_and_static_files_are_served():
    app, client = make_client()
    with client:
        page = TestClient(app).get("/")  # a new browser gets a cookie; one that has it keeps it
        assert page.status_code == 200 and "<script src=\"/static/app.js\">" in page.text
        assert "stud_session" in page.headers["set-cookie"] and "HttpOnly" in page.headers["set-cookie"]
        assert "set-cookie" not in client.get("/").headers
        for name in ("app.js", "style.css"):
            assert client.get(f"/static/{name}").status_code == 200
        for name in ("/", "/static/app.js", "/static/style.css"):  # nothing from elsewhere: no CDN
            assert "https://" not in client.get(name).text and "http://" not in client.get(name).text
        cfg = client.get("/api/config").json()
        assert cfg["default_opponent"] == "call"
        assert {g["name"] for g in cfg["games"]} >= {"soko", "follow_the_bitch"}


def test_a_slow_coach_does_not_hold_up_the_table():
    class SlowCoachTable(Table):
        def coach_answer(self, *question):
            time.sleep(3.0)
            return super().coach_answer(*question)

    app = create_app(ServerConfig(default_opponent="call", allowed_hosts=("testserver",)),
                     make_table=lambda cfg: SlowCoachTable(cfg, deck_for_hand=lambda k: SOKO_DECK))
    client = TestClient(app)
    client.get("/")
    with client:
        table_id = new_table(client, coach="call")
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            s = last_state(receive(ws))
            start = time.monotonic()
            msg = act(ws, s, 1)                 # answered before the coach's first answer
            assert msg["type"] == "frames" and time.monotonic() - start < 2.5
            late = [receive(ws), receive(ws)]  # both coach answers, the first one stale now
            assert [m["type"] for m in late] == ["coach", "coach"]
            assert sorted(m["turn"] for m in late) == [s["turn"], last_state(msg)["turn"]]


def test_phh_download_names_the_hand_and_the_upload_refuses_bad_files():
    """The download is the person's view of the hand (``to_phh(game, seat=person, hand_id=
    "<table>-<hand>", table_seed=...)``) under the game's file name; the upload refuses what it
    cannot read with a line saying why."""
    from envs.engine import phh

    _, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client)
        with client.websocket_connect(f"/ws/{table_id}") as ws:
            s = last_state(receive(ws))
            for action in (1, 2, 1, 2):
                s = last_state(act(ws, s, action))
        r = client.get(f"/api/tables/{table_id}/hands/0/phh")
        assert r.status_code == 200
        assert r.headers["content-disposition"] == f'attachment; filename="soko_{table_id}_0.phh"'
        game = phh.read_phh(r.text)
        assert game.payoffs == (19, -19)
        assert f'hand = "{table_id}-0"' in r.text and "table_seed = 5" in r.text
        frames = client.post("/api/replay", content=r.text.encode()).json()["frames"]
        assert frames[-1]["result"]["payoffs"] == [19, -19]
        bad = client.post("/api/replay", content=b"nonsense")
        assert bad.status_code == 400
        assert bad.json()["error"].startswith("not a hand history this table can replay")
        assert client.post("/api/replay", content=b"\xff\xfe").json()["error"] == "the file is not UTF-8 text"
        assert client.post("/api/replay", content=b"x" * (300 * 1024)).status_code == 413
        assert client.get(f"/api/tables/{table_id}/hands/7/phh").status_code == 404


def test_terminal_saves_phh(tmp_path):
    phh = pytest.importorskip("envs.engine.phh")
    import io

    from arena.play.terminal import play_terminal

    t = Table(TableConfig(opponents=("call",), seed=5), deck_for_hand=lambda k: SOKO_DECK)
    lines = iter(["1", "2", "1", "2", "s", "q"])
    play_terminal(t, input_fn=lambda prompt: next(lines), out=io.StringIO(), phh_dir=tmp_path)
    (path,) = tmp_path.glob("*.phh")
    assert phh.read_phh(path.read_text()).payoffs == (19, -19)


def test_pages_of_other_sites_are_refused():
    """Another site's page cannot use the table: a foreign Origin is refused on the socket and
    on creating tables, and a foreign Host name (DNS rebinding) gets nothing at all."""
    _, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client)
        evil = {"origin": "http://evil.example"}
        with client.websocket_connect(f"/ws/{table_id}", headers=evil) as ws:
            assert receive(ws)["message"] == "this table only talks to its own page"
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == 4403
        assert client.post("/api/tables", json={}, headers=evil).status_code == 403
        assert client.post("/api/tables", json={}, headers={"origin": "http://testserver"}).status_code == 200
    app = create_app(ServerConfig())  # on 127.0.0.1: only this machine's names
    assert TestClient(app).get("/").status_code == 400
    assert TestClient(app, base_url="http://127.0.0.1:8765").get("/").status_code == 200
    assert TestClient(app, base_url="http://localhost:8765").get("/api/config").status_code == 200


def test_every_tab_of_a_table_sees_its_moves():
    _, client = make_client(SOKO_DECK)
    with client:
        table_id = new_table(client)
        with client.websocket_connect(f"/ws/{table_id}") as one, \
                client.websocket_connect(f"/ws/{table_id}") as two:
            s = last_state(receive(one))
            assert last_state(receive(two)) == s
            moved = act(one, s, 1)
            assert receive(two) == moved                    # the other tab gets the same frames
            stale = act(two, s, 1)                          # a click there on the old position
            assert stale["type"] == "error" and "earlier position" in stale["message"]
            ws_state = last_state(moved)
            assert last_state(act(two, ws_state, 2))["pot"] == 22   # and it can play on
            assert last_state(receive(one))["pot"] == 22
