"""``python -m arena.play`` (a table in the terminal) or ``python -m arena.play --web`` (the web
table on http://127.0.0.1:8765/); the console script ``stud-play`` is the same."""

from __future__ import annotations

import errno
import sys
from dataclasses import dataclass

from envs.cli import OneLineParser, drop_closed_stdout
from envs.engine.rules import RULES

__all__ = ["PlayConfig", "cli", "main", "parse_args"]


@dataclass(frozen=True)
class PlayConfig:
    web: bool = False
    host: str = "127.0.0.1"
    port: int = 8765
    game: str = "soko"
    players: int = 2
    opponents: tuple[str, ...] = ()
    seed: int | None = None
    coach: str | None = None
    betting: str | None = None
    default_opponent: str = "champion"
    pace_ms: int = 900
    table_timeout_s: float = 1800.0
    hands: int | None = None
    ascii: bool = False
    phh_dir: str | None = None


def parse_args(argv=None) -> PlayConfig:
    p = OneLineParser(
        prog="python -m arena.play",
        description="Play stud against the agents: in the terminal, or with --web in the browser.")
    p.add_argument("--web", action="store_true",
                   help="serve the web table instead of playing in the terminal")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--game", default="soko", choices=list(RULES), help="terminal: the preset")
    p.add_argument("--betting", default=None,
                   choices=["fixed_limit", "spread_limit", "pot_limit", "no_limit"],
                   help="terminal: the betting structure (default: the preset's fixed limit)")
    p.add_argument("--players", type=int, default=2, help="terminal: seats at the table, you included")
    p.add_argument("--opponent", action="append", default=[], metavar="SPEC",
                   help="terminal: an opponent's agent spec (once for all, or once per seat)")
    p.add_argument("--seed", type=int, default=None, help="terminal: the table's seed (default random)")
    p.add_argument("--coach", default=None, metavar="SPEC",
                   help="terminal: an agent whose action probabilities are shown for your decisions")
    p.add_argument("--default-opponent", default=None, metavar="SPEC",
                   help="the opponent offered first (default: champion, or equity where no champion is "
                        "installed)")
    p.add_argument("--pace-ms", type=int, default=900, help="web: default pause between agents' actions")
    p.add_argument("--table-timeout", type=float, default=1800.0,
                   help="web: seconds before an idle table is dropped")
    p.add_argument("--hands", type=int, default=None, help="terminal: stop after this many hands")
    p.add_argument("--ascii", action="store_true", help="terminal: suits as letters, not symbols")
    p.add_argument("--phh-dir", default=None, help="terminal: save every finished hand as a PHH file here")
    a = p.parse_args(argv)
    if not 0 < a.port < 65536:
        p.error(f"--port must be 1..65535, not {a.port}")
    if a.pace_ms < 0:
        p.error("--pace-ms must not be negative")
    if a.hands is not None and a.hands < 1:
        p.error(f"--hands must be at least 1, not {a.hands}")
    if not a.table_timeout > 0:
        p.error(f"--table-timeout must be positive, not {a.table_timeout:g}")
    if a.default_opponent is None:
        a.default_opponent = "champion"
    else:   # given: checked, never replaced by another agent
        from agents.registry import AGENTS

        if a.default_opponent.partition(":")[0].strip() not in AGENTS:
            p.error(f"--default-opponent {a.default_opponent}: unknown agent; valid agents: "
                    f"{', '.join(AGENTS)}")
    return PlayConfig(web=a.web, host=a.host, port=a.port, game=a.game, players=a.players,
                      opponents=tuple(a.opponent), seed=a.seed, coach=a.coach, betting=a.betting,
                      default_opponent=a.default_opponent, pace_ms=a.pace_ms, table_timeout_s=a.table_timeout,
                      hands=a.hands, ascii=a.ascii, phh_dir=a.phh_dir)


def main(cfg: PlayConfig) -> int:
    """Serve the web table, or play at a terminal table; the exit code."""
    if cfg.web:
        import uvicorn

        from arena.play.server import ServerConfig, create_app

        app = create_app(ServerConfig(host=cfg.host, port=cfg.port, default_opponent=cfg.default_opponent,
                                      pace_ms=cfg.pace_ms, table_timeout_s=cfg.table_timeout_s))
        problem = _cannot_listen(cfg.host, cfg.port)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        if cfg.host not in ("127.0.0.1", "localhost", "::1"):
            print(f"warning: listening on {cfg.host}: other machines can reach this table (no password); "
                  f"their pages may choose the built-in agents and the champions, not files of this machine",
                  file=sys.stderr)
        print(f"Stud Arena table: http://{cfg.host}:{cfg.port}/  (Ctrl+C stops it)", flush=True)
        uvicorn.run(app, host=cfg.host, port=cfg.port, log_level="warning", ws_max_size=65536)
        return 0
    from arena.play.table import Table, TableConfig, default_opponent
    from arena.play.terminal import play_terminal

    opponents = cfg.opponents or (default_opponent(cfg.default_opponent),)
    try:
        table = Table(TableConfig(game=cfg.game, players=cfg.players, opponents=opponents, seed=cfg.seed,
                                  coach=cfg.coach, betting=cfg.betting))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if cfg.phh_dir is not None:
        from envs.files import make_folder

        try:
            make_folder(cfg.phh_dir)
        except ValueError as exc:
            print(f"error: --phh-dir: {exc}", file=sys.stderr)
            return 2
    try:
        play_terminal(table, hands=cfg.hands, ascii_only=cfg.ascii, phh_dir=cfg.phh_dir)
    except KeyboardInterrupt:
        print("\nBye.")
    except BrokenPipeError:  # the output went to a pipe that closed (`| head`): nothing to say
        drop_closed_stdout()
    return 0


def _cannot_listen(host: str, port: int) -> str | None:
    """Why the web table could not listen on ``host:port`` (None: it can), found by binding a
    socket there as the server will, before the address is printed."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        return f"--host {host}: not an address of this machine ({exc.strerror})"
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return (f"cannot listen on {host}:{port}: the port is in use (another table or program "
                        f"listens there); choose another --port")
            return (f"cannot listen on {host}:{port}: {exc.strerror} (--host must be an address of this "
                    f"machine)")
    return None


def cli(argv=None) -> None:
    sys.exit(main(parse_args(argv)))


if __name__ == "__main__":
    cli()
