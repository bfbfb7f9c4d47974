"""MaskablePPO's gradient update with less Python around the same operators.

``MaskablePPO.train()`` spends much of each minibatch outside the networks' products: it copies
the minibatch out of the rollout buffer through NumPy into new tensors, builds two masked
categorical distributions (``MaskableCategorical`` constructs its parent twice, each time
through ``Distribution.__init__``), and goes through the optimizer's and ``clip_grad_norm_``'s
generic paths (grouping tensors by device, profiler hooks). :class:`LeanMaskablePPO` runs the
same update: the same minibatches in the same order (the same ``np.random.permutation`` calls),
the same torch operators in the same order on the same tensors (so autograd builds the same
graph and sums the same gradients in the same order), the same gradient clipping and Adam step,
the same logged values. **The weights are SB3's bit for bit** (``tests/test_update.py`` trains
both ways). Anything it was not written for (another policy, distribution, buffer or action
space, or a subclass of one, which may change what the update calls) takes
``MaskablePPO.train`` itself; a newer SB3 or torch that changes what it copies fails the test.

What it does differently, none of it arithmetic: the buffer's arrays are viewed as tensors once
per update (its four one-float columns stacked, the masks made booleans once) and each minibatch
taken with four ``index_select`` (SB3 copies seven arrays twice each); the distribution's
operators are written out (``Categorical``'s normalisation, the mask's ``where``, the
normalisation again, ``log_prob``'s gather, the masked entropy); gradients are cleared by
setting them to ``None`` (what ``zero_grad()`` does); the norm clipping calls the operators
``clip_grad_norm_`` calls for one device and dtype; a fused ``Adam``'s step (past its first,
which makes its state) calls the two operators its step calls for one device. In the default
config the update takes 0.82-0.92 of SB3's time (``bench/update_speed.py``).
"""

from __future__ import annotations

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.distributions import MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.utils import explained_variance
from torch.nn import functional as F
from torch.optim import optimizer as _optimizer_module

_BUFFER = ("observations", "actions", "values", "log_probs", "advantages", "returns", "action_masks")
_COLUMNS = ("values", "log_probs", "advantages", "returns")   # one float32 a row each


def lean_applies(model) -> bool:
    """Whether :meth:`LeanMaskablePPO.train` is ``MaskablePPO.train`` for ``model``: a Discrete
    action space, SB3's masked actor-critic policy, categorical distribution and rollout buffer
    themselves (a subclass may change what the update calls), on the CPU."""
    policy = model.policy
    return (isinstance(model.action_space, spaces.Discrete)
            and type(policy) is MaskableActorCriticPolicy
            and type(policy.action_dist) is MaskableCategoricalDistribution
            and type(model.rollout_buffer) is MaskableRolloutBuffer
            and model.device.type == "cpu")


class LeanMaskablePPO(MaskablePPO):
    """``MaskablePPO`` whose :meth:`train` is :mod:`train.update`'s: the same weights, sooner.
    ``train.ppo`` makes its models this class in place (their saved zips are MaskablePPO's)."""

    def train(self) -> None:
        if not lean_applies(self):
            return super().train()
        policy = self.policy
        policy.set_training_mode(True)
        self._update_learning_rate(policy.optimizer)
        clip_range = self.clip_range(self._current_progress_remaining)  # type: ignore[operator]
        clip_range_vf = None
        if self.clip_range_vf is not None:
            clip_range_vf = self.clip_range_vf(self._current_progress_remaining)  # type: ignore[operator]
        buffer = self.rollout_buffer
        assert buffer.full, ""
        total = buffer.buffer_size * buffer.n_envs
        batch_size = self.batch_size
        parameters = list(policy.parameters())
        action_dim = policy.action_dist.action_dim
        huge_neg = th.tensor(-1e8)   # MaskableCategorical.apply_masking's and entropy's constants
        zero = th.tensor(0.0)
        entropy_losses, pg_losses, value_losses, clip_fractions = [], [], [], []
        if not buffer.generator_ready:   # as buffer.get flattens it, once
            for name in _BUFFER:
                buffer.__dict__[name] = buffer.swap_and_flatten(buffer.__dict__[name])
            buffer.generator_ready = True
        # The buffer as tensors: its one-float columns side by side, the masks as booleans.
        observations_all = th.from_numpy(buffer.observations.reshape(total, -1))
        actions_all = th.from_numpy(buffer.actions.reshape(total, -1))
        columns = th.from_numpy(np.stack([buffer.__dict__[name].reshape(total) for name in _COLUMNS]))
        masks_all = th.from_numpy(buffer.action_masks.reshape(total, -1)).to(th.bool)
        continue_training = True
        for epoch in range(self.n_epochs):
            approx_kl_divs = []
            indices = np.random.permutation(total)      # as buffer.get draws it
            order = th.from_numpy(indices)
            for start in range(0, total, batch_size):
                rows = order[start:start + batch_size]
                observations = observations_all.index_select(0, rows).reshape((len(rows),) + buffer.obs_shape)
                actions = actions_all.index_select(0, rows).long().flatten()
                old_values, old_log_prob, advantages, returns = columns.index_select(1, rows)

                # policy.evaluate_actions, its distribution's operators written out in order
                features = policy.extract_features(observations)
                if policy.share_features_extractor:
                    latent_pi, latent_vf = policy.mlp_extractor(features)
                else:
                    pi_features, vf_features = features
                    latent_pi = policy.mlp_extractor.forward_actor(pi_features)
                    latent_vf = policy.mlp_extractor.forward_critic(vf_features)
                action_logits = policy.action_net(latent_pi).view(-1, action_dim)
                unmasked = action_logits - action_logits.logsumexp(dim=-1, keepdim=True)
                masks = masks_all.index_select(0, rows).reshape(unmasked.shape)
                masked = th.where(masks, unmasked, huge_neg)
                logits = masked - masked.logsumexp(dim=-1, keepdim=True)
                chosen, log_pmf = th.broadcast_tensors(actions.unsqueeze(-1), logits)
                log_prob = log_pmf.gather(-1, chosen[..., :1]).squeeze(-1)
                values = policy.value_net(latent_vf)
                p_log_p = logits * F.softmax(logits, dim=-1)
                entropy = -th.where(masks, p_log_p, zero).sum(-1)

                # MaskablePPO.train's loss, as it writes it
                values = values.flatten()
                if self.normalize_advantage:
                    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
                ratio = th.exp(log_prob - old_log_prob)
                policy_loss_1 = advantages * ratio
                policy_loss_2 = advantages * th.clamp(ratio, 1 - clip_range, 1 + clip_range)
                policy_loss = -th.min(policy_loss_1, policy_loss_2).mean()
                pg_losses.append(policy_loss.item())
                clip_fractions.append(th.mean((th.abs(ratio - 1) > clip_range).float()).item())
                if clip_range_vf is None:
                    values_pred = values
                else:
                    values_pred = old_values + th.clamp(values - old_values, -clip_range_vf, clip_range_vf)
                value_loss = F.mse_loss(returns, values_pred)
                value_losses.append(value_loss.item())
                entropy_loss = -th.mean(entropy)
                entropy_losses.append(entropy_loss.item())
                loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss
                with th.no_grad():
                    log_ratio = log_prob - old_log_prob
                    approx_kl_div = th.mean((th.exp(log_ratio) - 1) - log_ratio).cpu().numpy()
                    approx_kl_divs.append(approx_kl_div)
                if self.target_kl is not None and approx_kl_div > 1.5 * self.target_kl:
                    continue_training = False
                    if self.verbose >= 1:
                        print(f"Early stopping at step {epoch} due to reaching max kl: {approx_kl_div:.2f}")
                    break

                for parameter in parameters:     # optimizer.zero_grad(): set_to_none
                    parameter.grad = None
                loss.backward()
                _clip_grad_norm(parameters, self.max_grad_norm)
                _adam_step(policy.optimizer)
            self._n_updates += 1
            if not continue_training:
                break
        explained_var = explained_variance(buffer.values.flatten(), buffer.returns.flatten())
        self.logger.record("train/entropy_loss", np.mean(entropy_losses))
        self.logger.record("train/policy_gradient_loss", np.mean(pg_losses))
        self.logger.record("train/value_loss", np.mean(value_losses))
        self.logger.record("train/approx_kl", np.mean(approx_kl_divs))
        self.logger.record("train/clip_fraction", np.mean(clip_fractions))
        self.logger.record("train/loss", loss.item())
        self.logger.record("train/explained_variance", explained_var)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/clip_range", clip_range)
        if clip_range_vf is not None:
            self.logger.record("train/clip_range_vf", clip_range_vf)


def _clip_grad_norm(parameters: list[th.Tensor], max_norm: float) -> None:
    """``th.nn.utils.clip_grad_norm_(parameters, max_norm)`` where every gradient is on one
    device in one dtype (the CPU's float32 here): the same operators, without the grouping."""
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    if any(g.dtype != grads[0].dtype or g.device != grads[0].device for g in grads):
        th.nn.utils.clip_grad_norm_(parameters, max_norm)
        return
    total_norm = th.linalg.vector_norm(th.stack(th._foreach_norm(grads, 2.0)), 2.0)
    clip_coef = float(max_norm) / (total_norm + 1e-6)
    th._foreach_mul_(grads, th.clamp(clip_coef, max=1.0))


def _adam_step(optimizer: th.optim.Optimizer) -> None:
    """``optimizer.step()``; for a fused ``Adam`` of one parameter group past its first step,
    with no step hooks, the two operators that step runs for one device (the steps' count, then
    ``_fused_adam_``) without its generic path (the test holds the weights and state equal)."""
    hooks = (optimizer._optimizer_step_pre_hooks, optimizer._optimizer_step_post_hooks,
             _optimizer_module._global_optimizer_pre_hooks, _optimizer_module._global_optimizer_post_hooks)
    group = optimizer.param_groups[0]
    if (type(optimizer) is not th.optim.Adam or len(optimizer.param_groups) != 1 or any(hooks)
            or not group["fused"] or group["amsgrad"] or group["capturable"] or group["differentiable"]
            or group["decoupled_weight_decay"] or isinstance(group["lr"], th.Tensor)):
        optimizer.step()
        return
    params = [p for p in group["params"] if p.grad is not None]
    states = [optimizer.state.get(p) for p in params]
    if not params or not all(states) or any(p.device.type != "cpu" for p in params):
        optimizer.step()   # (its first step makes the state)
        return
    steps = [state["step"] for state in states]
    th._foreach_add_(steps, 1)
    beta1, beta2 = group["betas"]
    th._fused_adam_(params, [p.grad for p in params], [state["exp_avg"] for state in states],
                    [state["exp_avg_sq"] for state in states], [], steps, amsgrad=False, lr=group["lr"],
                    beta1=beta1, beta2=beta2, weight_decay=group["weight_decay"], eps=group["eps"],
                    maximize=group["maximize"], grad_scale=None, found_inf=None)
