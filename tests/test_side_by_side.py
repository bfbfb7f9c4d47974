"""The policy's and the value's networks side by side on two threads (agents/side_by_side.py).

(a) differential: a MaskablePPO policy's PPO-shaped loss and every parameter's gradient are the
    serial extractor's bit for bit (the training's sparse first layers and plain ones, tanh and
    relu), and so are the no-grad forward's outputs, repeatedly (the worker is kept);
(b) training: updates of the smoke config give the same weights, tensor for tensor, with the
    networks side by side and one after the other (the default run: docs/results.md), and the
    learner's snapshots still play in NumPy (so a local best response to one runs in the core);
(c) where it does not apply: features that need their own gradient take the serial path (that
    gradient is autograd's), ``forward_actor`` and ``forward_critic`` alone stay on the caller's
    thread, another extractor or an empty network is left alone;
(d) an error in either network reaches the caller; a forked child forgets the parent's worker
    (it would start its own instead of waiting on a thread it does not have).
"""

from __future__ import annotations

import copy
import threading

import numpy as np
import pytest
import torch
from stable_baselines3.common.torch_layers import MlpExtractor

from agents import side_by_side
from agents.side_by_side import SideBySideExtractor, use_side_by_side


def _policy(obs_size=60, n_actions=4, net_arch=(32, 32), activation="tanh", seed=0):
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from agents.agent_file import policy_kwargs

    space = spaces.Box(low=-np.inf, high=np.inf, shape=(obs_size,), dtype=np.float32)
    torch.manual_seed(seed)
    return MaskableActorCriticPolicy(space, spaces.Discrete(n_actions), lambda _: 1e-3,
                                     **policy_kwargs(list(net_arch), activation))


def _batch(rows, obs_size, n_actions, density, seed=0):
    rng = np.random.default_rng(seed)
    obs = np.where(rng.random((rows, obs_size)) < density, rng.standard_normal((rows, obs_size)), 0.0)
    masks = rng.random((rows, n_actions)) < 0.7
    masks[np.arange(rows), rng.integers(0, n_actions, rows)] = True
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return (torch.from_numpy(obs.astype(np.float32)), torch.from_numpy(actions), masks,
            torch.from_numpy(rng.standard_normal(rows).astype(np.float32)),
            torch.from_numpy(rng.standard_normal(rows).astype(np.float32)))


def _gradients(policy, batch):
    """The parameters' gradients of a PPO-shaped loss (policy, value and entropy terms)."""
    obs, actions, masks, advantages, returns = batch
    policy.zero_grad(set_to_none=True)
    values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
    value_loss = ((returns - values.flatten()) ** 2).mean()
    loss = -(log_prob * advantages).mean() + 0.5 * value_loss - 0.01 * entropy.mean()
    loss.backward()
    return loss.detach(), {name: p.grad.clone() for name, p in policy.named_parameters()}


@pytest.mark.parametrize("sparse, activation, net_arch, density", [
    (True, "tanh", (32, 32), 0.05),     # the training's shape: sparse first layers, two tanh layers
    (False, "tanh", (32, 32), 0.5),
    (False, "relu", (16,), 1.0),
    (True, "tanh", (24, 8, 16), 0.03),  # three layers of unequal widths
])
def test_the_loss_and_every_gradient_are_the_serial_ones_bit_for_bit(sparse, activation, net_arch, density):
    from agents.sparse_input import use_sparse_input

    serial = _policy(net_arch=net_arch, activation=activation)
    if sparse:
        assert use_sparse_input(serial) == 2
    twin = copy.deepcopy(serial)
    assert use_side_by_side(twin)
    assert type(twin.mlp_extractor) is SideBySideExtractor and type(serial.mlp_extractor) is MlpExtractor
    assert twin.state_dict().keys() == serial.state_dict().keys()
    for seed in range(3):   # the kept worker, again and again
        batch = _batch(200, 60, 4, density, seed=seed)
        loss_s, grads_s = _gradients(serial, batch)
        loss_t, grads_t = _gradients(twin, batch)
        assert torch.equal(loss_s, loss_t)
        assert grads_s.keys() == grads_t.keys()
        for name in grads_s:
            assert torch.equal(grads_s[name], grads_t[name]), name
        assert any(torch.count_nonzero(g) for name, g in grads_t.items() if "value_net" in name)
        with torch.no_grad():
            for a, b in zip(serial(batch[0], deterministic=True, action_masks=batch[2]),
                            twin(batch[0], deterministic=True, action_masks=batch[2])):
                assert torch.equal(a, b)
        with torch.inference_mode():
            pi_s, vf_s = serial.mlp_extractor(batch[0])
            pi_t, vf_t = twin.mlp_extractor(batch[0])
        assert torch.equal(pi_s, pi_t) and torch.equal(vf_s, vf_t)


def test_updates_train_to_the_serial_weights():
    from tests.helpers import smoke_trained

    def serial(model):
        model.policy.mlp_extractor.__class__ = MlpExtractor

    def twin(model):
        serial(model)
        assert use_side_by_side(model.policy)

    weights = smoke_trained(serial).policy.state_dict()
    model = smoke_trained(twin)
    assert weights.keys() == model.policy.state_dict().keys()
    assert all(torch.equal(weights[k], model.policy.state_dict()[k]) for k in weights)
    # Its snapshots still play in NumPy, and so the local best response to one runs in the core
    # (a TorchActor would make the training env play it hand by hand in Python, far slower).
    from agents.trained import NumpyActor, PPOAgent
    from arena.lbr import LBRAgent
    from envs.engine.rules import get_rules

    assert type(model.policy.mlp_extractor) is SideBySideExtractor
    snapshot = PPOAgent.from_model(model, name="snapshot")
    assert isinstance(snapshot.actor, NumpyActor)
    assert LBRAgent(snapshot).uses_core(get_rules("soko"))


def test_where_it_does_not_apply_the_serial_path_runs():
    serial = _policy()
    twin = copy.deepcopy(serial)
    use_side_by_side(twin)
    obs = _batch(16, 60, 4, 0.5)[0]
    # Features that need their own gradient: autograd's own graph, that gradient included.
    grads = []
    for policy in (serial, twin):
        x = obs.clone().requires_grad_()
        pi, vf = policy.mlp_extractor(x)
        (pi.sum() + 2 * vf.sum()).backward()
        grads.append(x.grad)
    assert torch.equal(*grads)
    # One network alone, and both without gradients (the rollouts' passes), stay on the calling
    # thread; with gradients the value's runs on the worker.
    seen = []
    hook = twin.mlp_extractor.value_net.register_forward_hook(lambda *_: seen.append(threading.get_ident()))
    with torch.no_grad():
        twin.mlp_extractor.forward_critic(obs)
        twin.mlp_extractor(obs)
    twin.mlp_extractor(obs)
    hook.remove()
    me = threading.get_ident()
    assert seen[0] == me and seen[1] == me and seen[2] != me
    # Another extractor, or an empty network: nothing changes.
    assert not use_side_by_side(twin)   # already side by side
    empty = _policy(net_arch=())
    assert not use_side_by_side(empty) and type(empty.mlp_extractor) is MlpExtractor


def test_an_error_in_either_network_reaches_the_caller():
    twin = _policy()
    use_side_by_side(twin)
    wrong = torch.zeros(4, 59)   # one value short
    for grad in (True, False):
        with torch.set_grad_enabled(grad), pytest.raises(RuntimeError):
            twin.mlp_extractor(wrong)
    twin.mlp_extractor.value_net[0].weight.data = torch.zeros(32, 59)   # only the value network fails
    with pytest.raises(RuntimeError):
        twin.mlp_extractor(torch.zeros(4, 60))
    with torch.no_grad(), pytest.raises(RuntimeError):
        twin.mlp_extractor(torch.zeros(4, 60))


def test_a_forked_child_starts_its_own_worker():
    """A forked child has no copy of the parent's worker thread: it forgets the parent's worker
    (and would start its own) instead of waiting on a thread that is not there."""
    import os

    twin = _policy()
    use_side_by_side(twin)
    twin.mlp_extractor(torch.ones(3, 60))   # the parent's worker is running
    assert side_by_side._worker is not None
    pid = os.fork()
    if pid == 0:   # the child: no torch here (torch itself may not survive a fork of a threaded parent)
        os._exit(0 if side_by_side._worker is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert side_by_side._worker is not None   # the parent keeps its own


def test_an_interrupted_caller_waits_for_the_workers_network():
    """Ctrl-C (or any error) in the policy's network: the value's network, on the worker, is
    over before the error reaches the caller, so nothing runs on while the training saves its
    checkpoint and exits."""
    import time

    twin = _policy()
    use_side_by_side(twin)
    done = []

    def slow(module, inputs, output):
        time.sleep(0.2)
        done.append(threading.get_ident())

    def interrupt(module, inputs, output):
        raise KeyboardInterrupt

    hooks = [twin.mlp_extractor.value_net.register_forward_hook(slow),
             twin.mlp_extractor.policy_net.register_forward_hook(interrupt)]
    with pytest.raises(KeyboardInterrupt):
        twin.mlp_extractor(torch.zeros(4, 60))
    assert len(done) == 1 and done[0] != threading.get_ident()
    for hook in hooks:
        hook.remove()


def test_ctrl_c_while_waiting_is_raised_once_the_worker_is_done():
    class Interrupted:   # a future whose first wait is cut by Ctrl-C
        calls = 0

        def result(self):
            self.calls += 1
            if self.calls == 1:
                raise KeyboardInterrupt
            return "done"

    future = Interrupted()
    with pytest.raises(KeyboardInterrupt):
        side_by_side._wait(future)
    assert future.calls == 2
    quiet = Interrupted()
    assert side_by_side._wait(quiet, outcome=False) is None and quiet.calls == 2
    with pytest.raises(ValueError, match="its own error"):
        side_by_side._wait(side_by_side._the_worker().submit(lambda: int("its own error")))
