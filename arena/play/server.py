"""The web table: a FastAPI app that serves the page and referees every table over a WebSocket.

=====================================  =====================================================
route                                  what
=====================================  =====================================================
``GET /``                              the page (sets the browser's session cookie)
``GET /static/...``                    its HTML, CSS and JavaScript (no build step, no CDN)
``GET /api/config``                    games, seat counts, agents, the default opponent, pace
``POST /api/tables``                   a new table: ``{"game", "players", "opponents",
                                       "seed", "coach", "betting"}`` -> ``{"id", ...}``
``GET /api/tables``                    this browser's tables
``DELETE /api/tables/{id}``            leave a table
``GET /api/tables/{id}/hands``         its finished hands
``GET /api/tables/{id}/hands/{n}/replay``  the hand's screens, as the person saw them
``GET /api/tables/{id}/hands/{n}/phh``     the hand as a PHH file (download)
``POST /api/replay``                   the screens of an uploaded PHH file (whole hand)
``WS /ws/{id}``                        the table (messages below)
=====================================  =====================================================

Messages from the browser (JSON text): ``{"type": "action", "action": ID, "hand": H, "turn": T}``
(``hand`` and ``turn`` from the state it answers, so a late double click never plays into a
decision the person has not seen), ``{"type": "next_hand"}``, ``{"type": "coach"}`` and
``{"type": "state"}``. From the server: ``{"type": "frames", "frames": [state, ...]}`` (the
screens after each action, which the page shows one by one at its pace),
``{"type": "coach", ...}`` and ``{"type": "error", "message": ...}``.

Each browser gets a random session token in a cookie; a table belongs to the session that
made it, and another session's or an unknown table id is answered "no such table". A bad
message (not JSON, too large, an illegal action, too many too fast) gets an error message and
changes nothing. Tables idle longer than the timeout with nobody connected are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.middleware.trustedhost import TrustedHostMiddleware

from agents.registry import AGENTS, parse_spec
from arena.play.table import (
    GAME_TITLES,
    Table,
    TableConfig,
    default_opponent,
    replay_frames,
)
from envs.engine import phh
from envs.engine.rules import RULES, Betting

__all__ = ["COOKIE", "MAX_MESSAGE", "MAX_UPLOAD", "LocalServer", "Registry", "ServerConfig",
           "check_client_spec", "create_app", "read_body"]

STATIC = Path(__file__).parent / "static"
COOKIE = "stud_session"
MAX_MESSAGE = 4096
"""Characters in one WebSocket message; a longer one is refused unread."""
MAX_UPLOAD = 256 * 1024
"""Bytes of an uploaded PHH file."""
OPEN_MAX_SAMPLES = 2000
"""The most deals an ``equity`` agent of a page may draw a decision on a table open to other
machines (about a tenth of a second a decision at 2,000; 300 by default)."""
WS_CLOSE_NO_TABLE = 4404
WS_CLOSE_FOREIGN = 4403
LOOPBACK = ("127.0.0.1", "localhost", "::1")
WS_CLOSE_FLOOD = 1008


@dataclass(frozen=True)
class ServerConfig:
    """The server's settings: where it listens, table limits, and the start page's defaults."""

    host: str = "127.0.0.1"
    port: int = 8765
    default_opponent: str = "champion"
    pace_ms: int = 900
    table_timeout_s: float = 1800.0
    max_tables_per_session: int = 16
    max_tables: int = 2000
    rate_per_s: float = 20.0
    burst: int = 40
    max_dropped: int = 200
    allowed_hosts: tuple[str, ...] | None = None
    """Host names the server answers to (the Host header); None: this machine's names when it
    listens on a loopback address (so a web page elsewhere cannot reach it by DNS rebinding),
    any otherwise."""

    def hosts(self) -> list[str]:
        if self.allowed_hosts is not None:
            return list(self.allowed_hosts)
        if self.host in LOOPBACK:
            return ["127.0.0.1", "localhost", "::1", "[::1]"]
        return ["*"]


@dataclass
class Entry:
    table: Table
    owner: str
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_seen: float = 0.0
    sockets: set = field(default_factory=set)  # the table's open connections (several tabs)

    @property
    def connections(self) -> int:
        return len(self.sockets)


class Registry:
    """Every table of the server, by id, with its owner session; ``clock`` is injectable so
    that the timeout can be tested."""

    def __init__(self, cfg: ServerConfig, clock=time.monotonic) -> None:
        self.cfg = cfg
        self.clock = clock
        self.tables: dict[str, Entry] = {}

    def create(self, owner: str, table: Table) -> str:
        self.sweep()
        mine = sum(1 for e in self.tables.values() if e.owner == owner)
        if mine >= self.cfg.max_tables_per_session:
            raise ValueError(f"this browser has {mine} tables open already; leave one first")
        if len(self.tables) >= self.cfg.max_tables:
            raise ValueError("the server has too many tables open; try again later")
        table_id = secrets.token_urlsafe(9)
        self.tables[table_id] = Entry(table, owner, last_seen=self.clock())
        return table_id

    def get(self, owner: str | None, table_id: str) -> Entry | None:
        """The table ``table_id`` if it belongs to ``owner``, else None (unknown or not theirs:
        the same answer, so ids cannot be probed)."""
        entry = self.tables.get(table_id) if isinstance(table_id, str) else None
        if entry is None or owner is None or not secrets.compare_digest(entry.owner, owner):
            return None
        entry.last_seen = self.clock()
        return entry

    def remove(self, owner: str | None, table_id: str) -> bool:
        if self.get(owner, table_id) is None:
            return False
        del self.tables[table_id]
        return True

    def sweep(self) -> int:
        """Drop the tables idle past the timeout with nobody connected; how many went."""
        limit = self.clock() - self.cfg.table_timeout_s
        old = [k for k, e in self.tables.items() if e.connections == 0 and e.last_seen < limit]
        for k in old:
            del self.tables[k]
        return len(old)


class _Bucket:
    """A token bucket: ``rate`` messages a second, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is longer than ``limit`` bytes: a declared
    Content-Length over the limit is refused before anything is read, and a body sent without
    one (chunked) is read as it comes and dropped at the limit, so that no client makes the
    server hold more than ``limit`` bytes of it."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _table_summary(table_id: str, t: Table) -> dict:
    return {"id": table_id, "game": t.rules.name, "betting": t.rules.betting.value,
            "title": GAME_TITLES.get(t.rules.name, t.rules.name),
            "players": t.num_players, "opponents": [s.name for s in t.seats if s.agent is not None],
            "seed": t.public_seed, "hand": t.hand_number, "session": t.session(), "coach": t.coach_name}


def check_client_spec(spec: str, *, files: bool) -> None:
    """A ValueError unless the web table may play ``spec``, an agent spec a client sent: never
    one that runs code from a file (``trust_pickled_code``), and with ``files`` False (a table
    open to other machines) none that reads a file the client names (``ppo``, ``cfr``, ``br``
    paths), so that nobody else learns or loads what lies on this machine's disk."""
    name, options = parse_spec(spec)
    if options.get("trust_pickled_code"):
        raise ValueError(f"agent {spec.strip()!r}: the web table never loads pickled code; convert the zip "
                         f"(python -m agents.convert) and name the agent file")
    if not files and AGENTS[name][2] == "path":
        raise ValueError(f"agent {spec.strip()!r}: this table is open to other machines, so it loads no "
                         f"file a page names; the built-in agents and the shipped champions play")
    if not files and options.get("samples", 0) > OPEN_MAX_SAMPLES:   # each decision's cost: bounded
        raise ValueError(f"agent {spec.strip()!r}: this table is open to other machines, so an agent's "
                         f"samples are at most {OPEN_MAX_SAMPLES}")


def _parse_table_request(body: object, default: str, *, files: bool = True) -> TableConfig:
    if not isinstance(body, dict):
        raise ValueError(  # noqa: TRY004 (bad input, answered like any other)
            "send a JSON object: {\"game\": ..., \"players\": ..., \"opponents\": [...]}")
    unknown = sorted(set(body) - {"game", "players", "opponents", "seed", "coach", "betting"})
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(map(str, unknown))}; "
                         "fields are game, players, opponents, seed, coach, betting")
    opponents = body.get("opponents", default)
    if isinstance(opponents, str):
        opponents = [opponents]
    if not isinstance(opponents, list) or len(opponents) > 8:
        raise ValueError("opponents must be an agent spec or a list of at most 7 specs")
    if not all(o in ("", None) or (isinstance(o, str) and len(o) <= 300) for o in opponents):
        raise ValueError("each opponent must be an agent spec (a short string)")
    for o in opponents:
        if o not in ("", None) and o.strip() != default.strip():   # the server's default is its own
            check_client_spec(o, files=files)
    opponents = [default if o in ("", None) else o for o in opponents]
    coach = body.get("coach") or None
    if coach is not None and (not isinstance(coach, str) or len(coach) > 300):
        raise ValueError("coach must be an agent spec (a short string) or empty")
    if coach is not None:
        check_client_spec(coach, files=files)
    seed = body.get("seed")
    if seed in ("", None):
        seed = None
    elif isinstance(seed, str) and seed.strip().isdigit():
        seed = int(seed)
    if seed is not None and (type(seed) is not int or not 0 <= seed < 2**63):
        raise ValueError(f"seed must be a whole number from 0 to 2**63 - 1, or empty, not {seed!r}")
    players = body.get("players", 2)
    if isinstance(players, str) and players.strip().isdigit():
        players = int(players)
    betting = body.get("betting") or None
    return TableConfig(game=body.get("game", "soko"), players=players, opponents=tuple(opponents),
                       seed=seed, coach=coach, betting=betting)


def create_app(cfg: ServerConfig | None = None, *, clock=time.monotonic, make_table=Table) -> FastAPI:
    """The web table app. ``make_table(config)`` builds a table (tests pass one that fixes
    the deck)."""
    cfg = cfg or ServerConfig()
    registry = Registry(cfg, clock)
    opponent = default_opponent(cfg.default_opponent)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        async def sweeper():
            while True:
                await asyncio.sleep(min(60.0, max(1.0, cfg.table_timeout_s / 4)))
                registry.sweep()

        task = asyncio.create_task(sweeper())
        try:
            yield
        finally:
            task.cancel()

    app = FastAPI(title="Stud Arena table", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=cfg.hosts())
    app.state.registry = registry
    app.state.config = cfg
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def foreign(request: Request | WebSocket) -> bool:
        """A request a page of another site made (its Origin is not this server)."""
        origin = request.headers.get("origin")
        return origin is not None and urlsplit(origin).netloc != request.headers.get("host")

    def session_of(request: Request | WebSocket) -> str | None:
        token = request.cookies.get(COOKIE)
        return token if isinstance(token, str) and 16 <= len(token) <= 64 else None

    def with_cookie(response: Response, token: str | None) -> Response:
        if token is None:
            response.set_cookie(COOKIE, secrets.token_urlsafe(24), httponly=True, samesite="strict")
        return response

    @app.get("/")
    async def index(request: Request):
        return with_cookie(FileResponse(STATIC / "index.html"), session_of(request))

    @app.get("/favicon.ico")
    async def favicon():
        return Response(status_code=204)

    @app.get("/api/config")
    async def config(request: Request):
        games = [{"name": name, "title": GAME_TITLES.get(name, name), "min_players": r.min_players,
                  "max_players": r.max_players} for name, r in RULES.items()]
        agents = [{"name": name, "about": about} for name, (_, _, _, about) in AGENTS.items()]
        body = {"games": games, "agents": agents, "betting": [b.value for b in Betting],
                "default_opponent": opponent, "pace_ms": cfg.pace_ms}
        return with_cookie(JSONResponse(body), session_of(request))

    @app.post("/api/tables")
    async def create_table(request: Request):
        owner = session_of(request)
        if owner is None or foreign(request):
            return _error("no session: open the start page first", 403)
        raw = await read_body(request, MAX_MESSAGE)
        if raw is None:
            return _error(f"request too large (over {MAX_MESSAGE} bytes)", 413)
        try:
            body = json.loads(raw or b"{}")
            table_cfg = _parse_table_request(body, opponent, files=cfg.host in LOOPBACK)
            table = await asyncio.to_thread(make_table, table_cfg)
            table_id = registry.create(owner, table)
        except json.JSONDecodeError:
            return _error("the request is not JSON")
        except ValueError as exc:
            return _error(str(exc).splitlines()[0] if str(exc) else "bad request")
        return JSONResponse(_table_summary(table_id, table))

    @app.get("/api/tables")
    async def list_tables(request: Request):
        owner = session_of(request)
        return JSONResponse([_table_summary(k, e.table) for k, e in registry.tables.items()
                             if owner is not None and e.owner == owner])

    @app.delete("/api/tables/{table_id}")
    async def leave_table(table_id: str, request: Request):
        if not registry.remove(session_of(request), table_id):
            return _error("no such table", 404)
        return JSONResponse({"removed": table_id})

    @app.get("/api/tables/{table_id}/hands")
    async def hands(table_id: str, request: Request):
        entry = registry.get(session_of(request), table_id)
        if entry is None:
            return _error("no such table", 404)
        return JSONResponse([{"hand": r.number, "payoff": r.payoff,
                              "big_bets": round(r.payoff / entry.table.rules.big_bet, 3)}
                             for r in entry.table.history])

    def find_record(request: Request, table_id: str, number: str):
        entry = registry.get(session_of(request), table_id)
        if entry is None:
            return None, _error("no such table", 404)
        try:
            return entry, entry.table.find_hand(int(number))
        except ValueError:
            return None, _error(f"no finished hand {number!r} at this table", 404)

    @app.get("/api/tables/{table_id}/hands/{number}/replay")
    async def replay_own(table_id: str, number: str, request: Request):
        entry, record = find_record(request, table_id, number)
        if entry is None:
            return record
        t = entry.table
        frames = await asyncio.to_thread(replay_frames, record.game, seat=t.human, names=t.names(),
                                         hand=record.number)
        return JSONResponse({"frames": frames})

    @app.get("/api/tables/{table_id}/hands/{number}/phh")
    async def download_phh(table_id: str, number: str, request: Request):
        entry, record = find_record(request, table_id, number)
        if entry is None:
            return record
        t = entry.table
        fields = {"table_seed": t.public_seed} if t.public_seed is not None else {}
        text = phh.to_phh(record.game, seat=t.human, hand_id=f"{table_id}-{record.number}", **fields)
        name = f"{t.rules.name}_{table_id}_{record.number}.phh"
        return PlainTextResponse(text, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.post("/api/replay")
    async def replay_upload(request: Request):
        if session_of(request) is None or foreign(request):
            return _error("no session: open the start page first", 403)
        raw = await read_body(request, MAX_UPLOAD)
        if raw is None:
            return _error(f"file too large (over {MAX_UPLOAD // 1024} KB)", 413)
        try:
            text = raw.decode("utf-8")
            game = await asyncio.to_thread(phh.read_phh, text)
            frames = await asyncio.to_thread(replay_frames, game, seat=None)
        except UnicodeDecodeError:
            return _error("the file is not UTF-8 text")
        except (ValueError, KeyError, TypeError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else repr(exc)
            return _error(f"not a hand history this table can replay: {why}")
        return JSONResponse({"frames": frames})

    @app.websocket("/ws/{table_id}")
    async def table_socket(ws: WebSocket, table_id: str):
        await ws.accept()
        if foreign(ws):
            await ws.send_json({"type": "error", "message": "this table only talks to its own page"})
            await ws.close(code=WS_CLOSE_FOREIGN)
            return
        entry = registry.get(session_of(ws), table_id)
        if entry is None:
            await ws.send_json({"type": "error", "message": "no such table"})
            await ws.close(code=WS_CLOSE_NO_TABLE)
            return
        bucket = _Bucket(cfg.rate_per_s, cfg.burst)
        dropped = 0
        conn = _Connection(ws)
        entry.sockets.add(conn)
        try:
            async with entry.lock:  # a new table, or a reload while agents were to act
                frames = [entry.table.state()] + await asyncio.to_thread(entry.table.play_agents)
            await conn.send({"type": "frames", "frames": frames})
            _ask_coach(conn, entry)
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                entry.last_seen = registry.clock()
                text = message.get("text")
                if not bucket.take():
                    dropped += 1
                    if dropped > cfg.max_dropped:
                        await ws.close(code=WS_CLOSE_FLOOD)
                        break
                    await _send_error(conn, "too many messages: slow down")
                    continue
                if text is None:
                    await _send_error(conn, "send JSON text, not binary data")
                    continue
                if len(text) > MAX_MESSAGE:
                    await _send_error(conn, f"message too large (over {MAX_MESSAGE} characters)")
                    continue
                await _handle(conn, entry, text)
        except WebSocketDisconnect:
            pass
        finally:
            conn.close()
            entry.sockets.discard(conn)
            entry.last_seen = registry.clock()

    return app


def _dump(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


class _Connection:
    """One browser's socket: sends go one at a time (the coach answers from a task of its own,
    so the person may act while the coach still thinks)."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.send_lock = asyncio.Lock()
        self.tasks: set[asyncio.Task] = set()

    async def send(self, obj) -> None:
        async with self.send_lock:
            await self.ws.send_text(_dump(obj))

    def close(self) -> None:
        for task in self.tasks:
            task.cancel()


async def _send_error(conn: _Connection, message: str) -> None:
    await conn.send({"type": "error", "message": message})


def _ask_coach(conn: _Connection, entry: Entry) -> None:
    """Start the coach on the person's decision now, if there is a coach and a decision."""
    t = entry.table
    if t.coach is None:
        return

    async def answer():
        try:
            async with entry.lock:  # the question under the lock (another socket may be acting)
                question = t.coach_question()
            if question is None:
                return
            advice = await asyncio.to_thread(t.coach_answer, *question)
            await conn.send(advice)
        except (WebSocketDisconnect, RuntimeError, asyncio.CancelledError):
            pass
        except Exception as exc:  # noqa: BLE001 (a coach that breaks must not take the table down)
            with contextlib.suppress(Exception):
                await _send_error(conn, f"the coach hit an error: {type(exc).__name__}: {exc}"[:300])

    task = asyncio.create_task(answer())
    conn.tasks.add(task)
    task.add_done_callback(conn.tasks.discard)


async def _handle(conn: _Connection, entry: Entry, text: str) -> None:
    """One message from the browser: play it, or answer why not (nothing changes then)."""
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or a number too long for an int
        await _send_error(conn, "a message must be JSON, like {\"type\": \"action\", \"action\": 1}")
        return
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        await _send_error(conn, "a message is a JSON object with a \"type\"")
        return
    kind = msg["type"]
    t = entry.table
    try:
        async with entry.lock:
            if kind == "action":
                hand, turn = msg.get("hand"), msg.get("turn")
                if hand is not None and hand != t.hand_number or turn is not None and turn != len(t.game.log):
                    raise ValueError("that action answers an earlier position; the table has moved on")
                frames = await asyncio.to_thread(t.act, msg.get("action"))
            elif kind == "next_hand":
                if not t.game.is_over:
                    raise ValueError("the hand is not over yet")
                frames = await asyncio.to_thread(t.next_hand)
            elif kind == "state":
                frames = [t.state()]
            elif kind == "coach":
                if t.coach is None:
                    raise ValueError("this table has no coach")
                frames = None
            else:
                raise ValueError(f"unknown message type {kind[:40]!r}; "
                                 "types: action, next_hand, state, coach")
    except ValueError as exc:
        await _send_error(conn, str(exc))
        return
    except Exception as exc:  # noqa: BLE001 (an agent that breaks must not take the server down)
        await _send_error(conn, f"the table hit an error: {type(exc).__name__}: {exc}"[:300])
        return
    if frames is None:
        _ask_coach(conn, entry)
        return
    message = {"type": "frames", "frames": frames}
    await conn.send(message)
    _ask_coach(conn, entry)
    if kind != "state":  # the table moved: every other tab of it sees the same
        for other in list(entry.sockets):
            if other is not conn:
                with contextlib.suppress(Exception):
                    await other.send(message)
                    _ask_coach(other, entry)



class LocalServer:
    """uvicorn serving ``app`` on 127.0.0.1 (a free port unless ``port`` is given) in a thread,
    for as long as the ``with`` lasts: for the load test and the browser tests."""

    def __init__(self, app, port: int | None = None) -> None:
        import uvicorn

        if port is None:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        self.port = port
        self.url = f"http://127.0.0.1:{port}/"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                    ws_max_size=65536))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the web table did not start on 127.0.0.1:{self.port}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
