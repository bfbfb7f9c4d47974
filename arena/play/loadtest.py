"""Load test of the web table on loopback: ``python -m arena.play.loadtest --tables 50 --seconds 20``.

Starts the server on 127.0.0.1 (a free port) in this process, opens ``tables`` tables, each
from its own browser session (cookie), and plays random legal actions on all of them at once
over WebSockets until ``seconds`` have passed; then it stops by itself. It counts every error
message and every hand whose chips are not conserved (payoffs that do not sum to zero, or
stacks that do not add up), and measures the latency from sending an action to receiving the
frames that answer it (the bots think ``think_s`` before each answer, so that they stay under
the server's per-connection message rate as a person would).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from http.cookiejar import DefaultCookiePolicy

import numpy as np

from envs.cli import OneLineParser

__all__ = ["LoadConfig", "LoadResult", "main", "run_load"]


@dataclass(frozen=True)
class LoadConfig:
    tables: int = 50
    seconds: float = 20.0
    game: str = "soko"
    players: int = 2
    opponents: str = "random"
    seed: int = 0
    think_s: float = 0.06  # each bot waits this long before it answers (under the server's 20 messages/s)


@dataclass
class LoadResult:
    tables: int = 0
    hands: int = 0
    actions: int = 0
    errors: list[str] = field(default_factory=list)
    unconserved: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict:
        lat = np.array(self.latencies_ms) if self.latencies_ms else np.zeros(1)
        return {"tables": self.tables, "seconds": round(self.seconds, 1), "hands": self.hands,
                "actions": self.actions, "errors": len(self.errors), "unconserved_hands": self.unconserved,
                "actions_per_s": round(self.actions / max(self.seconds, 1e-9), 1),
                "latency_ms_p50": round(float(np.percentile(lat, 50)), 2),
                "latency_ms_p95": round(float(np.percentile(lat, 95)), 2),
                "latency_ms_p99": round(float(np.percentile(lat, 99)), 2),
                "latency_ms_max": round(float(lat.max()), 2)}


async def _open_table(http, cfg: LoadConfig, index: int, result: LoadResult) -> tuple[str, str] | None:
    """A new browser session (its cookie) and a table in it: (table id, cookie header)."""
    page = await http.get("/")
    cookie = page.headers["set-cookie"].split(";")[0]
    r = await http.post("/api/tables", headers={"Cookie": cookie},
                        json={"game": cfg.game, "players": cfg.players, "opponents": [cfg.opponents],
                              "seed": cfg.seed + index})
    if r.status_code != 200:
        result.errors.append(f"table {index}: {r.text}")
        return None
    result.tables += 1
    return r.json()["id"], cookie


async def _play_table(base: str, cfg: LoadConfig, index: int, table_id: str, cookie: str, deadline: float,
                      result: LoadResult) -> None:
    from websockets.asyncio.client import connect

    rng = np.random.default_rng([cfg.seed, index])
    async with connect(f"ws://{base}/ws/{table_id}", additional_headers={"Cookie": cookie},
                       max_size=2**24) as ws:
        sent_at = None
        while time.monotonic() < deadline:
            msg = json.loads(await ws.recv())
            if sent_at is not None:
                result.latencies_ms.append((time.perf_counter() - sent_at) * 1000)
                sent_at = None
            if msg["type"] == "error":
                result.errors.append(f"table {index}: {msg['message']}")
                return
            if msg["type"] != "frames":
                continue
            s = msg["frames"][-1]
            await asyncio.sleep(cfg.think_s)
            if s["result"] is not None:
                result.hands += 1
                payoffs = s["result"]["payoffs"]
                start = [seat["stack"] - p for seat, p in zip(s["seats"], payoffs)]
                if sum(payoffs) != 0 or len(set(start)) != 1:
                    result.unconserved += 1
                sent_at = time.perf_counter()
                await ws.send(json.dumps({"type": "next_hand"}))
            elif s["your_turn"]:
                choice = s["actions"][int(rng.integers(len(s["actions"])))]
                result.actions += 1
                sent_at = time.perf_counter()
                await ws.send(json.dumps({"type": "action", "action": choice["id"], "hand": s["hand"],
                                          "turn": s["turn"]}))


async def _drive(base: str, cfg: LoadConfig, result: LoadResult) -> None:
    import httpx

    # One HTTP client for all (each browser's session is its cookie), so that setting up does
    # not cost a client per table; the clock starts once every table is open.
    async with httpx.AsyncClient(base_url=f"http://{base}") as http:
        http.cookies.jar.set_policy(DefaultCookiePolicy(allowed_domains=[]))  # keeps no cookie itself
        opened = await asyncio.gather(*(_open_table(http, cfg, i, result) for i in range(cfg.tables)))
    start = time.monotonic()
    deadline = start + cfg.seconds
    await asyncio.gather(*(_play_table(base, cfg, i, *t, deadline, result)
                           for i, t in enumerate(opened) if t is not None))
    result.seconds = time.monotonic() - start


def run_load(cfg: LoadConfig) -> LoadResult:
    """Serve, play ``cfg.tables`` tables at once for ``cfg.seconds``, stop; what happened."""
    from arena.play.server import LocalServer, ServerConfig, create_app

    app = create_app(ServerConfig(default_opponent=cfg.opponents, max_tables_per_session=4))
    result = LoadResult()
    with LocalServer(app) as server:
        asyncio.run(asyncio.wait_for(_drive(f"127.0.0.1:{server.port}", cfg, result), cfg.seconds + 60))
    return result


def main(cfg: LoadConfig) -> int:
    summary = run_load(cfg).summary()
    print("| " + " | ".join(summary) + " |")
    print("|" + "---|" * len(summary))
    print("| " + " | ".join(str(v) for v in summary.values()) + " |")
    return 0 if summary["errors"] == 0 and summary["unconserved_hands"] == 0 else 1


def parse_args(argv=None) -> LoadConfig:
    p = OneLineParser(prog="python -m arena.play.loadtest", description=__doc__.splitlines()[0])
    p.add_argument("--tables", type=int, default=50)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--game", default="soko")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--opponents", default="random")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--think", type=float, default=0.06, help="seconds each bot waits before it answers")
    a = p.parse_args(argv)
    if a.tables < 1 or a.seconds <= 0:
        p.error("--tables must be at least 1 and --seconds above 0")
    return LoadConfig(tables=a.tables, seconds=a.seconds, game=a.game, players=a.players,
                      opponents=a.opponents, seed=a.seed, think_s=a.think)


if __name__ == "__main__":
    sys.exit(main(parse_args()))
