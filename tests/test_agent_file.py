"""Agent files (agents/agent_file.py): safe to load from anyone, refused in one line when wrong,
and the same player as the SB3 model they were written from.

A crafted SB3 zip carries a pickle that creates a file when unpickled (in its ``data`` entry,
as cloudpickle blobs, and in its ``policy.pth``). ``MaskablePPO.load`` runs it (the test that
proves the crafted file is dangerous); every public path of this project (the tournament CLI,
``play_match``, a training opponent, the exploitability CLI) never creates the file.
"""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.agent_file import AgentFileError, check_model, load_policy, model_info, save_agent_file
from agents.registry import check_spec
from envs.engine.rules import get_rules

REPO = Path(__file__).resolve().parent.parent


class _CreatesFile:
    """Unpickled, it opens (and so creates) ``path``: what a hostile model file could do."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.fixture(scope="module")
def soko_zip(tmp_path_factory):
    """A freshly initialised Soko MaskablePPO model saved as SB3 does (no run folder)."""
    from sb3_contrib import MaskablePPO

    from envs.single_agent import SingleAgentEnv

    root = tmp_path_factory.mktemp("models")
    model = MaskablePPO("MlpPolicy", SingleAgentEnv("soko", num_players=2), n_steps=64, batch_size=32,
                        seed=0, device="cpu", policy_kwargs={"net_arch": [8]})
    model.save(str(root / "model.zip"))
    return root / "model.zip"


def _craft(source: Path, out: Path, marker: Path, *, where: str) -> Path:
    """A copy of ``source`` whose pickled parts create ``marker``: ``data`` (every cloudpickle
    blob of the JSON entry) or ``policy`` (``policy.pth`` itself)."""
    payload = pickle.dumps(_CreatesFile(marker))
    with zipfile.ZipFile(source) as z:
        entries = {name: z.read(name) for name in z.namelist()}
    if where == "data":
        data = json.loads(entries["data"])
        for item in data.values():
            if isinstance(item, dict) and ":serialized:" in item:
                item[":serialized:"] = base64.b64encode(payload).decode()
        entries["data"] = json.dumps(data).encode()
    else:
        entries["policy.pth"] = payload
    with zipfile.ZipFile(out, "w") as z:
        for name, raw in entries.items():
            z.writestr(name, raw)
    return out


@pytest.fixture()
def evil(soko_zip, tmp_path):
    marker = tmp_path / "pwned.txt"
    return {where: _craft(soko_zip, tmp_path / f"evil_{where}.zip", marker, where=where)
            for where in ("data", "policy")}, marker


def test_the_crafted_zip_runs_its_code_through_maskableppo_load(evil):
    """The danger is real: SB3's own loader creates the file (so the tests below can fail)."""
    files, marker = evil
    code = ("from sb3_contrib import MaskablePPO\n"
            "try:\n    MaskablePPO.load(%r)\nexcept Exception:\n    pass\n" % str(files["data"]))
    subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, timeout=300)
    assert marker.exists()


def _run(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_no_public_path_runs_the_crafted_code(evil, tmp_path):
    """The tournament CLI, play_match, a training opponent and the exploit CLI: the data-entry
    zip plays (its pickles are never decoded), the policy.pth zip is refused with a reason; the
    marker file never appears."""
    from arena.match import play_match
    from tests.test_train import smoke
    from train.ppo import main as train

    files, marker = evil
    # The tournament CLI.
    ok = _run("arena", "--agents", f"ppo:{files['data']}", "random", "--hands", "20", "--no-progress",
              "--out", str(tmp_path / "t"), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    bad = _run("arena", "--agents", f"ppo:{files['policy']}", "random", "--hands", "20", "--no-progress",
               "--out", str(tmp_path / "t"), cwd=tmp_path)
    assert bad.returncode == 2 and "not plain tensors" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    # play_match.
    result = play_match("soko", [f"ppo:{files['data']}", "random"], hands=20, seed=0)
    assert len(result.bb_per_100) == 2
    with pytest.raises(ValueError, match="not plain tensors"):
        play_match("soko", [f"ppo:{files['policy']}", "random"], hands=20, seed=0)
    # A training opponent.
    train(smoke(tmp_path / "runs", f"opponents.baselines={{'ppo:{files['data']}': 1}}",
                "run.total_timesteps=256", "eval.every=0", "opponents.self_play.every=0"), progress=False)
    with pytest.raises(Exception, match="not plain tensors"):
        train(smoke(tmp_path / "runs2", f"opponents.baselines={{'ppo:{files['policy']}': 1}}",
                    "run.total_timesteps=256", "eval.every=0", "opponents.self_play.every=0"), progress=False)
    # The exploitability CLI (local best response).
    ok = _run("arena.exploit", "--game", "soko", "--agent", f"ppo:{files['data']}", "--method", "lbr",
              "--hands", "20", "--samples", "5", "--no-write", "--no-progress", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    bad = _run("arena.exploit", "--game", "soko", "--agent", f"ppo:{files['policy']}", "--method", "lbr",
               "--hands", "20", "--no-write", "--no-progress", cwd=tmp_path)
    assert bad.returncode == 2 and "not plain tensors" in bad.stderr, bad.stderr
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------
# Agent files refused in one line


@pytest.fixture(scope="module")
def agent_file(soko_zip, tmp_path_factory):
    policy, _ = load_policy(soko_zip)
    path = tmp_path_factory.mktemp("agent") / "soko.safetensors"
    return save_agent_file(path, policy, rules=get_rules("soko"), made={"seed": 0, "steps": 0})


def _rewrite_header(path: Path, out: Path, change) -> Path:
    from safetensors import safe_open
    from safetensors.numpy import load_file, save

    with safe_open(str(path), framework="np") as f:
        header = json.loads(f.metadata()["stud_arena"])
    change(header)
    out.write_bytes(save(load_file(str(path)), metadata={"stud_arena": json.dumps(header)}))
    return out


def _broken(agent_file: Path, tmp_path: Path, what: str) -> Path:
    raw = agent_file.read_bytes()
    out = tmp_path / f"{what}.safetensors"
    if what == "tampered":
        body = bytearray(raw)
        body[-5] ^= 0x40                      # one bit of the last tensor
        out.write_bytes(bytes(body))
    elif what == "truncated":
        out.write_bytes(raw[: len(raw) * 2 // 3])
    elif what == "layout":
        _rewrite_header(agent_file, out, lambda h: h["observation"].update(layout_sha256="0" * 64))
    elif what == "version":
        _rewrite_header(agent_file, out, lambda h: h.update(version=99))
    elif what == "nan":                       # a valid file (its hash made for it) of a NaN weight
        import torch

        policy, _ = load_policy(agent_file)
        with torch.no_grad():
            policy.action_net.bias[1] = float("nan")
        save_agent_file(out, policy, rules=get_rules("soko"))
    return out


@pytest.mark.parametrize("what, message", [
    ("tampered", "its tensors do not match the hash in its header"),
    ("truncated", "is not a readable agent file"),
    ("layout", "its observation layout hash is not the layout this version builds"),
    ("version", "is agent file version 99"),
    ("nan", "its tensor action_net.bias holds NaN or infinite values"),
])
def test_a_broken_agent_file_is_one_line_and_exit_2_before_any_hand(agent_file, tmp_path, what, message):
    path = _broken(agent_file, tmp_path, what)
    with pytest.raises(AgentFileError, match=message):
        check_model(path)
    result = _run("arena", "--agents", f"ppo:{path}", "random", "--hands", "20", "--no-progress",
                  "--out", str(tmp_path / "t"), cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not (tmp_path / "t").exists()      # nothing played, nothing written


def test_an_sb3_zip_with_an_infinite_weight_is_refused(soko_zip, tmp_path):
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(soko_zip, device="cpu")   # the test's own zip
    with torch.no_grad():
        model.policy.mlp_extractor.policy_net[0].weight[0, 0] = float("inf")
    path = tmp_path / "inf.zip"
    model.save(path)
    with pytest.raises(AgentFileError) as info:
        load_policy(path)
    assert str(info.value) == (f"{path}: its tensor mlp_extractor.policy_net.0.weight holds NaN or "
                               "infinite values")


def test_an_agent_file_of_another_game_is_refused(agent_file):
    check_spec(f"ppo:{agent_file}", get_rules("soko"))
    with pytest.raises(ValueError, match="plays soko; this game is soko_nordic"):
        check_spec(f"ppo:{agent_file}", get_rules("soko_nordic"))  # same layout, other rules
    with pytest.raises(ValueError, match="plays soko; this game is follow_the_bitch"):
        check_spec(f"ppo:{agent_file}", get_rules("follow_the_bitch"))


def test_the_header_says_what_the_issue_asks(agent_file):
    info = model_info(agent_file)
    h = info.header
    assert (h["format"], h["version"], h["game"], h["players"]) == ("stud-arena-agent", 1, "soko", 2)
    assert get_rules("soko") == info.rules
    assert h["observation"]["size"] == sum(size for _, size in h["observation"]["pieces"]) == info.obs_size
    assert h["actions"]["count"] == info.n_actions and h["actions"]["ids"][:2] == ["fold", "check_call"]
    assert h["network"] == {"architecture": "mlp", "net_arch": [8], "activation": "tanh",
                            "features_extractor": "flat", "kwargs": {}}
    assert h["normalisation"] is None and len(h["tensors_sha256"]) == 64 and h["made"]["seed"] == 0
    assert agent_file.stat().st_size < 50_000   # the actor only: no value net, no optimizer


# ---------------------------------------------------------------------------------------------
# Round trip: train, save, load


def test_train_save_load_plays_the_sb3_models_actions_on_10000_decisions(smoke_run, tmp_path):
    from sb3_contrib import MaskablePPO

    from agents.trained import PPOAgent
    from tests.test_trained import spots

    _, run_dir = smoke_run
    assert (run_dir / "final_model.safetensors").is_file()
    snapshots = sorted((run_dir / "snapshots").glob("*.zip"))
    assert snapshots and all(p.with_suffix(".safetensors").is_file() for p in snapshots)
    model = MaskablePPO.load(run_dir / "final_model.zip", device="cpu")
    from_file = PPOAgent(path=str(run_dir))            # the run folder names its agent file
    assert from_file.path == run_dir and model_info(run_dir).kind == "agent file"
    converted = tmp_path / "converted.safetensors"
    done = _run("agents.convert", str(run_dir / "final_model.zip"), str(converted), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from_converted = PPOAgent(path=str(converted))
    decisions = spots(8000, seed=7)                    # 8,000 from hands + 2,000 random vectors
    assert len(decisions) == 10_000
    expected = [int(model.predict(obs, deterministic=True, action_masks=mask)[0]) for obs, mask in decisions]
    assert [from_file.choose(obs, mask) for obs, mask in decisions] == expected
    assert [from_converted.choose(obs, mask) for obs, mask in decisions] == expected
    made = model_info(converted).header["made"]
    assert (made["seed"] == 0 and made["steps"] == model.num_timesteps
            and made["config"]["env"]["game"] == "soko")


def test_convert_refuses_bad_input_in_one_line(tmp_path, soko_zip):
    (tmp_path / "notes.zip").write_bytes(b"not a zip")
    for args, message in [([str(tmp_path / "missing.zip")], "no model at"),
                          ([str(tmp_path / "notes.zip")], "is not a model"),
                          ([str(soko_zip)], "sits in no run folder"),
                          ([str(soko_zip), "--game", "follow_the_bitch"], "reads 606 observation values")]:
        result = _run("agents.convert", *args, str(tmp_path / "out.safetensors"), cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], result.stderr
    result = _run("agents.convert", str(soko_zip), str(tmp_path / "out.safetensors"), "--game", "soko",
                  cwd=tmp_path)
    assert result.returncode == 0 and model_info(tmp_path / "out.safetensors").rules == get_rules("soko")


def test_convert_writes_only_an_agent_file_name_and_never_over_another_file(tmp_path, soko_zip):
    """A typo that names the source zip as the output destroyed it (the agent file written over
    it, then refused as 'not a model'); any other existing file was overwritten too."""
    from agents.agent_file import convert

    source = tmp_path / "model.zip"
    source.write_bytes(soko_zip.read_bytes())
    notes = tmp_path / "notes.safetensors"
    notes.write_text("my notes")
    (tmp_path / "a_file").write_text("")
    soko = get_rules("soko")
    for out, message in [(source, f"{source}: an agent file's name ends in .safetensors"),
                         (notes, f"{notes} exists and is not an agent file; choose another name"),
                         (tmp_path, f"{tmp_path}: an agent file's name ends in .safetensors"),
                         (tmp_path / "a_file" / "x.safetensors",
                          f"cannot make the folder {tmp_path / 'a_file'}: {tmp_path / 'a_file'} is a file, "
                          "not a folder")]:
        with pytest.raises(ValueError) as info:
            convert(source, out, rules=soko)
        assert str(info.value).startswith(message)
    assert source.read_bytes() == soko_zip.read_bytes() and notes.read_text() == "my notes"
    out = convert(source, tmp_path / "new" / "m.safetensors", rules=soko)
    assert convert(source, out, rules=soko) == out       # an agent file may be converted over again
    assert model_info(out).kind == "agent file"


def test_loading_an_agent_file_leaves_the_global_generators_alone(agent_file):
    """A run loads opponents mid-training: building the network must not move its generators."""
    import random

    import torch

    before = random.random(), np.random.random(), torch.rand(1).item()
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    load_policy(agent_file)
    after = random.random(), np.random.random(), torch.rand(1).item()
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    assert after == (random.random(), np.random.random(), torch.rand(1).item())
    assert before != after


def test_a_loaded_policy_plays_without_a_torch_optimizer(agent_file, soko_zip):
    """Loading is for play: no torch optimizer is built (the first one in a process imports
    torch's compiler, over a second of every command that loads a model), and the policy still
    gives the saved network's actions."""
    import torch

    for path in (agent_file, soko_zip):
        policy, _ = load_policy(path)
        assert not isinstance(policy.optimizer, torch.optim.Optimizer)
        assert not policy.training
        obs = torch.zeros((1, policy.observation_space.shape[0]))
        assert policy.predict(obs.numpy(), deterministic=True)[0].shape == (1,)


def test_a_plain_mlp_plays_the_built_policys_layers_without_building_it(agent_file, soko_zip, tmp_path,
                                                                        monkeypatch):
    """``load_mlp_layers`` reads an MLP's actor straight into NumPy (building SB3's policy costs
    about half a second a load): the very layers the built policy has, and a ``ppo:`` agent plays
    them without any policy built; tensors that do not fit exactly fall back to the built path,
    which refuses them as before."""
    import torch

    from agents import agent_file as af
    from agents.trained import PPOAgent, _numpy_layers

    for path in (agent_file, soko_zip):
        layers, info = af.load_mlp_layers(path)
        built = _numpy_layers(load_policy(path)[0])
        assert info.obs_size == layers[0][0].shape[1] and len(layers) == len(built) == 2
        for (w, b, act), (w2, b2, act2) in zip(layers, built):
            assert w.dtype == np.float32 and np.array_equal(w, w2) and np.array_equal(b, b2) and act == act2

    obs = np.random.default_rng(0).normal(size=(50, model_info(soko_zip).obs_size)).astype(np.float32)
    expected = PPOAgent(path=str(soko_zip)).actor.logits_batch(obs)

    def no_build(*args, **kwargs):
        raise AssertionError("a torch policy was built")

    with monkeypatch.context() as m:
        m.setattr(af, "_build_policy", no_build)
        for path in (agent_file, soko_zip):
            assert np.array_equal(PPOAgent(path=str(path)).actor.logits_batch(obs), expected)

    # One tensor too many in policy.pth: not the network, so the built path decides (and refuses).
    odd = tmp_path / "odd.zip"
    with zipfile.ZipFile(soko_zip) as z, zipfile.ZipFile(odd, "w") as out:
        for name in z.namelist():
            data = z.read(name)
            if name == "policy.pth":
                state = torch.load(io.BytesIO(data), weights_only=True)
                state["extra.weight"] = torch.zeros(2)
                buffer = io.BytesIO()
                torch.save(state, buffer)
                data = buffer.getvalue()
            out.writestr(name, data)
    assert af.load_mlp_layers(odd)[0] is None
    with pytest.raises(ValueError, match="not loaded without running its pickled code"):
        PPOAgent(path=str(odd)).actor


def test_an_agent_file_plays_a_match_without_importing_torch(agent_file, tmp_path):
    """A shared agent file (a plain MLP) is read by safetensors into NumPy and played by NumPy:
    neither torch nor SB3 is imported (seconds of every command's start)."""
    code = ("import sys\n"
            "from agents.registry import check_spec\n"
            "from arena.match import play_match\n"
            "from envs.engine.rules import get_rules\n"
            f"spec = 'ppo:{agent_file}'\n"
            "check_spec(spec, get_rules('soko'))\n"
            "result = play_match('soko', [spec, 'tag'], hands=20, seed=0)\n"
            "assert result.hands == 20\n"
            "print(sorted(m for m in ('torch', 'sb3_contrib', 'stable_baselines3') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_model_plays_as_its_run_evaluated_it_unless_its_spec_says(smoke_run, agent_file, tmp_path):
    import shutil

    import yaml

    from agents.registry import canonical_spec, make_agent
    from arena.match import play_match
    from train.opponents import baseline_opponent

    _, run_dir = smoke_run
    run = shutil.copytree(run_dir, tmp_path / "run")
    assert make_agent(f"ppo:{run}").deterministic is True          # the smoke config: the argmax
    config = yaml.safe_load((run / "config.yaml").read_text())
    config["eval"]["deterministic"] = False                         # as configs/soko_near_nash_ppo.yaml
    (run / "config.yaml").write_text(yaml.safe_dump(config))
    (run / "final_model.safetensors").unlink()                      # the zip, read with its run's config
    agent = make_agent(f"ppo:{run}")
    assert agent.deterministic is False and agent.randomises
    assert make_agent(f"ppo:{run},deterministic=true").deterministic is True
    # A training pool's entry (each model loaded once, then cloned) plays as its spec says too.
    assert baseline_opponent(f"ppo:{run}", seed=0).deterministic is False
    assert baseline_opponent(f"ppo:{run},deterministic=true", seed=0).deterministic is True
    assert canonical_spec(f"ppo:{run},deterministic=false") == canonical_spec(f"ppo:{run}")
    plain = canonical_spec(f"ppo:{run}")
    assert canonical_spec(f"ppo:{run},deterministic=true") == plain + ",deterministic=true"
    # The default plays what the spelled-out spec plays, hand for hand; the argmax does not.
    chips = {spec: play_match("soko", [spec, "call"], hands=400, seed=5).group_results
             for spec in (f"ppo:{run}", f"ppo:{run},deterministic=false", f"ppo:{run},deterministic=true")}
    assert np.array_equal(chips[f"ppo:{run}"], chips[f"ppo:{run},deterministic=false"])
    assert not np.array_equal(chips[f"ppo:{run}"], chips[f"ppo:{run},deterministic=true"])
    # An agent file carries its run's config in its header; one that says nothing plays the argmax.
    sampled = _rewrite_header(agent_file, tmp_path / "sampled.safetensors",
                              lambda h: h["made"].update(config={"eval": {"deterministic": False}}))
    assert make_agent(f"ppo:{sampled}").deterministic is False
    assert make_agent(f"ppo:{agent_file}").deterministic is True
    loose = shutil.copy(run / "final_model.zip", tmp_path / "loose.zip")   # in no run folder
    assert make_agent(f"ppo:{loose}").deterministic is True
