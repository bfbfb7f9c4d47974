"""Duplicate tournaments between agents: cross-table, ranking against the field, 95% intervals.

    python -m arena --game soko --agents tag equity random call --hands 20000 \\
        --players 2 --seed 0
    python -m arena --game follow_the_bitch --rule low_chicago=true --agents tag random

**Matches.** Heads-up, every pair of agents is a match; with ``--players n > 2`` every set of
``n`` agents is a table. A match plays ``--hands`` hands. With ``--against``, the agents of
``--agents`` play only the field it lists: every match seats one of them with ``n - 1`` of the
field (heads-up, each against each of the field), and neither list plays among itself::

    python -m arena --agents ppo:runs/my_run --against random call raise tag equity

How a match is dealt, seeded and split over ``--workers`` processes: :mod:`arena.match`;
the luck correction (``--luck-correction``): :mod:`arena.luck`; the intervals, the cross-table
cells and the ranking against the field: :mod:`arena.stats`; the outputs: :mod:`arena.report`.

**Names and checks.** Agents appear under their display names; two different agents with the
same display name are refused (tell them apart with ``name=...``), the same agent given twice is
numbered (``random``, ``random#2``: fills seats at a table). Every spec is checked when the
arguments are parsed (``agents.registry.check_spec``: a ``ppo`` model must exist and have this
game's observation and action sizes); any usage error exits with code 2 and one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from agents.registry import bind_spec, check_spec, describe_agents
from arena.batched_play import ENGINES
from arena.match import MatchPlan, Seat, match_result, play_matches, seat_agents, settle_engine, worker_count
from arena.report import default_name, format_table, write_outputs
from arena.results import MatchResult, TournamentConfig, TournamentResult
from arena.stats import Estimate, combine, mean_ci
from envs.cli import OneLineParser, drop_closed_stdout
from envs.engine.rules import RULES, Rules, check_players, get_rules
from envs.files import check_folder_name, make_folder

__all__ = ["TournamentConfig", "TournamentResult", "run_tournament", "check_config", "luck_default", "tables",
           "main", "parse_args", "cli"]

PROG = "python -m arena"


def luck_default(rules: Rules) -> bool:
    """Whether the luck correction is on when not asked: in games without wild cards. In
    Follow the Bitch it scores seven-card hands under changing wild ranks (tables for every
    wild rank are built first, then each hand costs many times a hand between cheap agents)
    for intervals only a little narrower (docs/results.md); there more hands are the better
    buy, so it is on request only."""
    return not rules.follow_the_queen


def run_tournament(cfg: TournamentConfig) -> TournamentResult:
    """Play every match of ``cfg`` and compute the cross-table and ranking (writes nothing)."""
    rules, seats = check_config(cfg)
    n = cfg.players
    names = [s.name for s in seats]
    agents = {s.name: s.spec for s in seats}
    k = len(cfg.agents)   # seats come in order: --agents, then --against
    matches = [MatchPlan(i, t, t) for i, t in enumerate(tables(names[:k], names[k:], n))]
    groups = max(1, math.ceil(cfg.hands / n))
    start = time.perf_counter()
    luck = luck_default(rules) if cfg.luck_correction is None else cfg.luck_correction
    cfg = dataclasses.replace(cfg, luck_correction=luck)  # results.json says what was used
    chips, features, texts, seconds = play_matches(
        rules, n, agents, matches, groups, seed=cfg.seed, duplicate=cfg.duplicate,
        workers=worker_count(cfg.workers), histories=cfg.histories, progress=cfg.progress, luck=luck,
        ray=cfg.ray, engine=cfg.engine)
    warm = time.perf_counter() - start - seconds
    results = [match_result(m.names, c, features[k] if luck else None, rules, t, seconds)
               for k, (m, c, t) in enumerate(zip(matches, chips, texts))]
    cross, field_ = _summarize(tuple(names), results)
    raw = _summarize(tuple(names), results, raw=True) if luck else (None, None)
    return TournamentResult(cfg, rules, tuple(names), results, cross, field_, seconds, warm, *raw,
                            specs={s.name: (s.spec, s.canonical) for s in seats})


def tables(agents: Sequence[str], field: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """The tables of ``n`` seats a tournament plays, in order: every set of ``n`` of ``agents``;
    given a ``field`` (``--against``), each agent with every set of ``n - 1`` of the field."""
    if not field:
        return list(itertools.combinations(agents, n))
    return [(a, *rest) for a in agents for rest in itertools.combinations(field, n - 1)]


def check_config(cfg: TournamentConfig) -> tuple[Rules, list[Seat]]:
    """The rules and the agents of ``cfg``, or a one-line ValueError for anything that cannot
    be played: the rules overrides, the number of players, an agent spec (a ``ppo`` model that
    is missing or was trained for another game: ``agents.registry.check_spec``), two agents
    with the same display name. ``parse_args`` turns these into usage errors (exit code 2)."""
    try:
        rules = get_rules(cfg.game, **cfg.rules)
    except TypeError as exc:  # a field Rules does not have
        raise ValueError(str(exc)) from None
    n = cfg.players
    check_players(rules, n)
    if cfg.against and len(cfg.against) < n - 1:
        raise ValueError(f"{n} players against a field need at least {n - 1} agents in --against; "
                         f"got {len(cfg.against)}")
    agents = [bind_spec(spec, rules, n) for spec in [*cfg.agents, *cfg.against]]   # champion: this game's
    for spec in agents:
        check_spec(spec, rules)
    seats = seat_agents(agents)
    if len(seats) < n:
        raise ValueError(f"{n} players need at least {n} agents; got {len(seats)} "
                         f"(repeat a spec, e.g. --agents tag random random, to fill seats)")
    if cfg.engine != "reference":   # "batched": every agent must have a batched form
        settle_engine(cfg.engine, rules, n, {s.name: s.spec for s in seats})
    return rules, seats


def _summarize(agents: tuple[str, ...], matches: list[MatchResult], raw: bool = False) -> tuple[dict, dict]:
    """Cross-table and results against the field (``raw``: without the luck correction).

    A cell's interval uses the same degrees of freedom as its matches' own estimates (minus the
    luck correction's fitted coefficients), so heads-up the cell (A, B) is exactly A's match
    estimate: one interval per pair, in the table, the picture and ``matches[]`` alike."""
    cross: dict[str, dict[str, Estimate]] = {a: {} for a in agents}
    for a, b in itertools.permutations(agents, 2):
        parts = []
        for m in matches:
            if a in m.agents and b in m.agents:
                i, j = m.agents.index(a), m.agents.index(b)
                values = m.raw_group_results if raw else m.group_results
                fitted = 0 if raw else m.luck_fitted
                parts.append(mean_ci((values[:, i] - values[:, j]) / 2, fitted=fitted).scaled(100.0))
        if parts:
            cross[a][b] = combine(parts)
    field_ = {a: combine([(m.raw_estimates if raw else m.estimates)[a] for m in matches if a in m.agents])
              for a in agents}
    return cross, field_


def main(cfg: TournamentConfig, argv: Sequence[str] | None = None) -> TournamentResult:
    """Run the tournament, (``cfg.write``) write the run folder and print the tables: written
    first, so that an output cut short (``| head``) loses nothing."""
    result = run_tournament(cfg)
    folder = None
    if cfg.write:
        folder = _new_folder(Path(cfg.out_dir) / (cfg.name or default_name(result.config)))
        write_outputs(result, folder, argv)
    print(format_table(result))
    if folder is not None:
        print(f"\nWrote {folder}/results.json, crosstable.csv, crosstable.png"
              + (", histories/" if cfg.histories else ""))
    return result


def _new_folder(folder: Path) -> Path:
    """``folder``, or ``folder-2``, ``folder-3``, ... if it exists already: a result never
    overwrites another (``--name`` of an existing folder is refused when the arguments are
    read; this covers a folder made while the tournament played, or one second's default name)."""
    path, k = folder, 2
    while path.exists():
        path, k = folder.with_name(f"{folder.name}-{k}"), k + 1
    return path


def _rule_value(rules: Rules, key: str, text: str) -> Any:
    """Read ``--rule key=text`` as the type of the field's current value."""
    fields = {f.name for f in dataclasses.fields(rules)}
    if key not in fields:
        raise ValueError(f"unknown rule {key!r}; fields are {', '.join(sorted(fields))}")
    current = getattr(rules, key)
    low = text.strip().lower()
    if isinstance(current, bool):
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"--rule {key}= takes true or false, not {text!r}")
    if isinstance(current, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"--rule {key}= takes a whole number, not {text!r}") from None
    if isinstance(current, tuple) and key in ("spread_sizes", "pot_fractions"):
        try:
            return tuple(float(x) for x in text.split(","))
        except ValueError:
            raise ValueError(f"--rule {key}= takes numbers separated by commas, not {text!r}") from None
    if low in ("none", "null"):
        return None
    return text


def parse_args(argv: Sequence[str] | None = None) -> TournamentConfig:
    """The tournament a command line asks for, checked (:func:`check_config`) before anything
    is played: any usage error (an unknown option or rule, a bad value, a bad agent spec or
    ``ppo`` model, a player count the game or the agents cannot seat) exits with code 2 and one
    line."""
    parser = OneLineParser(
        prog=PROG,
        description="Duplicate tournament between agents.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="agents:\n" + describe_agents() + f"\ngames: {', '.join(RULES)}\n"
               "Usage errors exit with code 2.")
    parser.add_argument("--game", default="soko", choices=sorted(RULES))
    parser.add_argument("--agents", nargs="+", default=["tag", "equity", "random", "call"], metavar="SPEC")
    parser.add_argument("--against", nargs="+", default=[], metavar="SPEC",
                        help="a field: each agent of --agents plays each of these (n - 1 of them "
                             "at a table of n) and no other match, e.g. --agents ppo:runs/RUN "
                             "--against random call raise tag equity")
    parser.add_argument("--hands", type=int, default=20000, help="hands per match (default 20000)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                        help="a rules override, e.g. --rule low_chicago=true (repeatable)")
    parser.add_argument("--no-duplicate", action="store_true", help="independent deals for every hand")
    parser.add_argument("--luck-correction", action=argparse.BooleanOptionalAction, default=None,
                        help="subtract the luck of the cards dealt, an unbiased control variate "
                             "(arena/luck.py; the raw numbers are kept too). Default: on for "
                             "games without wild cards (Soko), off for Follow the Bitch (costlier there, "
                             "for less)")
    parser.add_argument("--workers", type=int, default=0, help="processes (default: every core)")
    parser.add_argument("--engine", choices=ENGINES, default="reference",
                        help="where hands are played: reference (a Game per hand, the default), "
                             "batched (the compiled core, every hand of a chunk at once: the same "
                             "numbers for deterministic agents, other draws for random ones; "
                             "refused when an agent has no batched form) or auto (the core when "
                             "every agent can); arena/batched_play.py")
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                        help="play on Ray actors, one per cluster CPU (arena/cluster.py): a local Ray "
                             "instance, or the cluster at ADDRESS (auto, HOST:PORT); the same results")
    parser.add_argument("--name", default=None, help="run folder name under --out (a new one: an existing "
                                                     "folder is refused)")
    parser.add_argument("--out", default="runs/tournaments")
    parser.add_argument("--histories", type=int, default=0, metavar="N",
                        help="write the first N hand histories of each match")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    base = RULES[args.game]
    overrides: dict[str, Any] = {}
    for item in args.rule:
        key, eq, value = item.partition("=")
        if not eq:
            parser.error(f"--rule takes FIELD=VALUE, not {item!r}")
        try:
            overrides[key.strip()] = _rule_value(base, key.strip(), value)
        except ValueError as exc:
            parser.error(str(exc))
    if args.hands < 1:
        parser.error("--hands must be at least 1")
    if args.histories < 0:
        parser.error("--histories must be at least 0")
    if args.seed < 0:
        parser.error(f"--seed must be at least 0, not {args.seed}")
    if args.workers < 0:
        parser.error(f"--workers must be at least 0 (0: one per core), not {args.workers}")
    if args.ray:
        from arena.cluster import check_address

        try:   # a mistyped address or nothing listening: now, not after Ray's retries
            check_address(args.ray)
        except ValueError as exc:
            parser.error(f"--ray: {exc}")
    if args.name is not None:
        try:
            check_folder_name(args.name)
        except ValueError as exc:
            parser.error(f"--name: {exc}")
    if args.name is not None and not args.no_write:
        folder = Path(args.out) / args.name
        if folder.exists():
            parser.error(f"--name {args.name}: {folder} exists already (an earlier result?); "
                         f"choose another name or remove it")
    cfg = TournamentConfig(game=args.game, agents=list(args.agents), against=list(args.against),
                           hands=args.hands, players=args.players, seed=args.seed, rules=overrides,
                           duplicate=not args.no_duplicate, luck_correction=args.luck_correction,
                           workers=args.workers, ray=args.ray, engine=args.engine, name=args.name,
                           out_dir=args.out, histories=args.histories,
                           progress=not args.no_progress, write=not args.no_write)
    try:
        check_config(cfg)
    except ValueError as exc:
        parser.error(str(exc))
    if cfg.write:
        try:   # now, not after the tournament has played
            make_folder(cfg.out_dir)
        except ValueError as exc:
            parser.error(f"--out: {exc}")
    return cfg



def cli(argv: Sequence[str] | None = None) -> int:
    """The command line (``python -m arena``, ``stud-tournament``): 0 after a tournament, 2 for a
    usage error (exits from :func:`parse_args`), 1 for a failure while playing."""
    args = sys.argv[1:] if argv is None else list(argv)
    config = parse_args(args)
    from agents.trained import limit_blas_threads

    limit_blas_threads(1)   # NumPy forward passes of ppo agents: one thread each (workers: one per core)
    try:
        main(config, argv=[PROG, *args])
        sys.stdout.flush()   # here, where a closed pipe is caught, not at the exit
    except ValueError as exc:  # not a usage error (those exit 2 above): a failure while playing
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"\n{PROG}: interrupted; nothing written", file=sys.stderr)
        return 130
    except BrokenPipeError:   # the output went to a pipe that closed (`| head`): the files are written
        drop_closed_stdout()
    return 0


if __name__ == "__main__":
    sys.exit(cli())
