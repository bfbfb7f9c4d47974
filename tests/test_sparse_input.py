"""The training's sparse first layer (agents/sparse_input.py, src/util/sparse_rows.h).

(a) differential: the output and the parameters' gradients are torch's dense ``nn.Linear``'s to
    float rounding, for inputs of any density, shapes whose widths are not multiples of the
    kernel's blocks, negative values, all-zero rows and -0.0;
(b) properties (hypothesis): on the sparse path a row's output does not depend on the batch's
    other rows (bit for bit), and the result is the same from call to call; a batch with too
    many nonzero values takes torch's dense product, bit for bit;
(c) where it does not apply (a float64 input, an input that needs its own gradient) the layer is
    ``nn.Linear`` exactly;
(d) the training model: the two layers that read the observation change class, nothing else
    does, the state dict keeps its names (a run trains to the same weights twice:
    tests/test_train.py::test_evaluations_do_not_change_what_a_run_learns);
(e) bad arrays given to the core get a ValueError, not a wrong answer.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from agents import sparse_input
from agents.sparse_input import SparseInputLinear, observation_layers, use_sparse_input
from envs import _stud_core


def _sparse_input(rng, rows, k, density, negative=True):
    x = np.where(rng.random((rows, k)) < density, rng.random((rows, k)), 0.0).astype(np.float32)
    x[rng.random((rows, k)) < density / 2] = 1.0
    if negative:
        x[rng.random((rows, k)) < density / 4] *= -1.0
    return torch.from_numpy(x)


def _pair(k, m, seed=0):
    torch.manual_seed(seed)
    dense = torch.nn.Linear(k, m)
    sparse = torch.nn.Linear(k, m)
    sparse.load_state_dict(dense.state_dict())
    sparse.__class__ = SparseInputLinear
    return dense, sparse


@pytest.mark.parametrize("rows,k,m,density", [
    (512, 715, 128, 0.035),   # the default config's minibatch
    (7, 13, 5, 0.3),          # widths below one block of 8 inputs and 32 outputs
    (33, 70, 45, 0.1),        # a block and a tail of each
    (16, 40, 64, 1.0),        # no zeros at all
    (16, 40, 64, 0.0),        # nothing but zeros
])
def test_output_and_gradients_are_the_dense_layers(rows, k, m, density, monkeypatch):
    monkeypatch.setattr(sparse_input, "SPARSE_MAX", 1.0)   # the sparse sums at every density
    rng = np.random.default_rng(rows + k)
    x = _sparse_input(rng, rows, k, density)
    g = torch.from_numpy(rng.standard_normal((rows, m)).astype(np.float32))
    dense, sparse = _pair(k, m)
    out_d, out_s = dense(x), sparse(x)
    assert out_s.shape == (rows, m)
    torch.testing.assert_close(out_s, out_d, rtol=1e-5, atol=1e-5)
    out_d.backward(g)
    out_s.backward(g)
    torch.testing.assert_close(sparse.weight.grad, dense.weight.grad, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(sparse.bias.grad, dense.bias.grad, rtol=1e-5, atol=1e-5)
    if density == 0.0:   # nothing to add: the bias exactly, and a zero weight gradient
        assert torch.equal(out_s, sparse.bias.detach().expand(rows, m))
        assert torch.count_nonzero(sparse.weight.grad) == 0


def test_a_batch_with_too_many_nonzero_values_takes_the_dense_path_exactly():
    rng = np.random.default_rng(1)
    dense, sparse = _pair(40, 16)
    busy = _sparse_input(rng, 32, 40, 0.3)          # about 30% nonzero: above SPARSE_MAX
    quiet = _sparse_input(rng, 32, 40, 0.01)
    assert np.count_nonzero(busy) > sparse_input.SPARSE_MAX * busy.numel()
    with torch.no_grad():
        assert torch.equal(sparse(busy), dense(busy))
        torch.testing.assert_close(sparse(quiet), dense(quiet), rtol=1e-5, atol=1e-5)


def test_negative_zero_counts_as_zero_and_nan_is_not_skipped(monkeypatch):
    monkeypatch.setattr(sparse_input, "SPARSE_MAX", 1.0)
    dense, sparse = _pair(9, 3)
    x = torch.zeros(2, 9)
    x[0, 4] = -0.0
    x[1, 2] = float("nan")
    out = sparse(x)
    assert torch.equal(out[0], sparse.bias.detach())
    assert torch.isnan(out[1]).all()


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 12), k=st.integers(1, 50), m=st.integers(1, 70), seed=st.integers(0, 2**16),
       density=st.sampled_from([0.02, 0.2, 0.7]))
def test_a_rows_output_does_not_depend_on_the_other_rows(rows, k, m, seed, density):
    rng = np.random.default_rng(seed)
    x = _sparse_input(rng, rows, k, density)
    _, sparse = _pair(k, m, seed)
    kept = sparse_input.SPARSE_MAX
    sparse_input.SPARSE_MAX = 1.0   # the sparse sums for every batch (not only the sparse ones)
    try:
        with torch.no_grad():
            whole = sparse(x)
            again = sparse(x.clone())
            alone = torch.cat([sparse(x[i:i + 1].clone()) for i in range(rows)])
    finally:
        sparse_input.SPARSE_MAX = kept
    assert torch.equal(whole, again)
    assert torch.equal(whole, alone)


def test_a_batch_changed_in_place_is_read_again_and_inference_mode_works():
    rng = np.random.default_rng(4)
    x = _sparse_input(rng, 6, 30, 0.2)
    dense, sparse = _pair(30, 8)
    with torch.no_grad():
        first = sparse(x)
        x[2, 5] += 3.0                      # the scanned rows of x are stale now
        torch.testing.assert_close(sparse(x), dense(x), rtol=1e-5, atol=1e-5)
        assert not torch.equal(sparse(x), first)
    with torch.inference_mode():
        y = x.clone()
        torch.testing.assert_close(sparse(y), dense(y), rtol=1e-5, atol=1e-5)


def test_inputs_it_does_not_serve_take_the_dense_path_exactly():
    rng = np.random.default_rng(3)
    x = _sparse_input(rng, 8, 20, 0.2)
    dense, sparse = _pair(20, 6)
    with torch.no_grad():
        assert torch.equal(sparse(x.double().float()), sparse(x))
        dense64 = torch.nn.Linear(20, 6).double()
        sparse64 = torch.nn.Linear(20, 6).double()
        sparse64.load_state_dict(dense64.state_dict())
        sparse64.__class__ = SparseInputLinear
        assert torch.equal(sparse64(x.double()), dense64(x.double()))
    needs_grad = x.clone().requires_grad_(True)
    out = sparse(needs_grad)
    assert torch.equal(out, dense(needs_grad))
    out.sum().backward()
    assert needs_grad.grad is not None


def test_the_training_model_changes_only_the_layers_that_read_the_observation():
    from train.config import load_config
    from train.ppo import _new_model, training_env

    cfg = load_config("configs/smoke.yaml")
    venv = training_env(cfg)
    try:
        model = _new_model(cfg, venv, 0)
    finally:
        venv.close()
    policy = model.policy
    layers = observation_layers(policy)
    assert layers == [policy.mlp_extractor.policy_net[0], policy.mlp_extractor.value_net[0]]
    assert all(type(layer) is SparseInputLinear for layer in layers)
    others = [mod for mod in policy.modules() if isinstance(mod, torch.nn.Linear) and mod not in layers]
    assert others and all(type(mod) is torch.nn.Linear for mod in others)
    from agents.agent_file import _build_policy

    plain = _build_policy(policy.features_dim, policy.action_space.n, list(cfg.ppo.net_arch),
                          cfg.ppo.activation_fn, cfg.ppo.features_extractor, {}).state_dict()
    assert {k: v.shape for k, v in policy.state_dict().items()} == {k: v.shape for k, v in plain.items()}
    assert policy.optimizer.defaults["fused"] is True
    assert use_sparse_input(policy) == 2   # again: the same two layers, nothing new
    # Its snapshots still play in NumPy, and so the local best response to one runs in the core
    # (a TorchActor made the training env play it hand by hand in Python, three times slower).
    from agents.trained import NumpyActor, PPOAgent
    from arena.lbr import LBRAgent
    from envs.engine.rules import get_rules

    snapshot = PPOAgent.from_model(model, name="snapshot")
    assert isinstance(snapshot.actor, NumpyActor)
    assert LBRAgent(snapshot).uses_core(get_rules("soko"))
    obs = np.random.default_rng(0).random((4, policy.features_dim), dtype=np.float32)
    with torch.no_grad():
        logits = policy.action_net(policy.mlp_extractor.forward_actor(torch.from_numpy(obs)))
    np.testing.assert_allclose(snapshot.actor.logits_batch(obs), logits.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("start,col,value,k,why", [
    ([0, 2], [0, 1], [1.0], 4, "col and value"),
    ([1, 2], [0, 1], [1.0, 1.0], 4, "first row"),
    ([0, 2, 1, 2], [0, 1], [1.0, 1.0], 4, "decrease"),
    ([0, 2], [0, 4], [1.0, 1.0], 4, "column"),
    ([0, 2], [-1, 1], [1.0, 1.0], 4, "column"),
])
def test_bad_sparse_rows_are_refused(start, col, value, k, why):
    start = np.array(start, np.int64)
    col = np.array(col, np.int32)
    value = np.array(value, np.float32)
    weight = np.zeros((3, k), np.float32)
    out = np.zeros((len(start) - 1, 3), np.float32)
    with pytest.raises(ValueError, match=why):
        _stud_core.sparse_rows_product(start, col, value, weight, np.zeros(3, np.float32), out)
    with pytest.raises(ValueError, match=why):
        _stud_core.sparse_rows_gradient(start, col, value, np.zeros((len(start) - 1, 3), np.float32),
                                        np.zeros((3, k), np.float32))


def test_the_scan_finds_every_nonzero_entry_in_order():
    rng = np.random.default_rng(5)
    x = _sparse_input(rng, 30, 37, 0.15).numpy()
    start, col, value = _stud_core.sparse_rows(x)
    assert start[0] == 0 and start[-1] == len(col) == np.count_nonzero(x)
    for i in range(30):
        nz = np.flatnonzero(x[i])
        assert np.array_equal(col[start[i]:start[i + 1]], nz)
        assert np.array_equal(value[start[i]:start[i + 1]], x[i, nz])
