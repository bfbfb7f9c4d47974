"""`make bench QUICK=1` runs every script of bench/ with `--quick` and nothing else: each script
must offer `--quick` (its own flag or bench/quick_option.py) and need no other argument."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name != "quick_option.py")


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_benchmark_runs_with_quick_alone(script):
    calls = list(_calls(ast.parse(script.read_text())))
    adds = [c for c in calls if c.func.attr == "add_argument"]
    own_flag = any(isinstance(a, ast.Constant) and a.value == "--quick" for c in adds for a in c.args)
    shared = any(c.func.attr == "parse_args" and isinstance(c.func.value, ast.Name)
                 and c.func.value.id == "quick_option" for c in calls)
    assert own_flag or shared, f"{script.name} has no --quick"
    required = [ast.unparse(c.args[0]) for c in adds if c.args
                and any(k.arg == "required" and isinstance(k.value, ast.Constant) and k.value.value
                        for k in c.keywords)]
    assert not required, f"{script.name}: `make bench QUICK=1` cannot give {required}"
    positional = [ast.unparse(c.args[0]) for c in adds if c.args and isinstance(c.args[0], ast.Constant)
                  and not str(c.args[0].value).startswith("-")
                  and not any(k.arg == "nargs" and isinstance(k.value, ast.Constant) and k.value.value in "?*"
                              for k in c.keywords)]
    assert not positional, f"{script.name}: `make bench QUICK=1` cannot give {positional}"
