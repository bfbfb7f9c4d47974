"""The options the benchmark scripts share: ``--quick`` (``make bench QUICK=1``), and a
``--model`` that defaults to the shipped Soko champion.

A quick run is a smoke run that exercises every path in seconds; its numbers are noisy and do
not go to docs/results.md. Each script names its quick options; any option also given on the
command line still wins over them.
"""

from __future__ import annotations

import argparse


def parse_args(parser: argparse.ArgumentParser, quick: dict, argv=None) -> argparse.Namespace:
    """Add ``--quick`` (setting the options in ``quick``) to ``parser`` and parse ``argv``."""
    shown = " ".join(f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}") for k, v in quick.items())
    parser.add_argument("--quick", action="store_true",
                        help=f"smallest useful run, for `make bench QUICK=1`: {shown}")
    args = parser.parse_args(argv)
    if args.quick:
        parser.set_defaults(**quick)
        args = parser.parse_args(argv)
    return args


def model_or_champion(parser: argparse.ArgumentParser, model: str | None) -> str:
    """``model`` (a ``--model`` path, checked to exist), or the shipped Soko champion's file when
    it is None; a usage error of ``parser`` otherwise."""
    from pathlib import Path

    if model is None:
        from agents.registry import champion_path

        try:
            model = str(champion_path("soko"))
        except ValueError as exc:   # not installed
            parser.error(str(exc))
    if not Path(model).exists():
        parser.error(f"--model {model}: no such file")
    return model
