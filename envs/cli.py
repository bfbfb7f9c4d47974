"""The project's command lines: usage errors in one line.

argparse prints its whole usage block before an error; every command of the project prints one
line instead, ``PROG: error: MESSAGE``, and exits with code 2 (docs: README, "Usage errors").
Standard library only, so every layer's command can use it.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["OneLineParser", "drop_closed_stdout"]


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors (argparse's own, such as a mistyped option, and
    ``parser.error`` calls) are one line and exit code 2; ``hint`` is added to the line (for
    instance ``" (see --help)"``)."""

    def __init__(self, *args, hint: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hint = hint

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}{self.hint}\n")


def drop_closed_stdout() -> None:
    """After a ``BrokenPipeError`` (the output went to a pipe that closed, as ``| head`` does):
    standard output goes to the null device, so that the flush at the exit raises nothing."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
