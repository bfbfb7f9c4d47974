"""Environment throughput: uniformly random legal play through the PettingZoo envs.

Runs, in one process and interleaved in short slices (so a busy machine slows every env
alike), the same loop through:

- ``soko_v0`` with 2 and 6 players,
- ``follow_the_bitch_v0`` with 2 and 6 players, Low Chicago on,
- PettingZoo's ``texas_holdem_v4`` with 2 and 6 players (the reference),

ours each on the compiled core (``engine="core"``, the default) and on the reference engine
(``engine="reference"``, the rows marked "reference"),

each created by its ``env()`` (PettingZoo's standard wrappers, observations included), and
prints agent-steps a second (iterations of ``agent_iter``, the end-of-hand steps included),
hands a second and our ratios to ``texas_holdem_v4``. Then the single-agent view's learner
steps a second against a random opponent, and diagnostics that split the cost: the same
loop through the raw env (no wrappers), a do-nothing AEC env through the same three
wrappers (the wrappers' own cost), and the bare engine (``Game`` and ``envs.actions``).

    .venv/bin/python bench/env_throughput.py [--seconds 4] [--rounds 8] [--quick]

Targets (issues #3 and #14): soko_v0 heads-up at least 5x texas_holdem_v4's agent-steps a
second, follow_the_bitch_v0 heads-up at least 3x (on the default engine, the core).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import types

import numpy as np
import quick_option  # bench/quick_option.py (this folder is on sys.path for a script)

from envs import SingleAgentEnv, follow_the_bitch_v0, soko_v0
from envs.actions import action_mask, apply_action
from envs.engine.game import Game
from envs.stud_env import ENGINES, ActionSpace, MirroredAECEnv, wrap_env


def texas_holdem_v4():
    """PettingZoo's texas_holdem_v4; its module imports pygame for rendering only, so a stub
    stands in when pygame is not installed (the benchmark never renders)."""
    try:
        import pygame  # noqa: F401
    except ImportError:
        stub = types.ModuleType("pygame")
        stub.__getattr__ = lambda name: stub  # any attribute, e.g. pygame.font.Font in annotations
        sys.modules["pygame"] = stub
    from pettingzoo.classic import texas_holdem_v4 as module
    return module


# ----------------------------------------------------------------------------------------
# The loops


def play_aec(env, seconds: float, rng: random.Random) -> tuple[int, int, float]:
    """Random legal play: (agent-steps, hands, seconds)."""
    steps = hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        env.reset()
        for agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = [i for i, ok in enumerate(obs["action_mask"].tolist()) if ok]
                action = rng.choice(legal)
            env.step(action)
            steps += 1
        hands += 1
    return steps, hands, time.perf_counter() - start


def play_single_agent(env, seconds: float, rng: random.Random) -> tuple[int, int, float]:
    """Random legal play of the learner: (learner steps, hands, seconds)."""
    steps = hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        env.reset()
        done = False
        while not done:
            legal = [i for i, ok in enumerate(env.action_masks().tolist()) if ok]
            _, _, done, _, _ = env.step(rng.choice(legal))
            steps += 1
        hands += 1
    return steps, hands, time.perf_counter() - start


class EngineOnly:
    """The bare engine with the same random choice: (decisions, hands, seconds)."""

    def __init__(self, rules: str, num_players: int, seed: int) -> None:
        self.rules, self.num_players = rules, num_players
        self.generator = np.random.default_rng(seed)

    def play(self, seconds: float, rng: random.Random) -> tuple[int, int, float]:
        steps = hands = 0
        start = time.perf_counter()
        deadline = start + seconds
        while time.perf_counter() < deadline:
            game = Game(self.rules, self.num_players, button=hands % self.num_players, seed=self.generator)
            while not game.is_over:
                legal = [i for i, ok in enumerate(action_mask(game).tolist()) if ok]
                apply_action(game, rng.choice(legal))
                steps += 1
            hands += 1
        return steps, hands, time.perf_counter() - start


def null_aec_env():
    """A do-nothing two-player AEC env (five decisions a hand, constant observation) built like
    ours (mirrored attributes, the same action space) in PettingZoo's standard wrappers: what
    the wrappers and the loop cost by themselves, the floor under any env of ours."""
    from gymnasium import spaces

    class NullEnv(MirroredAECEnv):
        metadata = {"name": "null_v0", "render_modes": []}

        def __init__(self):
            super().__init__()
            self.possible_agents = ["player_0", "player_1"]
            self.observation_spaces = {a: spaces.Dict({
                "observation": spaces.Box(0, 1, (8,), np.float32),
                "action_mask": spaces.Box(0, 1, (3,), np.int8)}) for a in self.possible_agents}
            self.action_spaces = {a: ActionSpace(3) for a in self.possible_agents}

        def observation_space(self, agent):
            return self.observation_spaces[agent]

        def action_space(self, agent):
            return self.action_spaces[agent]

        def reset(self, seed=None, options=None):
            self._start_agents()
            self.agent_selection = "player_0"
            self.decisions = 0
            self.zeros, self.ones = np.zeros(8, np.float32), np.ones(3, np.int8)

        def observe(self, agent):
            return {"observation": self.zeros.copy(), "action_mask": self.ones.copy()}

        def step(self, action):
            if self.terminations[self.agent_selection]:
                self._was_dead_step(action)
                return
            self.decisions += 1
            if self.decisions == 5:
                self.terminations = dict.fromkeys(self.agents, True)
                self._deads_step_first()
            else:
                self.agent_selection = self.possible_agents[self.decisions % 2]

        def render(self):
            return None

        def close(self):
            pass

    return wrap_env(NullEnv())


# ----------------------------------------------------------------------------------------


# `--quick` (bench/quick_option.py): these options.
QUICK = {"seconds": 0.5, "rounds": 2}


def main(argv: list[str] | None = None) -> dict[str, tuple[float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds of play per env (total)")
    parser.add_argument("--rounds", type=int, default=8, help="interleaved slices per env")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-diagnostics", action="store_true", help="skip the cost-split rows")
    args = quick_option.parse_args(parser, QUICK, argv)

    texas = texas_holdem_v4()
    runs: dict[str, tuple] = {}

    def aec(name, env):
        env.reset(seed=args.seed)
        runs[name] = ("agent-steps", play_aec, env)

    for players in (2, 6):
        aec(f"texas_holdem_v4 {players}p", texas.env(num_players=players))
        for engine in ENGINES:
            tag = "" if engine == "core" else " reference"
            aec(f"soko_v0 {players}p{tag}", soko_v0.env(num_players=players, engine=engine))
            aec(f"follow_the_bitch_v0 {players}p LC{tag}",
                follow_the_bitch_v0.env(num_players=players, low_chicago=True, engine=engine))
    for name, game in (("single-agent soko 2p", "soko"), ("single-agent ftb 2p LC", "follow_the_bitch")):
        env = SingleAgentEnv(game, num_players=2, **({"low_chicago": True} if game != "soko" else {}))
        env.reset(seed=args.seed)
        runs[name] = ("learner steps", play_single_agent, env)
    if not args.no_diagnostics:
        aec("diag: soko_v0 2p raw_env", soko_v0.raw_env(num_players=2))
        aec("diag: ftb_v0 2p LC raw_env", follow_the_bitch_v0.raw_env(num_players=2, low_chicago=True))
        aec("diag: soko_v0 2p raw ref.", soko_v0.raw_env(num_players=2, engine="reference"))
        aec("diag: null env + wrappers", null_aec_env())
        for name, rules in (("diag: engine soko 2p", "soko"),
                            ("diag: engine ftb 2p LC", "follow_the_bitch_low_chicago")):
            runs[name] = ("decisions", lambda engine, seconds, rng: engine.play(seconds, rng),
                          EngineOnly(rules, 2, args.seed))

    totals = {name: [0, 0, 0.0] for name in runs}
    rng = random.Random(args.seed)
    for _ in range(args.rounds):
        for name, (_, loop, env) in runs.items():
            steps, hands, seconds = loop(env, args.seconds / args.rounds, rng)
            totals[name][0] += steps
            totals[name][1] += hands
            totals[name][2] += seconds

    rates = {name: (s / t, h / t) for name, (s, h, t) in totals.items()}
    print(f"Random legal play, {args.seconds:g} s per env in {args.rounds} interleaved slices "
          f"(python {sys.version.split()[0]}, numpy {np.__version__})")
    print(f"{'env':<38}{'steps/s':>11}  {'unit':<14}{'hands/s':>9}  {'us/hand':>8}  {'vs texas':>8}")
    for name, (steps, hands) in rates.items():
        unit = runs[name][0]
        players = "6p" if " 6p" in name else "2p"
        ref = rates[f"texas_holdem_v4 {players}"][0]
        ratio = f"{steps / ref:7.2f}x" if unit == "agent-steps" and not name.startswith("texas") else ""
        print(f"{name:<38}{steps:>11,.0f}  {unit:<14}{hands:>9,.0f}  {1e6 / hands:>8,.0f}  {ratio:>8}")
    print()
    if not args.no_diagnostics:
        # Where a soko_v0 hand's time goes: the wrappers and loop (the null env's cost per step
        # times soko's steps per hand), the bare reference engine, and the rest (observations,
        # env code); on the core, the wrappers and loop and everything else.
        floor_step = 1e6 / rates["diag: null env + wrappers"][0]
        steps_per_hand = rates["soko_v0 2p reference"][0] / rates["soko_v0 2p reference"][1]
        total = 1e6 / rates["soko_v0 2p reference"][1]
        floor = floor_step * steps_per_hand
        engine = 1e6 / rates["diag: engine soko 2p"][1]
        print(f"soko_v0 2p reference, per hand ({steps_per_hand:.1f} agent-steps): {total:.0f} us = wrappers "
              f"and loop {floor:.0f} + engine {engine:.0f} + observations and env code "
              f"{total - floor - engine:.0f}")
        steps_per_hand = rates["soko_v0 2p"][0] / rates["soko_v0 2p"][1]
        total = 1e6 / rates["soko_v0 2p"][1]
        floor = floor_step * steps_per_hand
        print(f"soko_v0 2p core, per hand ({steps_per_hand:.1f} agent-steps): {total:.0f} us = wrappers "
              f"and loop {floor:.0f} + core, observations and env code {total - floor:.0f}")
        best = rates["diag: null env + wrappers"][0] / rates["texas_holdem_v4 2p"][0]
        print(f"a do-nothing env through the same wrappers and loop: {best:.2f}x texas_holdem_v4 2p")
        print()
    for name, target in (("soko_v0 2p", 5.0), ("follow_the_bitch_v0 2p LC", 3.0)):
        ratio = rates[name][0] / rates["texas_holdem_v4 2p"][0]
        verdict = "met" if ratio >= target else "NOT met"
        print(f"target {name} (core): >= {target:g}x texas_holdem_v4 2p agent-steps/s: {ratio:.2f}x "
              f"({verdict})")
    return rates


if __name__ == "__main__":
    main()
