"""The engine stays pure: it imports with gymnasium, pettingzoo and torch blocked (STYLE.md)."""

import subprocess
import sys
import textwrap


def test_engine_imports_without_rl_frameworks():
    code = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {"gymnasium", "gym", "pettingzoo", "torch",
                                          "stable_baselines3", "sb3_contrib"}:
                    raise ImportError("blocked: " + name)
                return None
        sys.meta_path.insert(0, Block())
        import envs.engine.cards, envs.engine.hands, envs.engine.rules, envs.engine.game, envs.engine.phh
        import envs.actions
        from envs.engine.game import Game
        g = Game("follow_the_bitch_low_chicago", 3, seed=1)
        while not g.is_over:
            g.check_or_call()
        assert sum(g.payoffs) == 0
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_layers_import_one_way():
    """train -> arena -> agents -> envs: agents import neither arena nor train, arena never train."""
    code = textwrap.dedent(
        """
        import sys
        class Block:
            def __init__(self, names):
                self.names = names
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in self.names:
                    raise ImportError("blocked: " + name)
                return None
        block = Block({"arena", "train"})
        sys.meta_path.insert(0, block)
        import agents.base, agents.equity, agents.heuristic, agents.networks, agents.registry, agents.trained
        block.names = {"train"}
        import arena.luck, arena.match, arena.report, arena.stats, arena.tournament
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
