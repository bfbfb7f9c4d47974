"""The policy's and the value's networks of an SB3 actor-critic computed side by side, on two
threads, forward and backward.

The two networks of ``MlpExtractor`` (``policy_net`` and ``value_net``: ``net_arch: [128, 128]``
gives each its own two layers) share no parameter and read the same features, so neither waits
for the other; SB3 runs them one after the other, and autograd runs a CPU backward pass on the
thread that asked for it, so with torch on one thread (``ppo.torch_threads: 1``) an update
leaves the second core idle. :func:`use_side_by_side` makes the extractor run the value's
network on a kept worker thread while the calling thread runs the policy's, and in the backward
pass each network's own graph on the thread that built it (torch's operators release the GIL;
both threads still take it back after each one, which keeps the two from halving the networks'
time: docs/results.md, "The default config").

Every operator is the one SB3's serial forward runs, on the same tensors, and each network's
gradient is autograd's own backward pass of its graph, from the same gradient of its output:
the parameters' gradients are the serial ones bit for bit, so a run is the run it was
(``tests/test_side_by_side.py`` holds the two equal). The extractor keeps its class's
parameters, names and state dict (its class changes in place, as
:func:`agents.sparse_input.use_sparse_input` does), so checkpoints and agent files are what
they were.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import torch
from stable_baselines3.common.torch_layers import MlpExtractor

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _worker() -> ThreadPoolExecutor:
    """The one kept worker thread (started on first use, again in a forked child)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="value-network")
        return _pool


def _forget_pool() -> None:   # a forked child has no worker thread: it starts its own
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_forget_pool)


_threads = threading.local()   # the worker's torch thread count, as last set


def _on_worker(fn, *, grad: bool, inference: bool) -> Future:
    """``fn()`` on the worker thread, under the caller's autograd modes and torch thread count
    (each is per thread: a new thread's MKL would split every product over all the cores, and
    the two networks would then take each other's cores instead of one each)."""
    count = torch.get_num_threads()

    def run():
        if getattr(_threads, "count", None) != count:
            torch.set_num_threads(count)
            _threads.count = count
        with torch.inference_mode(inference), torch.set_grad_enabled(grad):
            return fn()
    return _worker().submit(run)


class _SideBySide(torch.autograd.Function):
    """Both networks' outputs, each network's graph built on its own thread (forward) and its
    backward pass run there too. The parameters are inputs so that the outputs need gradients;
    their gradients are accumulated by the inner backward passes, so none is returned."""

    @staticmethod
    def forward(ctx, features, extractor, *parameters):
        with torch.enable_grad():
            value = _on_worker(lambda: extractor.value_net(features), grad=True, inference=False)
            latent_pi = extractor.policy_net(features)
            latent_vf = value.result()
        ctx.latents = (latent_pi, latent_vf)
        ctx.parameter_count = len(parameters)
        return latent_pi.detach(), latent_vf.detach()

    @staticmethod
    def backward(ctx, grad_pi, grad_vf):
        latent_pi, latent_vf = ctx.latents
        value = _on_worker(lambda: torch.autograd.backward(latent_vf, grad_vf), grad=True, inference=False)
        torch.autograd.backward(latent_pi, grad_pi)
        value.result()
        return (None, None) + (None,) * ctx.parameter_count


class SideBySideExtractor(MlpExtractor):
    """An ``MlpExtractor`` whose two networks run side by side (:mod:`agents.side_by_side`);
    ``forward_actor`` and ``forward_critic`` alone run on the calling thread as before."""

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if features.requires_grad:   # a gradient for the features too: autograd's own way
            return super().forward(features)
        if torch.is_grad_enabled():
            parameters = [p for p in self.parameters() if p.requires_grad]
            return _SideBySide.apply(features, self, *parameters)
        value = _on_worker(lambda: self.value_net(features), grad=False,
                           inference=torch.is_inference_mode_enabled())
        latent_pi = self.policy_net(features)
        return latent_pi, value.result()


def use_side_by_side(policy) -> bool:
    """Make ``policy.mlp_extractor`` (an SB3 ``MlpExtractor`` with both networks) run them side
    by side. False, and nothing changed, for another extractor or one with an empty network."""
    extractor = getattr(policy, "mlp_extractor", None)
    if type(extractor) is not MlpExtractor or not len(extractor.policy_net) or not len(extractor.value_net):
        return False
    extractor.__class__ = SideBySideExtractor
    return True
