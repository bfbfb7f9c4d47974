"""Every command and snippet of README.md and of the topic pages in ``DOCS`` runs as printed, so
the docs cannot drift.

Each line of a ```sh block must match exactly one rule in ``RULES``: it is either run (with
small stand-ins: ``--hands`` cut to a few hands, the smoke config in place of a training
config, a ``<time>`` run folder filled with a run this test made) or skipped for a stated
reason. A new command that matches no rule fails ``test_every_command_has_a_rule``. A command
printed on several pages runs once. Each ```python block runs in a subprocess with this
interpreter, must exit 0 and must print something (a snippet copied into a file and run as a
script shows what it does). The pages' links to files of the repository and to headings of its
pages must resolve, and the README and the config comments hold no dated figures (those live
in docs/results.md).

Only exit codes are checked, never output text (the tournament and training CLIs' wording
changes independently of the README). Commands run in a temporary folder that links the
repository's top-level folders, so their ``runs/`` outputs never land in the work tree.

Wall time on the 2-core machine: 33 s for the README alone with light other load, 42-75 s with
heavy load (2026-12-01); with the topic pages, the error checks and the links, 135 s at load 8-12,
where the README alone took 106-137 s (2026-12-02). The slow tests are ``test_command_runs`` (a
training run, a resume with its own interrupted run, three tournaments: each subprocess imports
torch); they carry a ``timeout`` mark so that a hang fails instead of stalling the suite.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = [README] + [REPO / "docs" / f"{page}.md"
                   for page in ("engine", "envs", "training", "tournaments", "exploitability", "core",
                                "agents")]
"""The pages whose commands and snippets run here: the README and the topic pages."""
PENDING: set[str] = set()
"""Pages the README links to that other branches add; a link to one may dangle until they land."""
SMOKE_CONFIG = "configs/smoke.yaml"
SMALL_HANDS = "24"  # a multiple of every seat rotation up to 4 players, and of the duplicate pair
TIMEOUT = 180       # seconds for one command: a hang fails instead of stalling the suite


# ------------------------------------------------------------------------------------------
# Reading the pages


def fenced_blocks(language: str, text: str | None = None) -> list[str]:
    """The bodies of the ```language blocks of ``text`` (default: every page of ``DOCS``), in
    order, each once."""
    texts = [page.read_text() for page in DOCS] if text is None else [text]
    pattern = re.compile(rf"^```{language}\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)
    blocks = [block for t in texts for block in pattern.findall(t)]
    return list(dict.fromkeys(blocks))


def shell_commands(text: str | None = None) -> list[str]:
    """Each command of the ```sh blocks as one line, comments dropped, continuations joined,
    each once."""
    commands = []
    for block in fenced_blocks("sh", text):
        block = block.replace("\\\n", " ")
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(shlex.join(words))
    return list(dict.fromkeys(commands))


# ------------------------------------------------------------------------------------------
# The rules: every README command matches exactly one


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: str                    # re.match against the command line
    skip: str | None = None         # why it cannot run in a test; None: it runs
    rewrite: Callable[[list[str]], list[str]] | None = None

    def matches(self, command: str) -> bool:
        return re.match(self.pattern, command) is not None


def _option(words: list[str], name: str, value: str, *, add: bool) -> list[str]:
    """``words`` with option ``name``'s value set to ``value`` (appended if absent and ``add``)."""
    words = list(words)
    if name in words:
        words[words.index(name) + 1] = value
    elif add:
        words += [name, value]
    return words


def _training(words: list[str]) -> list[str]:
    # Any training config becomes the smoke config: the same code paths in seconds.
    return _option(words, "--config", SMOKE_CONFIG, add=False)


def _tournament(words: list[str]) -> list[str]:
    # A tournament without --hands would play the default 20,000 hands a match.
    return _option(words, "--hands", SMALL_HANDS, add=True)


RULES = [
    Rule("make", r"make\b", skip="builds a virtualenv or runs for minutes; CI runs `make test` itself"),
    Rule("tensorboard", r"\.venv/bin/tensorboard\b", skip="a server that runs until stopped"),
    Rule("training", r"\.venv/bin/python train/ppo\.py ", rewrite=_training),
    Rule("tournament", r"\.venv/bin/python -m arena ", rewrite=_tournament),
    Rule("exploitability of a baseline",
         r"\.venv/bin/python -m arena\.exploit .*--agent (random|call|raise|tag) --method (exact|lbr)",
         rewrite=_tournament),
    Rule("learned best response", r"\.venv/bin/python -m arena\.exploit .*--method learned",
         skip="trains a model for minutes"),
    Rule("exploitability of a trained model", r"\.venv/bin/python -m arena\.exploit .*--agent '?ppo:",
         skip="needs a model trained on soko_mini, which the smoke runs are not"),
    Rule("convert a run's zip", r"\.venv/bin/python -m agents\.convert '?runs/"),
    Rule("convert someone's zip", r"\.venv/bin/python -m agents\.convert theirs\.zip",
         skip="stands for a zip from someone else; tests/test_agent_file.py converts one with --game"),
    Rule("benchmark", r"\.venv/bin/python bench/", skip="runs for minutes; `make bench QUICK=1` runs it"),
    Rule("sweep", r"\.venv/bin/python -m train\.sweep ",
         skip="trains a grid of runs; tests/test_ray_cluster.py runs a two-trial sweep on two nodes"),
    Rule("web table", r"\.venv/bin/(python -m arena\.play|stud-play)(?=\s|$).* --web\b",
         skip="a server that runs until stopped; tests/test_play_browser.py drives it in Chromium"),
    Rule("terminal table", r"\.venv/bin/(python -m arena\.play|stud-play)(?=\s|$)(?!.* --web\b)",
         skip="an interactive table; tests/test_play_table.py plays it with scripted input"),
]


def rules_for(command: str) -> list[Rule]:
    return [rule for rule in RULES if rule.matches(command)]


# ------------------------------------------------------------------------------------------
# Runs this test makes, to fill `runs/<config>__s<seed>__<time>` placeholders


PLACEHOLDER = re.compile(r"runs/\w+?__s(\d+)__<time>")


def _run(words: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(words, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _check(done: subprocess.CompletedProcess, what: str) -> None:
    assert done.returncode == 0, (f"{what} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
                                  f"\n--- stderr\n{done.stderr[-3000:]}")


class Runs:
    """Smoke training runs made in ``root``, one per seed: each is stopped with Ctrl-C after
    its first checkpoint, like the run a README `--resume` command continues; a command that
    needs the run's ``final_model.zip`` gets the run finished first."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: dict[int, Path] = {}

    def interrupted(self, seed: int) -> Path:
        if seed in self.folders:
            return self.folders[seed]
        runs = self.root / "runs"
        before = set(runs.glob(f"smoke__s{seed}__*")) if runs.exists() else set()
        process = subprocess.Popen(
            [sys.executable, "train/ppo.py", "--config", SMOKE_CONFIG, "--seed", str(seed), "--no-progress"],
            cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + TIMEOUT
        folder = None
        while process.poll() is None and time.monotonic() < deadline:
            made = set(runs.glob(f"smoke__s{seed}__*")) - before if runs.exists() else set()
            if made:
                folder = made.pop()
                if any((folder / "checkpoints").glob("ckpt_*.json")):
                    process.send_signal(signal.SIGINT)  # Ctrl-C: saves a checkpoint, exits 130
                    break
            time.sleep(0.05)
        process.wait(timeout=TIMEOUT)
        made = set(runs.glob(f"smoke__s{seed}__*")) - before
        assert len(made) == 1, f"the smoke run for seed {seed} made {sorted(made)}"
        self.folders[seed] = made.pop()
        return self.folders[seed]

    def finished(self, seed: int) -> Path:
        folder = self.interrupted(seed)
        if not (folder / "final_model.zip").exists():
            rel = folder.relative_to(self.root)
            _check(_run([sys.executable, "train/ppo.py", "--resume", str(rel), "--no-progress"], self.root),
                   f"finishing {rel}")
        return folder

    def fill(self, words: list[str]) -> list[str]:
        """Placeholders replaced: `runs/X__sN__<time>/final_model.*` by a finished smoke run
        of seed N, any other `runs/X__sN__<time>` by an interrupted one."""
        filled = []
        for word in words:
            def folder(m: re.Match, word=word) -> str:
                seed = int(m.group(1))
                needs_model = word[m.end():].startswith("/final_model.")
                path = self.finished(seed) if needs_model else self.interrupted(seed)
                return str(path.relative_to(self.root))
            filled.append(PLACEHOLDER.sub(folder, word))
        leftover = [w for w in filled if re.search(r"<\w+>", w)]
        assert not leftover, f"no rule fills the placeholder in {leftover}"
        return filled


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A folder that looks like the repository (links to its top-level folders) but keeps its
    own runs/."""
    root = tmp_path_factory.mktemp("readme")
    for entry in REPO.iterdir():
        if entry.name not in {"runs", ".git", ".venv"} and entry.is_dir() and not entry.name.startswith("."):
            (root / entry.name).symlink_to(entry, target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def runs(workdir) -> Runs:
    return Runs(workdir)


# ------------------------------------------------------------------------------------------
# The tests


def test_readme_has_commands_and_snippets():
    assert len(shell_commands()) >= 5
    assert len(fenced_blocks("python")) >= 3


def test_every_command_has_a_rule():
    problems = []
    for command in shell_commands():
        found = rules_for(command)
        if len(found) != 1:
            problems.append(f"{command!r} matches {[r.name for r in found] or 'no rule'}")
    assert not problems, ("each README command needs exactly one rule in tests/test_readme.py "
                          "(run with stand-ins, or skip with a reason):\n" + "\n".join(problems))


def test_rules_read_the_readme_as_meant():
    """The parser and the rewriting, on a made-up README."""
    text = ("```sh\nmake test   # a comment\n.venv/bin/python -m arena --agents a b \\\n"
            "  --hands 20000\n```\n```python\nprint(1)\n```\n")
    assert shell_commands(text) == ["make test", ".venv/bin/python -m arena --agents a b --hands 20000"]
    assert fenced_blocks("python", text) == ["print(1)\n"]
    words = shlex.split(shell_commands(text)[1])
    assert _tournament(words)[-2:] == ["--hands", SMALL_HANDS]
    assert _tournament(words[:-2])[-2:] == ["--hands", SMALL_HANDS]
    assert _training(["x", "--config", "configs/soko_ppo.yaml"]) == ["x", "--config", SMOKE_CONFIG]


def _command_id(command: str) -> str:
    return command.removeprefix(".venv/bin/python ")[:70]


RUNNABLE = [c for c in shell_commands() if (found := rules_for(c)) and len(found) == 1 and not found[0].skip]
SKIPPED = [c for c in shell_commands() if (found := rules_for(c)) and len(found) == 1 and found[0].skip]


@pytest.mark.timeout(2 * TIMEOUT)
@pytest.mark.parametrize("command", RUNNABLE, ids=_command_id)
def test_command_runs(command, workdir, runs):
    (rule,) = rules_for(command)
    words = shlex.split(command)
    assert words[0] == ".venv/bin/python", "a README command runs the project's venv python"
    words = runs.fill(rule.rewrite(words) if rule.rewrite else words)
    _check(_run([sys.executable, *words[1:]], workdir), f"{command!r} as {shlex.join(words)!r}")


@pytest.mark.parametrize("command", SKIPPED, ids=_command_id)
def test_command_skipped(command):
    (rule,) = rules_for(command)
    program = shlex.split(command)[0]
    if program.startswith(".venv/bin/"):
        # Not run, but the program it names must be one the project's virtualenv installs.
        installed = Path(sys.executable).parent / program.removeprefix(".venv/bin/")
        assert installed.exists(), f"{command!r}: the virtualenv has no {installed.name}"
    pytest.skip(f"rule {rule.name!r}: {rule.skip}")


def snippets() -> list[tuple[str, str]]:
    """(page, code) for every ```python block of ``DOCS``, each code once (its first page)."""
    found: dict[str, str] = {}
    for page in DOCS:
        for code in fenced_blocks("python", page.read_text()):
            found.setdefault(code, page.name)
    return [(page, code) for code, page in found.items()]


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(("page", "snippet"), snippets(),
                         ids=[f"{page}:{i}" for i, (page, _) in enumerate(snippets())])
def test_python_snippet_runs(page, snippet, workdir):
    done = _run([sys.executable, "-c", snippet], workdir)
    _check(done, f"the snippet of {page}\n{snippet}")
    assert done.stdout.strip(), f"the snippet of {page} prints nothing when run as a script:\n{snippet}"


def test_every_page_has_commands_or_snippets():
    for page in DOCS:
        text = page.read_text()
        assert shell_commands(text) or fenced_blocks("python", text), f"{page.name} shows nothing to run"


# ------------------------------------------------------------------------------------------
# Links and dated figures


def heading_anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.MULTILINE | re.DOTALL)
    return {heading_anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)}


LINKED_PAGES = DOCS + [REPO / "docs" / name
                       for name in ("results.md", "architecture.md", "journal/README.md")]


def test_heading_anchor_is_githubs():
    assert heading_anchor("The default config (Soko heads-up)") == "the-default-config-soko-heads-up"
    assert heading_anchor("Speed: the evaluator and the envs") == "speed-the-evaluator-and-the-envs"
    assert heading_anchor("`make bench`") == "make-bench"


@pytest.mark.parametrize("page", LINKED_PAGES, ids=lambda p: p.name)
def test_links_resolve(page):
    """Every relative link names a file of the repository, and every #anchor a heading of it."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.MULTILINE | re.DOTALL)
    problems = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        name = file.relative_to(REPO).as_posix() if file.is_relative_to(REPO) else str(file)
        if not file.exists():
            if name not in PENDING:
                problems.append(f"{target}: no file {name}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            problems.append(f"{target}: no heading #{anchor} in {name}")
    assert not problems, f"{page.name}: " + "; ".join(problems)


DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b|\bsession \d+|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} \d+\b")


def test_no_dated_figures_in_readme_or_config_comments():
    """Measured figures with their dates live in docs/results.md; the README and the configs'
    comments link there."""
    problems = [f"README.md:{n}: {line.strip()}" for n, line in enumerate(README.read_text().splitlines(), 1)
                if DATED.search(line)]
    for config in sorted((REPO / "configs").glob("*.yaml")):
        for n, line in enumerate(config.read_text().splitlines(), 1):
            comment = line.partition("#")[2]
            if DATED.search(comment):
                problems.append(f"{config.name}:{n}: {line.strip()}")
    assert not problems, "dated figures outside docs/results.md:\n" + "\n".join(problems)


# ------------------------------------------------------------------------------------------
# What the pages say about errors


ERRORS = [
    # (what the pages promise, the command line after the interpreter)
    ("an unknown option", ["-m", "arena", "--bogus"]),
    ("an unknown agent", ["-m", "arena", "--agents", "tag", "bogus", "--hands", SMALL_HANDS]),
    ("a missing model", ["-m", "arena", "--agents", "ppo:missing.zip", "random", "--hands", SMALL_HANDS]),
    ("an unknown agent (exploitability)", ["-m", "arena.exploit", "--agent", "bogus"]),
    ("an unknown config key", ["train/ppo.py", "--config", SMOKE_CONFIG, "--set", "ppo.foo=1"]),
    ("a value of the wrong type", ["train/ppo.py", "--config", SMOKE_CONFIG, "--set", "ppo.n_envs=abc"]),
    ("a value out of range", ["train/ppo.py", "--config", SMOKE_CONFIG, "--set", "ppo.n_envs=0"]),
    ("an unknown option (training)", ["train/ppo.py", "--bogus"]),
]


def _one_line_exit_2(done: subprocess.CompletedProcess, what: str) -> None:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, f"{what}: exit {done.returncode}\n{done.stderr[-2000:]}"
    assert len(lines) == 1 and "Traceback" not in done.stderr, f"{what}: not one line:\n{done.stderr[-2000:]}"


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize(("what", "words"), ERRORS, ids=[what for what, _ in ERRORS])
def test_usage_errors_are_one_line_and_exit_2(what, words, workdir):
    """The README: usage errors print one line saying what was wrong and exit with code 2, and
    leave no run folder behind."""
    before = set((workdir / "runs").rglob("*")) if (workdir / "runs").exists() else set()
    _one_line_exit_2(_run([sys.executable, *words], workdir), what)
    after = set((workdir / "runs").rglob("*")) if (workdir / "runs").exists() else set()
    assert after == before, f"{what}: left {sorted(after - before)}"


@pytest.mark.timeout(2 * TIMEOUT)
def test_a_model_for_another_game_is_one_line_and_exit_2(workdir, runs):
    """docs/tournaments.md: a model trained for another game is refused before any hand."""
    model = runs.finished(0) / "final_model.zip"
    words = ["-m", "arena", "--game", "follow_the_bitch", "--agents", f"ppo:{model.relative_to(workdir)}",
             "random", "--hands", SMALL_HANDS, "--no-write"]
    _one_line_exit_2(_run([sys.executable, *words], workdir), "a Soko model in Follow the Bitch")
