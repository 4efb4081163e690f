"""AlphaGo's (2016) leaf evaluation, as a search evaluator.

Silver et al. 2016 ("Search algorithm"): a new node's prior is the SL policy
network's softmax at temperature beta (P = p_sigma^beta, beta = 0.67), and a
leaf's value mixes the value network with the outcome of a rollout played to
the end with the fast rollout policy p_pi: V = (1 - lambda) v(s) + lambda z.
In a synchronous search every leaf gets both, so backing up V gives the
paper's Q = (1 - lambda) W_v / N_v + lambda W_r / N_r exactly. Here a leaf is
valued by `rollouts_per_leaf` rollouts at once (their mean z), which keeps a
batched machine busy although the search looks at one leaf at a time. lambda =
1 values leaves by rollouts only, lambda = 0 by the value network only (no
rollout is played), anything between mixes both. The prior can also be uniform
(no policy network: the paper's "rollouts only" variants without p_sigma).

Two departures from the paper, each off by default: lambda can apply from a move number
on only (`lambda_from_move`: the value network alone before it, where it judges better
than rollouts, and the mix after, where it does not), and the prior can be a dual
network's policy head (AlphaGo Zero's resnet, `DualPolicy`), whose value head then
values the leaves from the same forward pass when it is also the value network.

The selection rule (raw Q + c_puct P sqrt(sum N) / (1 + N), the most visited
move played) is the search's `algorithm = "alphago"` (agz_jax.search).
"""

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from agz_jax import go, search
from agz_jax.alphago import patterns, rollout

PRIORS = ("sl", "uniform")


@dataclasses.dataclass(frozen=True, kw_only=True)
class LeafSettings:
  """How a leaf is valued; hashable (a static jit argument).

  Attributes:
    prior: "sl" (the SL policy network at temperature beta) or "uniform".
    beta: the prior's softmax temperature (the paper's 0.67).
    mixing: lambda, the rollouts' weight in the leaf value (1: rollouts only,
      0: the value network only; below 1 the evaluator needs a value network).
    rollouts_per_leaf: rollouts from each leaf, averaged.
    max_rollout_moves: a rollout stops after this many moves, scored as it stands.
    lambda_from_move: `mixing` applies to leaves at this move number of the game or later;
      earlier leaves are valued by the value network alone (0: everywhere).
  """

  prior: str = "sl"
  beta: float = 0.67
  mixing: float = 1.0
  rollouts_per_leaf: int = 8
  max_rollout_moves: int = 500
  lambda_from_move: int = 0

  def __post_init__(self):
    if self.prior not in PRIORS:
      raise ValueError(f"prior must be one of {', '.join(PRIORS)}, got {self.prior!r}")
    if not 0.0 <= self.mixing <= 1.0:
      raise ValueError(f"lambda (mixing) must be in [0, 1], got {self.mixing}")
    if self.beta <= 0:
      raise ValueError(f"beta must be positive, got {self.beta}")
    if not isinstance(self.rollouts_per_leaf, int) or self.rollouts_per_leaf < 1:
      raise ValueError(f"rollouts per leaf must be a positive integer, got {self.rollouts_per_leaf!r}")
    if not isinstance(self.lambda_from_move, int) or self.lambda_from_move < 0:
      raise ValueError(f"lambda_from_move must be a move number (0 or more), got "
                       f"{self.lambda_from_move!r}")

  @property
  def needs_value(self) -> bool:
    """Whether some leaf is valued by the value network."""
    return self.mixing < 1.0 or self.lambda_from_move > 0

  @property
  def needs_rollouts(self) -> bool:
    """Whether some leaf is valued by rollouts."""
    return self.mixing > 0.0


@dataclasses.dataclass(frozen=True)
class DualValue:
  """A dual network's value head (AlphaGo Zero's resnet) in a value network's place:
  `apply(variables, planes)` gives its [B] values and drops its policy."""

  model: Any

  def apply(self, variables, planes):
    return self.model.apply(variables, planes)[1]


@dataclasses.dataclass(frozen=True)
class DualPolicy:
  """A dual network's policy head as the search's prior: `apply(variables, planes)` gives its
  [B, A] logits; `both` its logits and value from one forward pass."""

  model: Any

  def apply(self, variables, planes):
    return self.model.apply(variables, planes)[0]

  def both(self, variables, planes):
    logits, value = self.model.apply(variables, planes)[:2]
    return logits, value


def rollout_logits(cfg: go.GoConfig, rollout_model, groups: tuple[str, ...]):
  """logits_fn(variables, states) of a fast policy: variables = {'params', 'tables'}."""
  def logits_fn(variables, states):
    idx = jax.vmap(lambda s: patterns.indices(cfg, variables["tables"], s, groups))(states)
    return rollout_model.apply({"params": variables["params"]}, idx)
  return logits_fn


def _planes(cfg: go.GoConfig, states, encodings: list[str]) -> dict:
  """{encoding: planes of `states`} for each of `encodings`. AlphaGo's 49 planes are its 48
  and the colour to play, so with both the 48 (and their ladder reading) are computed once."""
  out = {}
  if {"alphago48", "alphago49"} <= set(encodings):
    out["alphago49"] = go.features(cfg, states, "alphago49")
    out["alphago48"] = out["alphago49"][..., :48]
  for encoding in encodings:
    if encoding not in out:
      out[encoding] = go.features(cfg, states, encoding)
  return out


def evaluator(cfg: go.GoConfig, settings: LeafSettings, *, rollout_model, rollout_groups,
              prior_model=None, prior_encoding: str = "alphago48", value_model=None,
              value_encoding: str = "alphago49") -> search.Evaluator:
  """The leaf evaluator: (variables, states [B], rng_key) -> (prior logits [B, A], value [B]).

  Args:
    cfg: the game (its history must cover the prior's encoding and the patterns).
    settings: the leaf settings.
    rollout_model, rollout_groups: the fast rollout policy (nets.FastPolicy) and
      its feature groups (None with lambda 0: no rollout is played).
    prior_model, prior_encoding: the SL policy network and its input planes
      (for settings.prior == "sl").
    value_model, value_encoding: the value network (or a dual network's value head,
      DualValue) and its input planes (for settings.mixing below 1 or a lambda_from_move);
      "prior" when the prior is a DualPolicy whose value head values the leaves (one
      forward pass gives both).

  `variables` holds, with rollouts (lambda above 0), {'rollout': {'params', 'tables'}}; with the SL prior
  'prior': the policy network's variables, with a value network 'value': its
  variables. The key is consumed by the rollouts.
  """
  if settings.prior == "sl" and prior_model is None:
    raise ValueError("an SL prior needs the SL policy network")
  if settings.needs_value and value_model is None:
    if settings.mixing < 1.0:
      raise ValueError(f"lambda {settings.mixing:g} mixes in a value network: give one "
                       "(value=DIR), or use lambda = 1 (rollouts only)")
    raise ValueError(f"lambda_from_move {settings.lambda_from_move}: the leaves before it are "
                     f"valued by a value network: give one (value=DIR), or use 0")
  shared = value_model == "prior"
  if shared and not (settings.prior == "sl" and isinstance(prior_model, DualPolicy)):
    raise ValueError("the prior's value head values the leaves only when the prior is a dual "
                     "network (DualPolicy)")
  if settings.mixing > 0.0 and rollout_model is None:
    raise ValueError(f"lambda {settings.mixing:g} values leaves by rollouts: give a rollout "
                     "policy (rollout=DIR), or use lambda = 0 (value network only)")
  fast = rollout_logits(cfg, rollout_model, rollout_groups) if settings.mixing > 0.0 else None
  k = settings.rollouts_per_leaf
  encodings = ([prior_encoding] if settings.prior == "sl" else []) + (
      [value_encoding] if settings.needs_value and not shared else [])

  def evaluate(variables, states, rng_key):
    b = states.board.shape[0]
    planes = _planes(cfg, states, encodings)
    v = None
    if settings.prior == "sl" and shared:
      logits, v = prior_model.both(variables["prior"], planes[prior_encoding])
    elif settings.prior == "sl":
      logits = prior_model.apply(variables["prior"], planes[prior_encoding])
    else:
      logits = jnp.zeros((b, cfg.num_actions), jnp.float32)
    logits = logits.astype(jnp.float32) / settings.beta
    if settings.needs_value and v is None:  # the value network
      v = value_model.apply(variables["value"], planes[value_encoding])
    # lambda of each leaf: the value network alone before lambda_from_move.
    late = states.move_count >= settings.lambda_from_move
    lam = jnp.where(late, settings.mixing, 0.0)
    value = jnp.zeros(b, jnp.float32) if v is None else (1.0 - lam) * v.astype(jnp.float32)
    if settings.needs_rollouts:  # played only when some leaf of the batch needs them

      def play(_):
        starts = jax.tree.map(lambda x: jnp.repeat(x, k, axis=0), states)
        z = rollout.rollouts(cfg, lambda s: fast(variables["rollout"], s), starts, rng_key,
                             max_moves=settings.max_rollout_moves)
        return jnp.mean(z.reshape(b, k), axis=1).astype(jnp.float32)

      z = jax.lax.cond(jnp.any(late), play, lambda _: jnp.zeros(b, jnp.float32), None)
      value = value + lam * z
    return logits, value

  return evaluate
