"""How a search chooses the child to visit at a node (mctx's action selection functions):
AlphaGo's rule, and AlphaGo Zero's PUCT with KataGo's forced playouts at the root."""

import functools

import jax
import jax.numpy as jnp
import mctx


def alphago_selection(rng_key: jax.Array, tree: mctx.Tree, node_index, depth, *,
                      c_puct: float) -> jax.Array:
  """AlphaGo's (2016) choice at a node: argmax of Q + c_puct P sqrt(sum N) / (1 + N).

  Q is the mean backed-up value of the child (0 while unvisited), not normalised;
  sum N is at least 1, so the first visit of a node follows its prior. Illegal
  children (masked prior logits) and the root's invalid actions are never chosen.
  """
  visits = tree.children_visits[node_index]
  logits = tree.children_prior_logits[node_index]
  legal = logits > jnp.finfo(logits.dtype).min / 2
  q = jnp.where(visits > 0, tree.qvalues(node_index), 0.0)
  u = c_puct * jax.nn.softmax(logits) * jnp.sqrt(jnp.maximum(jnp.sum(visits), 1)) / (1 + visits)
  score = q + u + 1e-7 * jax.random.uniform(rng_key, q.shape)  # ties broken at random
  invalid = tree.root_invalid_actions.astype(bool) & (depth == 0)
  return jnp.argmax(jnp.where(legal & ~invalid, score, -jnp.inf)).astype(jnp.int32)


def make_qtransform(name: str):
  """mctx's Q transform of SearchConfig.q_transform `name` ('siblings' or 'bounded')."""
  if name == "bounded":
    return functools.partial(mctx.qtransform_by_min_max, min_value=-1.0, max_value=1.0)
  if name == "siblings":
    return mctx.qtransform_by_parent_and_siblings
  raise ValueError(f"unknown Q transform {name!r}: 'siblings' or 'bounded'")


def puct_selection(q_transform: str, *, pb_c_init: float, pb_c_base: float):
  """mctx's PUCT action selection with the named Q transform."""
  return functools.partial(mctx.muzero_action_selection, pb_c_init=pb_c_init,
                           pb_c_base=pb_c_base, qtransform=make_qtransform(q_transform))


def puct_scores(tree: mctx.Tree, node_index, *, pb_c_init: float, pb_c_base: float,
                q_transform: str = "siblings"):
  """([A] Q term, [A] numerator of the prior term) of AlphaGo Zero's PUCT at a node.

  A child's score is q + u / (1 + N), as mctx.muzero_action_selection scores it with
  the named Q transform (SearchConfig.q_transform).
  """
  node_visits = tree.node_visits[node_index]
  pb_c = pb_c_init + jnp.log((node_visits + pb_c_base + 1.0) / pb_c_base)
  u = jnp.sqrt(node_visits) * pb_c * jax.nn.softmax(tree.children_prior_logits[node_index])
  return make_qtransform(q_transform)(tree, node_index), u


def forced_playouts(tree: mctx.Tree, node_index, k: float) -> jax.Array:
  """[A] KataGo's forced visits of a node's children: sqrt(k * P * sum of their visits)."""
  visits = tree.children_visits[node_index]
  prior = jax.nn.softmax(tree.children_prior_logits[node_index])
  return jnp.sqrt(k * prior * jnp.sum(visits))


def forced_root_selection(rng_key: jax.Array, tree: mctx.Tree, node_index, *, pb_c_init: float,
                          pb_c_base: float, k: float, q_transform: str = "siblings") -> jax.Array:
  """PUCT at the root, except that a visited child below its forced visits is chosen first.

  As in KataGo, only children that already have visits are forced (PUCT decides
  which moves get a first look); among several below their forced visits, the
  one PUCT prefers.
  """
  visits = tree.children_visits[node_index]
  q, u = puct_scores(tree, node_index, pb_c_init=pb_c_init, pb_c_base=pb_c_base,
                     q_transform=q_transform)
  score = q + u / (1.0 + visits) + 1e-7 * jax.random.uniform(rng_key, visits.shape)
  valid = ~tree.root_invalid_actions.astype(bool)
  short = valid & (visits > 0) & (visits < forced_playouts(tree, node_index, k))
  allowed = jnp.where(jnp.any(short), short, valid)
  return jnp.argmax(jnp.where(allowed, score, -jnp.inf)).astype(jnp.int32)
