"""MaskablePPO's update with less Python around it (train/update.py).

(a) differential: from the same rollout, weights, optimizer state and NumPy random state, one
    ``LeanMaskablePPO.train()`` gives SB3's ``MaskablePPO.train()``'s weights, optimizer state
    and logged values exactly, in the default's settings and in the ones it also copies (value
    clipping, unnormalised advantages, the KL early stop, a last minibatch shorter than the rest);
(b) training: the smoke config learns to the same weights both ways, through the first update's
    flattening of the buffer, and ``train.ppo`` builds its models as the lean class;
(c) where it does not apply (a subclass of the policy, another buffer), ``MaskablePPO.train``
    itself runs; the clipping helper is ``clip_grad_norm_``'s arithmetic.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from train.update import LeanMaskablePPO, _clip_grad_norm, lean_applies


def _model(**ppo):
    from train.config import load_config
    from train.ppo import _new_model, training_env

    cfg = load_config("configs/smoke.yaml")
    cfg = dataclasses.replace(cfg, ppo=dataclasses.replace(cfg.ppo, **ppo))
    venv = training_env(cfg)
    model = _new_model(cfg, venv, 0)
    return cfg, venv, model


def _state(model):
    return (copy.deepcopy(model.policy.state_dict()), copy.deepcopy(model.policy.optimizer.state_dict()),
            np.random.get_state(), model._n_updates)


def _restore(model, state):
    weights, optimizer, rng, n_updates = state
    model.policy.load_state_dict(weights)
    model.policy.optimizer.load_state_dict(copy.deepcopy(optimizer))
    np.random.set_state(rng)
    model._n_updates = n_updates


def _update(model, train):
    train(model)
    return (copy.deepcopy(model.policy.state_dict()), model.policy.optimizer.state_dict(),
            dict(model.logger.name_to_value), model._n_updates, np.random.get_state()[1].copy())


def _same_tensors(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_tensors(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same_tensors(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("settings", [
    {},                                                     # the smoke config (the default's shape)
    {"clip_range_vf": 0.1, "normalize_advantage": False},
    {"target_kl": 1e-7},                                    # stops at its first epoch's second minibatch
    {"batch_size": 100},                                    # 256 rows: a last minibatch of 56
    {"max_grad_norm": 1e-3, "n_epochs": 3},                 # every step's gradients clipped
])
def test_one_update_is_sb3s_bit_for_bit(settings):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cfg, venv, model = _model(**settings)
        try:
            assert type(model) is LeanMaskablePPO and lean_applies(model)
            model.train = lambda: None      # a rollout, not learned from yet
            model.learn(total_timesteps=cfg.ppo.n_steps * cfg.ppo.n_envs)
            del model.train
            for first in (True, False):   # the fresh rollout, then again from the moved weights
                before = _state(model)
                sb3 = _update(model, MaskablePPO.train)
                _restore(model, before)
                lean = _update(model, LeanMaskablePPO.train)
                weights, optimizer, logged, n_updates, rng = sb3
                assert _same_tensors(lean[0], weights)
                assert _same_tensors(lean[1], optimizer)
                assert lean[2] == logged and set(logged) >= {"train/loss", "train/approx_kl",
                                                             "train/entropy_loss", "train/clip_fraction"}
                assert lean[3] == n_updates and np.array_equal(lean[4], rng)
                if first:
                    assert not _same_tensors(weights, before[0])   # the update did move the weights
                    first_updates = n_updates - before[3]
        finally:
            venv.close()
    finally:
        torch.set_num_threads(threads)
    assert first_updates == (1 if "target_kl" in settings else model.n_epochs)  # the early stop's epoch
    if "clip_range_vf" in settings:
        assert "train/clip_range_vf" in logged


def test_training_learns_sb3s_weights_and_train_ppo_builds_the_lean_model():
    from tests.helpers import smoke_trained

    def sb3(model):
        assert type(model) is LeanMaskablePPO    # as train.ppo builds it
        model.__class__ = MaskablePPO

    lean = smoke_trained(lambda model: None, rollouts=3)
    assert type(lean) is LeanMaskablePPO
    assert _same_tensors(smoke_trained(sb3, rollouts=3).policy.state_dict(), lean.policy.state_dict())


def test_where_it_does_not_apply_sb3s_update_runs(monkeypatch):
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    cfg, venv, model = _model()
    try:
        model.learn(total_timesteps=cfg.ppo.n_steps * cfg.ppo.n_envs)
        calls = []
        monkeypatch.setattr(MaskablePPO, "train", lambda self: calls.append(type(self)))

        class Policy(MaskableActorCriticPolicy):
            pass

        policy = model.policy
        policy.__class__ = Policy
        assert not lean_applies(model)
        model.train()
        assert calls == [LeanMaskablePPO]
        policy.__class__ = MaskableActorCriticPolicy
        assert lean_applies(model)
        buffer = model.rollout_buffer
        model.rollout_buffer = copy.copy(buffer)
        model.rollout_buffer.__class__ = type("Buffer", (type(buffer),), {})
        assert not lean_applies(model)
        model.train()
        assert calls == [LeanMaskablePPO] * 2
    finally:
        venv.close()


@pytest.mark.parametrize("max_norm", [1e-3, 0.5, 1e6])
def test_the_clipping_is_clip_grad_norms(max_norm):
    rng = torch.Generator().manual_seed(0)
    shapes = [(32, 60), (32,), (4, 32), (4,), (1, 32), (1,)]
    parameters = [torch.nn.Parameter(torch.zeros(s)) for s in shapes]
    for p in parameters:
        p.grad = torch.randn(p.shape, generator=rng)
    twins = [torch.nn.Parameter(p.detach().clone()) for p in parameters]
    for t, p in zip(twins, parameters):
        t.grad = p.grad.clone()
    parameters[-1].grad = twins[-1].grad = None     # a parameter without a gradient is skipped
    before = [p.grad.clone() for p in parameters[:-1]]
    torch.nn.utils.clip_grad_norm_(twins, max_norm)
    _clip_grad_norm(parameters, max_norm)
    assert all(_same_tensors(p.grad, t.grad) for p, t in zip(parameters, twins))
    total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in parameters[:-1]])).item()
    if max_norm < 1e6:     # scaled down to the bound
        assert total == pytest.approx(max_norm, rel=1e-4)
    else:                  # under it: scaled by 1, unchanged
        assert all(torch.equal(p.grad, g) for p, g in zip(parameters, before))


def test_the_adam_step_is_adams_and_a_hooked_one_is_left_to_it():
    from train.update import _adam_step

    def parameters(seed):
        rng = torch.Generator().manual_seed(seed)
        return [torch.nn.Parameter(torch.randn(s, generator=rng)) for s in [(8, 5), (8,), (3, 8)]]

    def grads(params, k):
        rng = torch.Generator().manual_seed(100 + k)
        for p in params:
            p.grad = torch.randn(p.shape, generator=rng)

    mine, theirs = parameters(0), parameters(0)
    options = {"lr": 1e-2, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.01, "fused": True}
    a, b = torch.optim.Adam(mine, **options), torch.optim.Adam(theirs, **options)
    for k in range(4):    # the first step makes the state (Adam's own), the rest are direct
        grads(mine, k)
        grads(theirs, k)
        if k == 2:
            mine[1].grad = theirs[1].grad = None     # a parameter without a gradient stays
        _adam_step(a)
        b.step()
        assert all(torch.equal(x, y) for x, y in zip(mine, theirs))
        assert _same_tensors(a.state_dict(), b.state_dict())
    seen = []
    handle = a.register_step_pre_hook(lambda optimizer, args, kwargs: seen.append(optimizer))
    grads(mine, 9)
    _adam_step(a)
    handle.remove()
    assert seen == [a]     # with a hook, optimizer.step() itself ran
