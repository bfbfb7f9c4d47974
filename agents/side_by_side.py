"""The policy's and the value's networks of an SB3 actor-critic computed side by side, on two
threads, forward and backward, in the gradient updates (passes without gradients, the
rollouts', run one after the other).

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
import queue
import threading
from concurrent.futures import Future

import torch
from stable_baselines3.common.torch_layers import MlpExtractor


class _Worker:
    """One kept daemon thread that runs the calls given to it in order (a daemon: it never holds
    up the process's exit)."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.torch_threads: int | None = None   # its torch thread count, as last set (on it)
        threading.Thread(target=self._run, name="value-network", daemon=True).start()

    def _run(self) -> None:
        while True:
            future, fn = self.jobs.get()
            try:
                future.set_result(fn())
            except BaseException as exc:  # noqa: BLE001 - the caller gets it from the future
                future.set_exception(exc)
            del future, fn   # not kept while waiting: the call's tensors go with it

    def submit(self, fn) -> Future:
        future: Future = Future()
        self.jobs.put((future, fn))
        return future


_worker: _Worker | None = None
_worker_lock = threading.Lock()


def _the_worker() -> _Worker:
    """The worker (started on first use, again in a forked child)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = _Worker()
        return _worker


def _forget_worker() -> None:   # a forked child has no worker thread: it starts its own
    global _worker
    _worker = None


os.register_at_fork(after_in_child=_forget_worker)


def _side_by_side(here, there):
    """``(here(), there())``, ``there`` on the worker thread with gradients and under the caller's
    torch thread count (each is per thread: a new thread's MKL would split every product over
    all the cores, and the two networks would then take each other's cores instead of one
    each). The worker's call is over before this returns or raises, even through Ctrl-C (raised
    once it is): nothing of a network runs on after its caller has gone on."""
    count, worker = torch.get_num_threads(), _the_worker()

    def run():
        if worker.torch_threads != count:
            torch.set_num_threads(count)
            worker.torch_threads = count
        with torch.enable_grad():
            return there()
    future = worker.submit(run)
    try:
        mine = here()
    except BaseException:
        _wait(future, outcome=False)
        raise
    return mine, _wait(future)


def _wait(future: Future, *, outcome: bool = True):
    """The future's result once it is done, waited for through Ctrl-C (raised after). With
    ``outcome=False``, only waited for."""
    interrupted = False
    while True:
        try:
            result, error = future.result(), None
            break
        except KeyboardInterrupt:
            interrupted = True
        except BaseException as exc:  # noqa: BLE001 - the worker's error, raised below
            result, error = None, exc
            break
    if not outcome:
        return None
    if interrupted:
        raise KeyboardInterrupt
    if error is not None:
        raise error
    return result


class _SideBySide(torch.autograd.Function):
    """Both networks' outputs, each network's graph built on its own thread (forward) and its
    backward pass run there too. The parameters are inputs so that the outputs need gradients;
    their gradients are accumulated by the inner backward passes, so none is returned."""

    @staticmethod
    def forward(ctx, features, extractor, *parameters):
        with torch.enable_grad():
            latent_pi, latent_vf = _side_by_side(lambda: extractor.policy_net(features),
                                                 lambda: extractor.value_net(features))
        ctx.latents = (latent_pi, latent_vf)
        ctx.parameter_count = len(parameters)
        return latent_pi.detach(), latent_vf.detach()

    @staticmethod
    def backward(ctx, grad_pi, grad_vf):
        latent_pi, latent_vf = ctx.latents
        _side_by_side(lambda: torch.autograd.backward(latent_pi, grad_pi),
                      lambda: torch.autograd.backward(latent_vf, grad_vf))
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
        # Without gradients (the rollouts' passes, one row a hand slot) one after the other: the
        # second core is then the compiled core's, computing the local best response's
        # likelihoods ahead (train.batched_vec), and the value's network waiting for it there
        # cost more than it saved (docs/results.md, "The default config").
        return super().forward(features)


def use_side_by_side(policy) -> bool:
    """Make ``policy.mlp_extractor`` (an SB3 ``MlpExtractor`` with both networks) run them side
    by side. False, and nothing changed, for another extractor or one with an empty network."""
    extractor = getattr(policy, "mlp_extractor", None)
    if type(extractor) is not MlpExtractor or not len(extractor.policy_net) or not len(extractor.value_net):
        return False
    extractor.__class__ = SideBySideExtractor
    return True
