"""The first layer of the policy's and the value's networks, fed observations that are mostly
zeros (one-hot cards and a few numbers: about 25 of Soko's 715 values are not zero), computed
by skipping the zeros in the compiled core (``envs._stud_core.sparse_rows``,
``sparse_rows_product`` and ``sparse_rows_gradient``, ``src/util/sparse_rows.h``).

A dense product does about 30 times the work there: the first layer's product and its weight's
gradient were about half of ``MaskablePPO.train()`` in the default config. The layer keeps
its parameters, their names and the state dict (:func:`use_sparse_input` changes the class of
the ``nn.Linear`` modules in place), so models, checkpoints and agent files are what they were;
only the order of the sums differs from torch's dense product (floats a rounding apart). Each
output is summed in one fixed order, so a run is reproducible on any machine. Only for float32
rows on the CPU that need no gradient themselves, in batches with at most :data:`SPARSE_MAX`
of their values nonzero; anything else takes ``nn.Linear``'s own path.
"""

from __future__ import annotations

import threading

import torch
from torch import nn

from envs import _stud_core

_last = threading.local()   # the rows last scanned: the policy's and the value's layers read one batch


def _sparse_rows(x: torch.Tensor):
    """``x``'s nonzero entries (``_stud_core.sparse_rows``), scanned once for the layers that read
    the same tensor. The tensor is held with them, so its identity and version name its data."""
    if x.is_inference():   # no version counter to name its data by: scanned every time
        return _stud_core.sparse_rows(x.numpy())
    held = getattr(_last, "rows", None)
    if held is not None and held[0] is x and held[1] == x._version:
        return held[2]
    rows = _stud_core.sparse_rows(x.detach().numpy())
    _last.rows = (x, x._version, rows)
    return rows


class _SparseRows(torch.autograd.Function):
    """``x @ weight.T + bias`` with the zeros of ``x`` skipped (x: rows, k; weight: m, k)."""

    @staticmethod
    def forward(ctx, x, weight, bias):
        rows = _sparse_rows(x)
        out = x.new_empty((x.shape[0], weight.shape[0]))
        _stud_core.sparse_rows_product(*rows, weight.detach().numpy(), bias.detach().numpy(), out.numpy())
        ctx.rows = rows
        ctx.weight_shape = weight.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_weight = grad_bias = None
        if ctx.needs_input_grad[1]:
            grad_weight = grad.new_empty(ctx.weight_shape)
            _stud_core.sparse_rows_gradient(*ctx.rows, grad.contiguous().numpy(), grad_weight.numpy())
        if ctx.needs_input_grad[2]:
            grad_bias = grad.sum(0)
        return None, grad_weight, grad_bias


# The largest share of a batch's values that may be nonzero for the sparse product: above it
# torch's dense product is faster (forward and backward of 512 x 715 -> 128 on one core: the
# sparse one is 2x faster at 3.5% nonzero, Soko's observations, and 2.5x slower at 25%).
SPARSE_MAX = 0.06


class SparseInputLinear(nn.Linear):
    """An ``nn.Linear`` whose input rows are mostly zeros: the same parameters and state dict,
    the product computed by :class:`_SparseRows` where it can be and pays (at most
    :data:`SPARSE_MAX` of the batch's values nonzero)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (x.dim() != 2 or x.dtype != torch.float32 or x.device.type != "cpu" or x.requires_grad
                or self.bias is None or self.weight.dtype != torch.float32
                or self.weight.device.type != "cpu" or not x.is_contiguous()
                or not self.weight.is_contiguous()
                or len(_sparse_rows(x)[1]) > SPARSE_MAX * x.numel()):
            return super().forward(x)
        return _SparseRows.apply(x, self.weight, self.bias)


def observation_layers(policy) -> list[nn.Linear]:
    """The ``nn.Linear`` layers of an SB3 MLP actor-critic policy that read the flattened
    observation: the first layer of the policy's and of the value's network (the action or
    value head where that network has no hidden layer). Empty for another kind of policy."""
    from stable_baselines3.common.torch_layers import FlattenExtractor

    if not isinstance(getattr(policy, "features_extractor", None), FlattenExtractor):
        return []
    extractor = policy.mlp_extractor
    layers = []
    for net, head in ((extractor.policy_net, policy.action_net), (extractor.value_net, policy.value_net)):
        first = net[0] if len(net) else head
        if isinstance(first, nn.Linear) and first.in_features == policy.features_dim:
            layers.append(first)
    return layers


def use_sparse_input(policy) -> int:
    """Make the layers that read the observation (:func:`observation_layers`) skip its zeros:
    their class becomes :class:`SparseInputLinear`, their parameters (and so the optimizer's
    hold on them) stay. Returns how many layers changed."""
    layers = observation_layers(policy)
    for layer in layers:
        layer.__class__ = SparseInputLinear
    return len(layers)
