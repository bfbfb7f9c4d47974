"""The import graph of the project's packages (envs, agents, arena, train): no cycles, and no
private name imported from another module (docs/architecture.md "Imports").

Every import statement counts as an edge, wherever it stands: at module level, inside a
function (the lazy imports that keep torch or the compiled core from loading until needed) or
under ``if TYPE_CHECKING:``. A lazy import delays loading, not the dependency: the module
still needs the other one to work, so a cycle through a function-level import is a cycle of
the design (the four cycles of issue 23 ran through lazy imports as often as not). The graph is
read from the source with ``ast``; nothing is imported.

- ``from x import y`` is an edge to the module ``x.y`` when that is a module of the packages,
  else to ``x``; ``import x.y`` to ``x.y``. Importing a package's submodule does not count as
  importing the package's ``__init__`` too (it does run it, but a package's face that only hands
  names on is not a dependency of its own modules).
- Private names: ``from x import _name`` is refused when ``x`` is a module of the packages and
  ``_name`` is not a module (``from envs import _stud_core`` imports the compiled extension, a
  module). Attribute access (``module._name``) is not read.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("envs", "agents", "arena", "train")

KNOWN_CYCLES: set[frozenset[str]] = set()
"""Cycles being taken apart on another branch: allowed until then, and refused once gone (so
the entry is removed with them)."""


def project_modules(root: Path = ROOT, packages=PACKAGES) -> dict[str, Path]:
    """Every Python module of ``packages`` under ``root``, by dotted name (``envs.engine.game``,
    a package by its own name), plus each compiled extension (``envs._stud_core``) by name."""
    modules: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
        for path in sorted((root / package).rglob("*.so")):
            parts = list(path.relative_to(root).parts)
            parts[-1] = parts[-1].split(".")[0]
            modules[".".join(parts)] = path
    return modules


def import_graph(modules: dict[str, Path]) -> tuple[dict[str, set[str]], list[str]]:
    """The edges between ``modules`` (module -> the modules it imports) and the private-name
    imports across modules, one line each (``file:line: from x import _y``)."""
    edges: dict[str, set[str]] = {name: set() for name, path in modules.items() if path.suffix == ".py"}
    private: list[str] = []
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        edges[name].add(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # a relative import: from the package, up level - 1
                    up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    if target in modules:
                        edges[name].add(target)
                        continue
                    if base in modules:
                        edges[name].add(base)
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            private.append(f"{path}:{node.lineno}: from {base} import {alias.name}")
    for name in edges:
        edges[name].discard(name)
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.add(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(frozenset(part))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _describe(cycle: frozenset[str], edges: dict[str, set[str]]) -> str:
    ties = [f"{a} -> {b}" for a in sorted(cycle) for b in sorted(edges[a] & cycle)]
    return f"{', '.join(sorted(cycle))} ({'; '.join(ties)})"


def test_the_packages_import_each_other_without_cycles():
    edges, _ = import_graph(project_modules())
    assert len(edges) > 40 and "envs.engine.game" in edges["envs.observation"]  # the graph was read
    found = cycles(edges)
    new = [c for c in found if c not in KNOWN_CYCLES]
    assert not new, "import cycles: " + " | ".join(_describe(c, edges) for c in new)
    gone = KNOWN_CYCLES - set(found)
    assert not gone, f"no longer cycles, remove them from KNOWN_CYCLES: {[sorted(c) for c in gone]}"


def test_no_module_imports_a_private_name_of_another():
    _, private = import_graph(project_modules())
    assert not private, "private names imported across modules:\n" + "\n".join(private)


def test_the_checks_find_a_cycle_and_a_private_import(tmp_path):
    # The checker itself, on a small tree: a -> b -> c -> a through a function-level import,
    # a private name imported, a relative import, and a module imported from its package.
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import thing\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.sub import c\n    return c\n")
    (pkg / "sub" / "c.py").write_text("from ..a import _hidden\nimport pkg.d\n")
    (pkg / "d.py").write_text("from pkg import sub\n")
    modules = project_modules(tmp_path, ("pkg",))
    assert set(modules) == {"pkg", "pkg.sub", "pkg.a", "pkg.b", "pkg.sub.c", "pkg.d"}
    edges, private = import_graph(modules)
    assert edges["pkg.b"] == {"pkg.sub.c"} and edges["pkg.sub.c"] == {"pkg.a", "pkg.d"}
    assert edges["pkg.d"] == {"pkg.sub"}
    assert cycles(edges) == [frozenset({"pkg.a", "pkg.b", "pkg.sub.c"})]
    assert len(private) == 1 and private[0].endswith("c.py:1: from pkg.a import _hidden")
    (pkg / "sub" / "c.py").write_text("import pkg.d\n")
    edges, private = import_graph(project_modules(tmp_path, ("pkg",)))
    assert cycles(edges) == [] and private == []


def test_the_training_config_is_a_leaf():
    # train/config.py (the schema, the YAML, types and ranges) imports no module of the
    # packages, at module level or inside a function: the checks that need the engine, the envs,
    # LBR or the registry are train/checks.py's (issue 23).
    path = ROOT / "train" / "config.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = ["." * node.level + (node.module or "")]
        else:
            continue
        found += [f"{path.name}:{node.lineno}: {name}" for name in names
                  if name.startswith(".") or name.split(".")[0] in PACKAGES]
    assert not found, "train/config.py imports the project:\n" + "\n".join(found)
    edges, _ = import_graph(project_modules())
    assert edges["train.config"] == set() and "train.config" in edges["train.checks"]
