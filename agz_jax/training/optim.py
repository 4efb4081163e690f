"""Optimizers, learning-rate schedules and the L2 penalty, shared by every task."""

import jax
import jax.numpy as jnp
import optax


def step_schedule(train_config) -> optax.Schedule:
  """AlphaGo Zero's: `learning_rate`, times `lr_decay` at each of `lr_boundaries` (updates)."""
  t = train_config
  return optax.piecewise_constant_schedule(
      t.learning_rate, {int(b): t.lr_decay for b in t.lr_boundaries})


def halving_schedule(train_config) -> optax.Schedule:
  """AlphaGo's: `learning_rate`, halved every `lr_halving_steps` steps."""
  t = train_config
  return optax.exponential_decay(t.learning_rate, transition_steps=t.lr_halving_steps,
                                 decay_rate=0.5, staircase=True)


def make_optimizer(train_config, schedule: optax.Schedule) -> optax.GradientTransformation:
  """SGD with momentum (AlphaGo, AlphaGo Zero) or Adam, at `schedule`; L2 is in the loss.

  With `train.clip_norm` > 0 (where the config has it) the gradient's global
  norm is capped at that value first: a large step size then cannot blow up.
  """
  t = train_config
  if t.optimizer == "sgd":
    optimizer = optax.sgd(schedule, momentum=t.momentum)
  elif t.optimizer == "adam":
    optimizer = optax.adam(schedule)
  else:
    raise ValueError(f"train.optimizer must be 'sgd' or 'adam', got {t.optimizer!r}")
  clip = t.get("clip_norm", 0.0)
  return optax.chain(optax.clip_by_global_norm(clip), optimizer) if clip > 0 else optimizer


def l2_penalty(params, weight_decay: float) -> jax.Array:
  """c ||theta||^2 over every parameter."""
  return weight_decay * sum(jnp.sum(p ** 2) for p in jax.tree.leaves(params))
