"""What a tournament shows: the terminal table, the cross-table as CSV and PNG, results.json.

**Outputs** under ``runs/tournaments/<name>/`` (by default game, rules overrides, players,
scheme, seed and time, e.g. ``follow_the_bitch_low_chicago=true_3p_dup_seed0_<time>``):
``results.json`` (config, rules, the agents' names with their specs as given and canonical
(``ppo`` paths absolute), every match, cross-table, ranking, timing), ``crosstable.csv`` (bb/100
of the row agent against the column agent, then its result against the field),
``crosstable.png`` (a heat map with the intervals) and, with ``--histories N``, the first N hand
histories of each match in ``histories/``: as readable text (``<match>.txt``) and as PHH files,
one a hand (``<match>/<n>.phh``).
"""

from __future__ import annotations

import csv
import io
import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from arena.match import worker_count
from arena.results import TournamentConfig, TournamentResult
from arena.stats import Estimate
from envs.files import atomic_write_bytes, atomic_write_text, write_json

__all__ = ["format_table", "cross_sides", "crosstable_figure", "write_outputs", "default_name"]


NO_INTERVAL = "n/a"
"""What the tables show for an interval that too few deals leave undefined (no degrees of
freedom: one deal, or no more deals than the luck correction fits terms)."""


def _fmt(e: Estimate | None, width: int = 0) -> str:
    if e is None:
        return ".".center(width)
    spread = f"{e.half_width:.1f}" if math.isfinite(e.half_width) else NO_INTERVAL
    return f"{e.mean:+.1f}±{spread}".rjust(width)


def format_table(result: TournamentResult) -> str:
    """The ranking and the cross-table as plain text."""
    cfg = result.config
    groups = result.matches[0].groups
    n = cfg.players
    scheme = (f"duplicate: {_count(groups, 'deal')} x {n} seatings" if cfg.duplicate
              else f"no duplicate: {_count(groups, 'group')} of {n} independent hands")
    lines = [f"{result.rules.name}, {n} players, {result.matches[0].hands} hands per match ({scheme}), "
             f"seed {cfg.seed}",
             "Big bets per 100 hands, 95% Student-t interval over groups"
             + (", luck-corrected" if cfg.luck_correction else ""),
             "", "Ranking against the field"]
    width = max(len(a) for a in result.agents) + 2
    lines.append(f"  #  {'agent'.ljust(width)}{'bb/100':>9}  {'95% CI':>19}  {'hands':>8}")
    for i, a in enumerate(result.ranking()):
        e = result.field[a]
        hands = sum(m.hands for m in result.matches if a in m.agents)
        interval = (f"[{e.low:>+8.1f}, {e.high:>+8.1f}]" if math.isfinite(e.half_width)
                    else f"[{NO_INTERVAL:>8}, {NO_INTERVAL:>8}]")
        lines.append(f"  {i + 1:<2} {a.ljust(width)}{e.mean:>+9.1f}  {interval}  {hands:>8}")
    rows, columns = cross_sides(result)
    lines += ["", "Cross-table: row agent against column agent (bb/100 ± 95% half-width)"]
    lines += _cross_lines(rows, columns, result.crosstable)
    if result.raw_crosstable is not None:
        lines += ["", "Without the luck correction (raw results)"]
        lines += _cross_lines(rows, columns, result.raw_crosstable)
    shown = [*result.field.values(), *(e for row in result.crosstable.values() for e in row.values())]
    if any(not math.isfinite(e.half_width) for e in shown):
        lines += ["", f"{NO_INTERVAL}: {_count(groups, 'deal')} {'leaves' if groups == 1 else 'leave'} no "
                      f"interval (it needs at least 2, and more than the luck correction fits terms); "
                      f"play more --hands"]
    workers = worker_count(cfg.workers)
    split = "Ray actors" if getattr(cfg, "ray", None) is not None else _count(workers, "worker")
    lines += ["", f"{result.hands} hands in {result.seconds:.1f} s "
              f"({result.hands_per_second:.0f} hands/s, {split}; "
              f"warm-up {result.warm_up_seconds:.1f} s)"]
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def cross_sides(result: TournamentResult) -> tuple[list[str], list[str]]:
    """The cross-table's rows and columns: every agent both ways, or with ``--against`` the
    agents of ``--agents`` as rows and the field as columns (the field's rows would be the same
    matches seen from the other side, and its cells among itself were never played)."""
    k = len(result.config.agents)
    if getattr(result.config, "against", None):
        return list(result.agents[:k]), list(result.agents[k:])
    return list(result.agents), list(result.agents)


def _cross_lines(agents: Sequence[str], columns: Sequence[str],
                 cross: dict[str, dict[str, Estimate]]) -> list[str]:
    """The cross-table's lines, ``agents`` as rows and ``columns`` as columns: columns headed by
    the names when every name fits a 14-character cell, otherwise by numbers that the rows carry
    in front of the names (a line under the table names the columns that are not rows)."""
    cell = 14
    everyone = list(dict.fromkeys([*agents, *columns]))
    number = {a: i + 1 for i, a in enumerate(everyone)}
    numbered = max(len(a) for a in everyone) > cell - 1
    rows = [f"{number[a]:>2} {a}" if numbered else a for a in agents]
    heads = [str(number[b]) if numbered else b for b in columns]
    width = max(len(r) for r in rows) + 2
    lines = [" " * width + "".join(h.rjust(cell) for h in heads)]
    for a, row in zip(agents, rows):
        lines.append(row.ljust(width) + "".join(_fmt(cross[a].get(b), cell) if a != b else ".".rjust(cell)
                                                for b in columns))
    unnamed = [b for b in columns if b not in agents]
    if numbered and unnamed:
        lines.append("columns: " + ", ".join(f"{number[b]} {b}" for b in unnamed))
    return lines


def _write_csv(result: TournamentResult, path: Path) -> None:
    agents = result.agents
    out = io.StringIO(newline="")
    w = csv.writer(out)
    w.writerow(["agent"] + list(agents) + ["field", "field_ci95_low", "field_ci95_high"])
    for a in agents:
        row = [a]
        for b in agents:
            e = result.crosstable[a].get(b)
            row.append("" if e is None else f"{e.mean:.3f}")
        fe = result.field[a]
        w.writerow(row + [f"{v:.3f}" if math.isfinite(v) else "" for v in (fe.mean, fe.low, fe.high)])
    atomic_write_text(path, out.getvalue())


def _write_png(result: TournamentResult, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = crosstable_figure(result)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=150)
    plt.close(fig)
    atomic_write_bytes(path, buffer.getvalue())


def crosstable_figure(result: TournamentResult):
    """The cross-table as a heat map (a matplotlib Figure, Agg backend). The figure is sized
    from the number of agents and the longest name, and matplotlib's constrained layout places
    the tick labels, the title and the colour bar so that none covers another."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    agents, columns = cross_sides(result)
    grid = np.full((len(agents), len(columns)), np.nan)
    for i, a in enumerate(agents):
        for j, b in enumerate(columns):
            e = result.crosstable[a].get(b)
            if e is not None:
                grid[i, j] = e.mean
    limit = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
    limit = limit or 1.0
    # 8-point text: about 0.075 inch a character; the rows' names beside the grid, the
    # columns' (at 45 degrees) under it
    row_labels, column_labels = (0.075 * max(len(a) for a in names) for names in (agents, columns))
    cell = 0.95
    fig = plt.figure(figsize=(max(5.0, 1.6 + row_labels + cell * len(columns)),
                              max(3.5, 1.3 + 0.7 * column_labels + cell * len(agents))), layout="constrained")
    ax = fig.add_subplot()
    image = ax.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit)
    for i, a in enumerate(agents):
        for j, b in enumerate(columns):
            e = result.crosstable[a].get(b)
            if e is not None:
                ax.text(j, i, _fmt(e).replace("±", "\n±"), ha="center", va="center", fontsize=8,
                        color="white" if abs(e.mean) > 0.6 * limit else "black")
    ax.set_xticks(range(len(columns)), columns, rotation=45, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_yticks(range(len(agents)), agents, fontsize=8)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    scheme = "duplicate" if result.config.duplicate else "no duplicate"
    if result.config.luck_correction:
        scheme += ", luck-corrected"
    fig.suptitle(f"{result.rules.name}, {result.config.players} players, {scheme}\n"
                 f"bb/100 of the row agent against the column agent (95% CI)", fontsize=9)
    fig.colorbar(image, ax=ax, label="bb/100", shrink=0.8)
    return fig


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", text).strip("_")


def write_outputs(result: TournamentResult, folder: Path, argv: Sequence[str] | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    data = result.as_dict()
    data["command"] = " ".join(argv) if argv else None
    write_json(folder / "results.json", data)   # an undefined interval: null
    _write_csv(result, folder / "crosstable.csv")
    _write_png(result, folder / "crosstable.png")
    if result.config.histories:
        hist = folder / "histories"
        hist.mkdir(exist_ok=True)
        for m in result.matches:
            atomic_write_text(hist / f"{_slug('_vs_'.join(m.agents))}.txt", "\n".join(m.histories))
            phh = hist / _slug("_vs_".join(m.agents))  # one .phh file a hand (docs/hand_histories.md)
            phh.mkdir(exist_ok=True)
            for number, text in enumerate(m.phh_histories, 1):
                atomic_write_text(phh / f"{number}.phh", text)


def default_name(cfg: TournamentConfig, when: datetime | None = None) -> str:
    """The run folder's name: game, rules overrides, players, scheme, seed and time.

    >>> from arena.results import TournamentConfig
    >>> default_name(TournamentConfig(game="follow_the_bitch", rules={"low_chicago": True}, players=3,
    ...                               luck_correction=False), datetime(2026, 1, 2, 3, 4, 5))
    'follow_the_bitch_low_chicago=true_3p_dup_seed0_20260102-030405'
    """
    rules = "".join(f"_{_slug(f'{k}={_rule_text(v)}')}" for k, v in sorted(cfg.rules.items()))
    return (f"{cfg.game}{rules}_{cfg.players}p_{'dup' if cfg.duplicate else 'plain'}"
            f"{'_luck' if cfg.luck_correction else ''}_seed{cfg.seed}_{when or datetime.now():%Y%m%d-%H%M%S}")


def _rule_text(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, (tuple, list)):
        return ",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in value)
    return str(value)
