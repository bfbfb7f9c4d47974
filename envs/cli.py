"""The project's command lines: usage errors in one line.

argparse prints its whole usage block before an error; every command of the project prints one
line instead, ``PROG: error: MESSAGE``, and exits with code 2 (docs: README, "Usage errors").
Standard library only, so every layer's command can use it.
"""

from __future__ import annotations

import argparse

__all__ = ["OneLineParser"]


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors (argparse's own, such as a mistyped option, and
    ``parser.error`` calls) are one line and exit code 2; ``hint`` is added to the line (for
    instance ``" (see --help)"``)."""

    def __init__(self, *args, hint: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.hint = hint

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}{self.hint}\n")
