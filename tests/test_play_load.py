"""Load test on loopback: 50 tables of random play at once for a few seconds, then it stops by
itself; no error message, every hand's chips conserved (``python -m arena.play.loadtest`` gives
the latency figures)."""

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("websockets")
pytest.importorskip("httpx")

from arena.play.loadtest import LoadConfig, run_load


@pytest.mark.timeout(180)
@pytest.mark.parametrize("game,players", [("soko", 2), ("follow_the_bitch", 4)])
def test_many_tables_at_once(game, players):
    result = run_load(LoadConfig(tables=50 if players == 2 else 20, seconds=5.0, game=game, players=players))
    assert result.errors == []
    assert result.tables == (50 if players == 2 else 20)
    assert result.hands >= result.tables          # every table finished hands
    assert result.unconserved == 0
    assert result.actions > 0 and len(result.latencies_ms) >= result.actions
    assert result.seconds < 5.0 + 30               # it stopped by itself


@pytest.mark.timeout(60)
def test_oversized_message_closes_only_that_connection():
    """A message over the server's frame limit closes that socket (1009); the server and the
    other tables go on."""
    import asyncio
    import json

    import httpx
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from arena.play.server import LocalServer, ServerConfig, create_app

    async def scenario(port):
        base = f"127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=f"http://{base}") as http:
            cookie = (await http.get("/")).headers["set-cookie"].split(";")[0]
            ids = [(await http.post("/api/tables", headers={"Cookie": cookie}, json={})).json()["id"]
                   for _ in range(2)]
        headers = {"Cookie": cookie}
        async with connect(f"ws://{base}/ws/{ids[0]}", additional_headers=headers) as calm:
            state = json.loads(await calm.recv())["frames"][-1]
            async with connect(f"ws://{base}/ws/{ids[1]}", additional_headers=headers, max_size=None) as big:
                await big.recv()
                await big.send("x" * 2_000_000)
                with pytest.raises(ConnectionClosed) as closed:
                    for _ in range(5):
                        await big.recv()
                assert closed.value.rcvd is None or closed.value.rcvd.code == 1009
            await calm.send(json.dumps({"type": "action", "action": 1, "hand": state["hand"],
                                        "turn": state["turn"]}))
            answer = json.loads(await calm.recv())
            assert answer["type"] == "frames" and answer["frames"][0]["pot"] == state["pot"] + 2

    app = create_app(ServerConfig(default_opponent="call"))
    with LocalServer(app) as server:
        asyncio.run(scenario(server.port))
