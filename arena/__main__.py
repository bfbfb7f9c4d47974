"""``python -m arena ...``: the tournament command line (:func:`arena.tournament.cli`)."""

import sys

from arena.tournament import cli

sys.exit(cli())
