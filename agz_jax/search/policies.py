"""The searches as mctx policies (a root, a recurrent function, a number of simulations ->
mctx.PolicyOutput): Gumbel MuZero with the caller's noise, AlphaGo's search, and AlphaGo Zero's
PUCT with KataGo's forced playouts and policy target pruning."""

import functools

import jax
import jax.numpy as jnp
import mctx

from agz_jax.search.action_selection import (alphago_selection, forced_playouts,
                                             forced_root_selection, puct_scores,
                                             puct_selection)


def masked_logits(logits: jax.Array, legal: jax.Array) -> jax.Array:
  """Logits shifted to a maximum of 0, illegal actions at the dtype's minimum (idempotent)."""
  logits = logits - jnp.max(logits, axis=-1, keepdims=True)
  return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def noisy_root_logits(rng_key: jax.Array, logits: jax.Array, legal: jax.Array, *,
                      fraction: float, alpha: float) -> jax.Array:
  """AlphaGo Zero's root prior (1 - f) p + f Dir(alpha), p the softmax of `logits`, as logits
  over the legal actions (masked_logits). Consumes `rng_key`.

  Args:
    logits, legal: [B, A].
    fraction: f, the noise's weight.
    alpha: the Dirichlet concentration (SearchConfig.root_noise_alpha).
  """
  noise = jax.random.dirichlet(rng_key, jnp.full(logits.shape[-1:], alpha), logits.shape[:-1])
  noisy = (1.0 - fraction) * jax.nn.softmax(logits) + fraction * noise
  return masked_logits(jnp.log(jnp.maximum(noisy, 1e-30)), legal)


def gumbel_policy(variables, rng_key: jax.Array, root: mctx.RootFnOutput, recurrent_fn,
                  num_simulations: int, *, invalid_actions: jax.Array, gumbel: jax.Array,
                  max_num_considered_actions: int) -> mctx.PolicyOutput:
  """mctx.gumbel_muzero_policy with the root's Gumbel noise given, one row per game.

  The same search (mctx.search with mctx's Gumbel root and interior action
  selection and completed Q-values), action (the best of the most visited
  actions by noise + prior logit + completed Q) and improved policy; only the
  noise comes from the caller, so each game's can come from its own key.

  Args:
    rng_key: the key the simulations' evaluator keys are split from (the
      selection functions draw nothing from it).
    gumbel: [B, A] the root's noise, already scaled.
  """
  legal = ~invalid_actions
  logits = masked_logits(root.prior_logits, legal)
  tree = mctx.search(
      params=variables, rng_key=rng_key, root=root.replace(prior_logits=logits),
      recurrent_fn=recurrent_fn,
      root_action_selection_fn=functools.partial(
          mctx.gumbel_muzero_root_action_selection, num_simulations=num_simulations,
          max_num_considered_actions=max_num_considered_actions,
          qtransform=mctx.qtransform_completed_by_mix_value),
      interior_action_selection_fn=functools.partial(
          mctx.gumbel_muzero_interior_action_selection,
          qtransform=mctx.qtransform_completed_by_mix_value),
      num_simulations=num_simulations, invalid_actions=invalid_actions,
      extra_data=mctx.GumbelMuZeroExtraData(root_gumbel=gumbel))
  visits = tree.summary().visit_counts
  completed_q = jax.vmap(mctx.qtransform_completed_by_mix_value, in_axes=(0, None))(
      tree, mctx.Tree.ROOT_INDEX)
  # Sequential halving's winner: among the most visited actions, the highest
  # noise + logit + completed Q (logits already have their maximum at 0).
  most_visited = visits == jnp.max(visits, axis=-1, keepdims=True)
  score = jnp.maximum(-1e9, gumbel + logits + completed_q)
  action = jnp.argmax(jnp.where(most_visited & legal, score, -jnp.inf), axis=-1)
  weights = jax.nn.softmax(masked_logits(logits + completed_q, legal))
  return mctx.PolicyOutput(action=action.astype(jnp.int32), action_weights=weights,
                           search_tree=tree)


def alphago_policy(variables, rng_key: jax.Array, root: mctx.RootFnOutput, recurrent_fn,
                   num_simulations: int, *, invalid_actions: jax.Array,
                   c_puct: float) -> mctx.PolicyOutput:
  """AlphaGo's search (mctx.search with `alphago_selection`): the most visited move.

  Returns:
    mctx.PolicyOutput: `action` [B] the most visited root action,
    `action_weights` [B, A] the root's visit distribution, `search_tree`.
  """
  selection = functools.partial(alphago_selection, c_puct=c_puct)
  tree = mctx.search(params=variables, rng_key=rng_key, root=root, recurrent_fn=recurrent_fn,
                     root_action_selection_fn=functools.partial(selection, depth=0),
                     interior_action_selection_fn=selection, num_simulations=num_simulations,
                     invalid_actions=invalid_actions)
  summary = tree.summary()
  action = jnp.argmax(summary.visit_counts, axis=-1).astype(jnp.int32)
  return mctx.PolicyOutput(action=action, action_weights=summary.visit_probs, search_tree=tree)


def pruned_policy(tree: mctx.Tree, *, pb_c_init: float, pb_c_base: float,
                  k: float, q_transform: str = "siblings") -> jax.Array:
  """[B, A] KataGo's policy target pruning of the root's visit distribution.

  Every child but the most visited one loses as many of its forced visits as it
  can while its PUCT score stays at most that of the most visited child: the
  visits forced on it beyond what PUCT alone would have given. A child left with
  one visit or none is dropped.
  """
  root = mctx.Tree.ROOT_INDEX

  def one(tree):
    visits = tree.children_visits[root].astype(jnp.float32)
    q, u = puct_scores(tree, root, pb_c_init=pb_c_init, pb_c_base=pb_c_base,
                       q_transform=q_transform)
    best = jnp.argmax(visits)
    best_score = q[best] + u[best] / (1.0 + visits[best])
    gap = best_score - q
    # The fewest visits at which the child's score is still <= the best's: u / (1 + n) <= gap.
    needed = jnp.where(gap > 0, jnp.ceil(u / jnp.maximum(gap, 1e-12) - 1.0), visits)
    floor = jnp.ceil(visits - forced_playouts(tree, root, k))
    kept = jnp.clip(jnp.maximum(floor, needed), 0.0, visits)
    kept = jnp.where(kept <= 1.0, 0.0, kept).at[best].set(visits[best])
    return kept / jnp.maximum(jnp.sum(kept), 1.0)

  return jax.vmap(one)(tree)


def forced_puct_policy(variables, rng_key: jax.Array, root: mctx.RootFnOutput, recurrent_fn,
                       num_simulations: int, *, invalid_actions: jax.Array,
                       dirichlet_fraction: float, dirichlet_alpha: float, pb_c_init: float,
                       pb_c_base: float, k: float,
                       q_transform: str = "siblings") -> mctx.PolicyOutput:
  """AlphaGo Zero's PUCT search with KataGo's forced playouts and policy target pruning.

  The root prior gets Dirichlet noise (noisy_root_logits) as in mctx.muzero_policy; inside the tree
  the selection is mctx's PUCT; at the root, forced_root_selection.

  Returns:
    mctx.PolicyOutput: `action` [B] the most visited root action,
    `action_weights` [B, A] the pruned visit distribution (pruned_policy),
    `search_tree`.
  """
  k_noise, k_search = jax.random.split(rng_key)
  root = root.replace(prior_logits=noisy_root_logits(
      k_noise, root.prior_logits, ~invalid_actions, fraction=dirichlet_fraction,
      alpha=dirichlet_alpha))
  tree = mctx.search(
      params=variables, rng_key=k_search, root=root, recurrent_fn=recurrent_fn,
      root_action_selection_fn=functools.partial(forced_root_selection, pb_c_init=pb_c_init,
                                                 pb_c_base=pb_c_base, k=k, q_transform=q_transform),
      interior_action_selection_fn=puct_selection(q_transform, pb_c_init=pb_c_init,
                                                  pb_c_base=pb_c_base),
      num_simulations=num_simulations, invalid_actions=invalid_actions)
  action = jnp.argmax(tree.summary().visit_counts, axis=-1).astype(jnp.int32)
  weights = pruned_policy(tree, pb_c_init=pb_c_init, pb_c_base=pb_c_base, k=k,
                          q_transform=q_transform)
  return mctx.PolicyOutput(action=action, action_weights=weights, search_tree=tree)
