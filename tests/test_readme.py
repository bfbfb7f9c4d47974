"""Every command and snippet in README.md runs as printed, so the README cannot drift.

Each line of a ```sh block must match exactly one rule in ``RULES``: it is either run (with
small stand-ins: ``--hands`` cut to a few hands, the smoke config in place of a training
config, a ``<time>`` run folder filled with a run this test made) or skipped for a stated
reason. A new command that matches no rule fails ``test_every_command_has_a_rule``. Each
```python block runs in a subprocess with this interpreter and must exit 0.

Only exit codes are checked, never output text (the tournament and training CLIs' wording
changes independently of the README). Commands run in a temporary folder that links the
repository's top-level folders, so their ``runs/`` outputs never land in the work tree.

Wall time on the 2-core machine: 33 s for the whole file with light other load, 42-75 s with
heavy load (2026-12-01). The slow tests are ``test_command_runs`` (a training run, a resume with
its own interrupted run, three tournaments: each subprocess imports torch); they carry a
``timeout`` mark so that a hang fails instead of stalling the suite.
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
SMOKE_CONFIG = "configs/smoke.yaml"
SMALL_HANDS = "24"  # a multiple of every seat rotation up to 4 players, and of the duplicate pair
TIMEOUT = 180       # seconds for one command: a hang fails instead of stalling the suite


# ------------------------------------------------------------------------------------------
# Reading the README


def fenced_blocks(language: str, text: str | None = None) -> list[str]:
    """The bodies of the README's ```language blocks, in order."""
    text = README.read_text() if text is None else text
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def shell_commands(text: str | None = None) -> list[str]:
    """Each command of the ```sh blocks as one line, comments dropped, continuations joined."""
    commands = []
    for block in fenced_blocks("sh", text):
        block = block.replace("\\\n", " ")
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(shlex.join(words))
    return commands


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
    Rule("tensorboard", r"tensorboard\b", skip="a server that runs until stopped"),
    Rule("training", r"\.venv/bin/python train/ppo\.py ", rewrite=_training),
    Rule("tournament", r"\.venv/bin/python -m arena ", rewrite=_tournament),
    Rule("exploitability of a baseline", r"\.venv/bin/python -m arena\.exploit .*--agent (random|call|raise|tag) "
                                         r"--method (exact|lbr)", rewrite=_tournament),
    Rule("learned best response", r"\.venv/bin/python -m arena\.exploit .*--method learned",
         skip="trains a model for minutes"),
    Rule("exploitability of a trained model", r"\.venv/bin/python -m arena\.exploit .*--agent '?ppo:",
         skip="needs a model trained on soko_mini, which the smoke runs are not"),
    Rule("benchmark", r"\.venv/bin/python bench/", skip="runs for minutes; `make bench QUICK=1` runs it"),
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
        """Placeholders replaced: `runs/X__sN__<time>/final_model.zip` by a finished smoke run
        of seed N, any other `runs/X__sN__<time>` by an interrupted one."""
        filled = []
        for word in words:
            def folder(m: re.Match, word=word) -> str:
                seed = int(m.group(1))
                needs_model = word[m.end():].startswith("/final_model.zip")
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
    pytest.skip(f"rule {rule.name!r}: {rule.skip}")


@pytest.mark.timeout(TIMEOUT)
@pytest.mark.parametrize("snippet", fenced_blocks("python"), ids=lambda s: s.splitlines()[0][:40])
def test_python_snippet_runs(snippet, workdir):
    _check(_run([sys.executable, "-c", snippet], workdir), f"the snippet\n{snippet}")
