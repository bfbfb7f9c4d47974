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
