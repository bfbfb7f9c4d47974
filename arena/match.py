"""One duplicate match: deals, seating rotations, seeding, the worker pool, the result.

**Duplicate deals.** A match's hands come in *groups*, one per deal: heads-up, the same deck
order is played twice with the agents' seats swapped; at a table of ``n``, it is played ``n``
times, once per rotation of the seating, so every agent holds every seat's cards (the button
stays on seat 0, and the deal follows the engine's order: passes from seat 1 clockwise). The
luck of the cards cancels within a group. In multi-way hands a fold changes who receives the
later cards (the engine deals only to active seats), so there the replay is exact only up to
the first fold. ``--no-duplicate`` keeps the same groups and seatings but gives every hand its
own deck, for comparison.

**Luck correction** (``--luck-correction``, on by default in games without wild cards). The
referee sees every card, so from each seat's result it subtracts, card by card, how much that
card moved the seat's equity share of the pot against the average over every card that could
have come there (``arena/luck.py``). Each term has mean zero whatever the agents do, so the
estimate stays unbiased, and the terms sum to zero over the seats; it removes the card luck
duplicate deals leave (when the agents play the same cards differently). For agents whose
action probabilities are known (``Agent.policy``: the random agent), each of their decisions
is corrected the same way, the value after the action taken against the policy's average over
the actions it could have taken, which removes the luck of their own coin flips. These terms,
kept apart per betting round along with the known policies' fold and raise coin flips, are
control variates: each match subtracts the combination of them that leaves the least variance,
its coefficients fitted by least squares on the other folds of groups (``arena.luck.control``;
with fewer than 20 groups per coefficient, every term is subtracted whole). The cross-table
and ranking use the corrected results; ``results.json`` keeps the raw ones too. How much
narrower the intervals get, and for how much CPU, is measured in docs/results.md.

**Reproducibility.** Deck orders and each agent's per-hand generator seed come from
``numpy.random.SeedSequence(seed, spawn_key=(match key, group))``, where the match key is a
CRC-32 of the agents' display names at the table (``agents.registry.display_name``: ``tag``, a
``ppo`` model's run folder, or ``name=...``), so a model gets the same deals whether its path is
written relative or absolute, as a folder or as its ``final_model.zip``; every hand is played
from scratch (agents are re-seeded by ``Agent.reset`` before each hand). In duplicate mode an
agent gets the same seed in every seating of a deal (common random numbers: the random agent's
coin flips are replayed too, which cancels more of its luck); with ``--no-duplicate`` every hand
has its own seeds. Work is split into chunks of groups for ``--workers`` processes, and results
are put back in group order, so the numbers are identical for any worker count.

Training evaluates checkpoints with :func:`play_match`:

>>> result = play_match("soko", ["call", "random"], hands=40, seed=1)
>>> result.hands, sorted(result.bb_per_100)
(40, ['call', 'random'])
"""

from __future__ import annotations

import io
import json
import math
import multiprocessing as mp
import os
import signal
import time
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from agents.base import Agent, choose_action
from agents.registry import bind_spec, canonical_spec, display_name, make_agent, parse_spec
from arena.batched_play import CHUNK_SLOTS, ENGINES, unsupported
from arena.luck import LuckCorrector, feature_count, value_columns
from arena.luck import control as luck_control
from arena.luck import warm_up as luck_warm_up
from arena.results import MatchResult
from arena.stats import mean_ci
from envs.actions import action_mask, apply_action
from envs.engine.game import Game
from envs.engine.phh import to_phh
from envs.engine.rules import Rules, get_rules

__all__ = ["MatchResult", "MatchPlan", "Seat", "play_match", "play_matches", "match_result", "settle_engine",
           "seat_agents", "worker_count"]


@dataclass(frozen=True)
class MatchPlan:
    """A match to play (:func:`play_matches`): its place in the list, who sits at the table."""

    index: int
    names: tuple[str, ...]       # agent labels in table order (position i): the result keys
    seed_names: tuple[str, ...]  # their display names (agents.registry.display_name), same order

    @property
    def key(self) -> int:
        """The match's seed key: a CRC-32 of the display names at the table, so the deals do
        not depend on how a ``ppo`` path is spelt (relative or absolute, folder or zip)."""
        return zlib.crc32("|".join(self.seed_names).encode())


class _Runner:
    """Plays groups of hands for any match; one per process."""

    def __init__(self, rules: Rules, num_players: int, agents: dict[str, Any], *, seed: int,
                 duplicate: bool, histories: int, luck: bool = False, engine: str = "reference",
                 threads: int = 1) -> None:
        self.rules = rules
        self.engine = engine   # "reference" or "batched" (play_matches settles "auto")
        self.threads = threads  # the core's threads per batch (engine "batched")
        self.n = num_players
        self.agents = {name: make_agent(a) for name, a in agents.items()}
        self.seed = seed
        self.duplicate = duplicate
        self.histories = histories
        self.luck = LuckCorrector(rules) if luck else None

    def play(self, match: MatchPlan, g0: int, g1: int
             ) -> tuple[np.ndarray, np.ndarray | None, list[tuple[int, str, str]]]:
        """Chips won per (group, rotation, position) for groups g0..g1-1, each position's luck
        features (``LuckCorrector.features``) averaged over the group's hands, (group, position,
        column), or None without the luck correction, and hand histories (hand, text, PHH)."""
        n = self.n
        agents = [self.agents[name] for name in match.names]
        chips = np.zeros((g1 - g0, n, n), dtype=np.int64)
        luck = None
        if self.luck is not None:
            luck = np.zeros((g1 - g0, n, feature_count(self.rules)))
        stories: list[tuple[int, str, str]] = []
        if self.engine == "batched":
            return self._play_batched(match, agents, g0, g1, luck, stories)
        for g in range(g0, g1):
            decks, agent_seeds = group_deal(self.rules, n, self.seed, match.key, g, self.duplicate)
            for r in range(n):
                # Rotation r: the agent at table position i sits in seat (i + r) % n.
                seating = _seating(agents, r)
                for i, agent in enumerate(agents):
                    agent.reset(int(agent_seeds[r, i]))
                game = Game(self.rules, n, deck=decks[r], button=0, seed=0)
                while game.current_player is not None:
                    agent = seating[game.current_player]
                    apply_action(game, choose_action(agent, game, action_mask(game)))
                for i in range(n):
                    chips[g - g0, r, i] = game.payoffs[(i + r) % n]
                self._record(match, game, seating, g, r, luck, g - g0, stories)
        return chips, luck, stories

    def _record(self, match: MatchPlan, game: Game, seating: list, g: int, r: int,
                luck: np.ndarray | None, row: int, stories: list) -> None:
        """A finished hand's luck features (added to ``luck[row]``) and its history, if kept."""
        n = self.n
        if luck is not None:
            # Duplicate: the terms of cards dealt before anyone acts cancel over the group.
            # Agents whose policy is known also get decision and coin-flip terms.
            features = self.luck.features(game, from_first_action=self.duplicate,
                                          policies=[_known_policy(a) for a in seating])
            luck[row] += features[(np.arange(n) + r) % n] / n
        hand = g * n + r
        if hand < self.histories:
            stories.append((hand, _history(match, game, g, r, hand, self.duplicate),
                            _phh(match, game, g, r, hand, self.duplicate)))

    def _play_batched(self, match: MatchPlan, agents: list, g0: int, g1: int,
                      luck: np.ndarray | None, stories: list
                      ) -> tuple[np.ndarray, np.ndarray | None, list[tuple[int, str, str]]]:
        """:meth:`play` on the compiled core (``arena/batched_play.py``): the same deals and
        seeds. For the luck correction and the histories, each hand's actions are replayed on a
        reference ``Game`` of its deck (no agent decides again)."""
        from arena.batched_play import play_groups

        n = self.n
        deals = [group_deal(self.rules, n, self.seed, match.key, g, self.duplicate)
                 for g in range(g0, g1)]
        key = np.random.SeedSequence(self.seed, spawn_key=(match.key, g0, g1))
        rng, *streams = [np.random.default_rng(s) for s in key.spawn(n + 1)]
        replay = luck is not None or g0 * n < self.histories
        logs: list | None = [] if replay else None
        chips = play_groups(self.rules, agents, deals, rng, streams, logs=logs, threads=self.threads)
        if logs is None:
            return chips, luck, stories

        def replay(groups: range) -> tuple[np.ndarray | None, list]:
            part = None if luck is None else np.zeros((len(groups), n, luck.shape[2]))
            told: list = []
            for row, g in enumerate(groups):
                for r in range(n):
                    if luck is None and g * n + r >= self.histories:
                        break
                    game = Game(self.rules, n, deck=deals[g - g0][0][r], button=0, seed=0)
                    for action in logs[(g - g0) * n + r]:
                        apply_action(game, action)
                    if game.current_player is not None or any(
                            game.payoffs[(i + r) % n] != chips[g - g0, r, i] for i in range(n)):
                        raise RuntimeError(f"hand {g * n + r + 1}: the core's actions do not replay to "
                                           "its result on the reference engine")
                    self._record(match, game, _seating(agents, r), g, r, part, row, told)
            return part, told

        # The replay is Python on one core; the chunk's spare cores (threads > 1) sat idle in it,
        # so with the luck correction they replay their share of the groups in forked processes.
        ways = self.threads if luck is not None and (g1 - g0) * n >= FORK_REPLAY_HANDS else 1
        parts = [range(g0 + (g1 - g0) * w // ways, g0 + (g1 - g0) * (w + 1) // ways) for w in range(ways)]
        parts = [p for p in parts if len(p)]
        for groups, (part, told) in zip(parts, _in_forks(replay, parts)):
            if luck is not None:
                luck[groups.start - g0:groups.stop - g0] = part
            stories.extend(told)
        return chips, luck, stories


FORK_REPLAY_HANDS = 256
"""Hands of a chunk below which its replay stays in one process (a fork costs milliseconds)."""


def _in_forks(work, parts: list) -> list[tuple[np.ndarray | None, list]]:
    """``[work(p) for p in parts]``, each part after the first in a forked child process while
    this one does the first. ``work`` returns (an array or None, a list of ``(hand, text, phh)``);
    they come back as NumPy's format and JSON (no pickle). An exception in a child is raised here
    as a RuntimeError with its message. Without ``os.fork``, every part here."""
    if len(parts) < 2 or not hasattr(os, "fork"):
        return [work(p) for p in parts]
    children = []
    for part in parts[1:]:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:   # the child: its part, written to the pipe, then out without cleanup
            status = 1
            try:
                os.close(read)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                array, told = work(part)
                buffer = io.BytesIO()
                np.save(buffer, np.zeros(0) if array is None else array, allow_pickle=False)
                payload = b"A" + len(buffer.getvalue()).to_bytes(8, "little") + buffer.getvalue()
                payload += json.dumps([array is None, told]).encode()
                status = 0
            except BaseException as exc:   # noqa: BLE001 (told to the parent, whatever it is)
                payload = b"E" + (str(exc) or type(exc).__name__).encode()
            finally:
                try:
                    with os.fdopen(write, "wb") as out:
                        out.write(payload)
                finally:
                    os._exit(status)
        os.close(write)
        children.append((pid, read))
    try:
        results = [work(parts[0])]
    finally:
        answers = []
        for pid, read in children:
            with os.fdopen(read, "rb") as pipe:
                answers.append(pipe.read())
            os.waitpid(pid, 0)
    for answer in answers:
        if answer[:1] != b"A":
            raise RuntimeError(answer[1:].decode(errors="replace") or "a replay process ended with no answer")
        size = int.from_bytes(answer[1:9], "little")
        array = np.load(io.BytesIO(answer[9:9 + size]), allow_pickle=False)
        none, told = json.loads(answer[9 + size:])
        results.append((None if none else array, [tuple(t) for t in told]))
    return results


def _seating(agents: list, r: int) -> list:
    """Rotation ``r``'s agent by seat: the agent at table position ``i`` sits in seat ``(i + r) % n``."""
    n = len(agents)
    seating = [None] * n
    for i, agent in enumerate(agents):
        seating[(i + r) % n] = agent
    return seating


def group_deal(rules: Rules, n: int, seed: int, key: int, group: int, duplicate: bool
               ) -> tuple[list[list], np.ndarray]:
    """Group ``group``'s decks (one per rotation, all the same in duplicate mode) and agent
    seeds ``[rotation, position]``, from ``SeedSequence(seed, spawn_key=(key, group))``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key, group)))
    cards = rules.deck  # in index order: for the 52-card deck, card i is i
    if duplicate:
        decks = [[cards[i] for i in rng.permutation(len(cards)).tolist()]] * n
    else:
        decks = [[cards[i] for i in rng.permutation(len(cards)).tolist()] for _ in range(n)]
    # Duplicate: an agent draws the same random stream in every seating of a deal (common
    # random numbers); no duplicate: a fresh stream for every hand.
    agent_seeds = rng.integers(0, 2 ** 63, size=(n, n))
    if duplicate:
        agent_seeds[:] = agent_seeds[0]
    return decks, agent_seeds


def _known_policy(agent):
    """``agent.policy`` when the agent draws its actions from it (``Agent.randomises``) and its
    class defines one (``Agent.policy`` says "not known"); deterministic agents' one-hot
    policies would only add zero terms and cost time."""
    method = getattr(type(agent), "policy", None)
    if method is None or method is Agent.policy or not getattr(agent, "randomises", False):
        return None
    return agent.policy


def _history(match: MatchPlan, game: Game, group: int, rotation: int, hand: int, duplicate: bool) -> str:
    n = game.num_players
    seats = ", ".join(f"seat {(i + rotation) % n}: {name}" for i, name in sorted(
        enumerate(match.names), key=lambda x: (x[0] + rotation) % n))
    deal = f"deal {group + 1} ({'duplicate' if duplicate else 'own deck'}), seating {rotation + 1} of {n}"
    result = ", ".join(f"seat {s} {p:+d}" for s, p in enumerate(game.payoffs))
    return (f"### Hand {hand + 1}: {' vs '.join(match.names)}; {deal}\n"
            f"Seats: {seats}\n{game.history()}\nResult: {result}\n")


def _phh(match: MatchPlan, game: Game, group: int, rotation: int, hand: int, duplicate: bool) -> str:
    """The hand in PHH (envs/engine/phh.py), the agents' names as its players."""
    n = game.num_players
    players = [match.names[(seat - rotation) % n] for seat in range(n)]
    return to_phh(game, hand_id=hand + 1, players=players, event=" vs ".join(match.names),
                  _deal=group + 1, _seating=rotation + 1, _duplicate=duplicate)


_WORKER: _Runner | None = None


def _init_worker(args: tuple) -> None:
    global _WORKER
    # A forked worker inherits the parent's signal handlers: one that only sets a flag (a web
    # server's, a library's) would keep a worker blocked on the pool's queue lock alive through
    # Pool.terminate, and the match would wait for it forever.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # Ctrl-C reaches the whole process group: the parent stops the pool (and says so once); a
    # worker that took it too would print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rules, n, agents, kwargs = args
    # champion: specs are ppo models too. A forked child that runs a torch op on the thread pool
    # its parent started (the core engine's check loads the models there) waits forever.
    if any(not isinstance(a, str) or a.strip().startswith(("ppo", "champion")) for a in agents.values()):
        try:  # one thread per worker process: the workers already use every core
            import torch

            torch.set_num_threads(1)
            from agents.trained import limit_blas_threads

            limit_blas_threads(1)
        except ImportError:
            pass
    _WORKER = _Runner(rules, n, agents, **kwargs)


def _work(task: tuple[MatchPlan, int, int]) -> tuple[int, int, np.ndarray, np.ndarray | None, list]:
    match, g0, g1 = task
    chips, luck, stories = _WORKER.play(match, g0, g1)
    return match.index, g0, chips, luck, stories


def play_matches(rules: Rules, n: int, agents: dict[str, Any], matches: list[MatchPlan], groups: int, *,
                 seed: int, duplicate: bool, workers: int, histories: int, progress: bool,
                 luck: bool = False, desc: str = "hands", ray: str | None = None, actors: int = 0,
                 engine: str = "reference"
                 ) -> tuple[list[np.ndarray], list[np.ndarray] | None, list[list[tuple[str, str]]], float]:
    """Chips (groups, rotations, positions) per match, luck features (groups, positions,
    columns) per match (None without the luck correction), histories (text, PHH) per match,
    seconds of play. ``ray``: play the chunks on Ray actors (``arena.cluster``; "" for a local Ray
    instance, else a cluster's address), one per cluster CPU, instead of ``workers`` processes
    (``actors``: that many actors of the cluster this process is connected to). ``engine``:
    ``"reference"`` plays every hand on a reference ``Game``, ``"batched"`` every chunk of hands
    at once on the compiled core (``arena/batched_play.py``: the same deals; a ValueError saying
    why when these agents or options cannot), ``"auto"`` the core when it can."""
    engine = settle_engine(engine, rules, n, agents)
    if ray is not None:
        from arena import cluster

        for agent in agents.values():   # a clear error before any Ray start
            cluster.agent_recipe(agent)
        started = cluster.connect(ray)
        try:
            return play_matches(rules, n, agents, matches, groups, seed=seed, duplicate=duplicate,
                                workers=1, histories=histories, progress=progress, luck=luck, desc=desc,
                                actors=cluster.cluster_cpus(), engine=engine)
        finally:
            if started:
                import ray as ray_module

                ray_module.shutdown()
    on_ray = actors > 0
    for agent in agents.values() if not on_ray else ():  # shared lookup tables, built before any fork
        warm = getattr(make_agent(agent), "warm_up", None)
        if warm is not None:
            warm(rules)
    if on_ray:
        workers = actors   # the chunks are sized as for that many processes (each actor warms up)
    elif luck and workers > 1:  # single-process runs build what they need as they go
        luck_warm_up(rules)
    kwargs = dict(seed=seed, duplicate=duplicate, histories=histories, luck=luck, engine=engine)
    if engine == "batched":   # chunks of a fixed size: the core's draws do not depend on workers
        per_chunk = max(1, CHUNK_SLOTS // n)
    else:
        per_chunk = max(1, min(250, math.ceil(groups * len(matches) / max(1, workers) / 16)))
    tasks = [(m, g0, min(groups, g0 + per_chunk)) for m in matches for g0 in range(0, groups, per_chunk)]
    if engine == "batched" and not on_ray and len(tasks) < workers:
        # Fewer chunks than processes: each chunk's core game splits its hands over the spare
        # cores instead (the values do not depend on the split; envs.batched.BatchedGame).
        kwargs["threads"] = workers // len(tasks)
        workers = len(tasks)
    elif not on_ray:
        workers = min(workers, len(tasks))   # no process without a chunk to play
    chips = [np.zeros((groups, n, n), dtype=np.int64) for _ in matches]
    features = [np.zeros((groups, n, feature_count(rules))) for _ in matches] if luck else None
    stories: list[list[tuple[int, str, str]]] = [[] for _ in matches]
    total = groups * n * len(matches)
    from tqdm import tqdm

    bar = None
    start = time.perf_counter()

    def collect(result):
        index, g0, part, feats, hands = result
        chips[index][g0:g0 + len(part)] = part
        if features is not None:
            features[index][g0:g0 + len(part)] = feats
        stories[index].extend(hands)
        if bar is not None:
            bar.update(len(part) * n)

    if on_ray:
        from arena import cluster

        bar = tqdm(total=total, unit="hand", desc=desc, disable=not progress, smoothing=0.1)
        cluster.play_chunks(_Runner, rules, n, agents, kwargs, tasks, collect, actors=workers)
    elif workers <= 1:
        runner = _Runner(rules, n, agents, **kwargs)
        bar = tqdm(total=total, unit="hand", desc=desc, disable=not progress, smoothing=0.1)
        for m, g0, g1 in tasks:
            collect((m.index, g0, *runner.play(m, g0, g1)))
    else:
        methods = mp.get_all_start_methods()
        ctx = mp.get_context("fork" if "fork" in methods else "spawn")
        with ctx.Pool(workers, initializer=_init_worker, initargs=((rules, n, agents, kwargs),)) as pool:
            bar = tqdm(total=total, unit="hand", desc=desc, disable=not progress, smoothing=0.1)
            for result in pool.imap_unordered(_work, tasks):
                collect(result)
    seconds = time.perf_counter() - start
    bar.close()
    texts = [[(text, phh) for _, text, phh in sorted(s)] for s in stories]
    return chips, features, texts, seconds



def settle_engine(engine: str, rules: Rules, n: int, agents: dict[str, Any]) -> str:
    """``"reference"`` or ``"batched"`` for ``engine`` (``"auto"``: the core when it can)."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if engine == "reference":
        return engine
    reason = unsupported([make_agent(a) for a in agents.values()], rules, n)
    if reason and engine == "batched":
        raise ValueError(f"engine 'batched': {reason}")
    return "reference" if reason else "batched"


def match_result(names: tuple[str, ...], chips: np.ndarray, features: np.ndarray | None, rules: Rules,
                  stories: list[tuple[str, str]], seconds: float) -> MatchResult:
    """``features``: the luck features per (group, position, column), or None when the luck
    correction is off; ``stories``: (text, PHH) of each hand kept."""
    groups, rotations, _ = chips.shape
    texts = [text for text, _ in stories]
    phh = [p for _, p in stories]
    big_bet = rules.big_bet

    def estimate(values, fitted=0):
        return {name: mean_ci(values[:, i], fitted=fitted).scaled(100.0) for i, name in enumerate(names)}

    raw_values = chips.mean(axis=1) / big_bet  # group means in big bets per hand
    if features is None:
        return MatchResult(names, groups * rotations, groups, big_bet, raw_values, estimate(raw_values),
                           texts, seconds, phh_histories=phh)
    values, fitted = luck_control(raw_values, features / big_bet, value_columns(rules))
    return MatchResult(names, groups * rotations, groups, big_bet, values, estimate(values, fitted), texts,
                       seconds, True, raw_values, estimate(raw_values), fitted, phh_histories=phh)


@dataclass(frozen=True)
class Seat:
    """One agent of a match or tournament: ``label`` keys its results, ``name`` is its display
    name (the seed key), ``spec`` what was asked for, ``canonical`` one spelling per agent."""

    label: str
    name: str
    spec: str | Agent
    canonical: str


def _number(base: str, taken) -> str:
    name, k = base, 2
    while name in taken:
        name, k = f"{base}#{k}", k + 1
    return name


def seat_agents(specs: Sequence[str | Agent], *, label_by_spec: bool = False, rules: Rules | None = None
           ) -> list[Seat]:
    """The agents with their names. The same agent given twice (the same canonical spec: a
    relative and an absolute path are the same) is numbered ``tag``, ``tag#2``; two different
    agents with the same display name are a ValueError. ``label_by_spec``: results keyed by the
    spec strings as given (``play_match``, for training's evaluation), else by display name.
    ``rules``: a bare ``champion`` plays as this game's (``agents.registry.bind_spec``)."""
    seats: list[Seat] = []
    owner: dict[str, str] = {}   # display name -> canonical spec
    for given in specs:
        spec = bind_spec(given, rules, len(specs)) if rules is not None else given
        if isinstance(spec, str):
            canonical = canonical_spec(spec)  # a clear error for a bad spec before any work
        else:
            canonical = f"object:{id(spec)}"
        base = display_name(spec)
        if owner.setdefault(base, canonical) != canonical and not label_by_spec:
            first = next(s.spec for s in seats if s.name == base)
            hint = ("give them different name=..." if "name" in parse_spec(spec)[1]
                    else f"tell them apart with name=..., e.g. {spec.strip()},name={base}-2")
            raise ValueError(f"agents {first!r} and {spec!r} are both named {base!r}; {hint}")
        name = _number(base, {s.name for s in seats})
        label = (_number(given.strip(), {s.label for s in seats})
                 if label_by_spec and isinstance(given, str) else name)
        seats.append(Seat(label, name, spec, canonical))
    return seats


def worker_count(workers: int) -> int:
    """The processes ``--workers`` asks for: 0 (or less) means one per core."""
    return workers if workers and workers > 0 else (os.cpu_count() or 1)


def play_match(rules: Rules | str, agents: Sequence[str | Agent], *, hands: int, seed: int = 0,
               duplicate: bool = True, luck_correction: bool = False, workers: int = 1,
               histories: int = 0, progress: bool = False, ray: str | None = None,
               engine: str = "reference", **rule_overrides) -> MatchResult:
    """Play one duplicate match: heads-up for two agents, one table of ``len(agents)`` seats
    otherwise, ``hands`` hands (rounded up to whole groups). Agents are spec strings or
    :class:`Agent` objects (picklable ones when ``workers > 1``).

    Training uses this to evaluate a checkpoint: ``play_match("soko", ["ppo:runs/x/model.zip",
    "tag"], hands=2000).estimates["ppo:runs/x/model.zip"]``: results are keyed by the specs as
    given, the deals by the display names (as in a tournament). ``luck_correction=True``
    subtracts the luck of the cards and of known policies' coin flips (``arena/luck.py``;
    narrower intervals for more CPU per hand, see docs/results.md; ``raw_estimates`` keeps the
    plain numbers, ``luck_fitted`` says how many coefficients were fitted). It is off here by
    default so that training's periodic evaluations keep their cost; tournaments turn it on.
    ``ray``: play on Ray actors instead (``arena.cluster``: "" for a local Ray instance, or a
    cluster's address; agents must be specs or agents made from one); the same results.
    ``engine="batched"`` plays every hand of a chunk at once on the compiled core, ``"auto"``
    there when the agents can (``arena/batched_play.py``: the same deals and seatings; the same
    results for deterministic agents, other random draws for the others; the luck correction
    and histories from each hand's actions replayed on a reference ``Game``).
    """
    rules = get_rules(rules, **rule_overrides)
    seats = seat_agents(agents, label_by_spec=True, rules=rules)
    n = len(seats)
    groups = max(1, math.ceil(hands / n))
    match = MatchPlan(0, tuple(s.label for s in seats), tuple(s.name for s in seats))
    chips, features, texts, seconds = play_matches(
        rules, n, {s.label: s.spec for s in seats}, [match], groups, seed=seed, duplicate=duplicate,
        workers=worker_count(workers), histories=histories, progress=progress, luck=luck_correction, ray=ray,
        engine=engine)
    return match_result(match.names, chips[0], features[0] if luck_correction else None,
                         rules, texts[0], seconds)
