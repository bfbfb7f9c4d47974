"""The ``--quick`` option of the benchmark scripts (``make bench QUICK=1``).

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
