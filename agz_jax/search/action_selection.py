"""How a search chooses the child to visit at a node (mctx's action selection functions):
AlphaGo's rule, and AlphaGo Zero's PUCT with KataGo's forced playouts at the root."""

import dataclasses
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


FIRST_PLAY = ("loss", "parent", "reduction")


@dataclasses.dataclass(frozen=True)
class QTransform:
  """How a child's Q enters its PUCT score, as an mctx Q transform (tree, node) -> [A] in [0, 1].

  Attributes:
    name: 'siblings' (stretched between the lowest and highest Q of the node and its
      visited children, mctx's default) or 'bounded' (the values' own range [-1, 1]).
    first_play: the value an unvisited child counts with (first-play urgency): 'loss' (the
      lowest: mctx's), 'parent' (the node's own mean value, as Leela Zero found best for a
      weak network) or 'reduction' (the node's value less fpu_reduction * sqrt(the prior
      mass of the visited children), KataGo's and Leela Zero's later rule: the more of the
      policy was looked at, the less an unlooked-at move is worth). An illegal child (its
      prior logit masked) is never worth a first play: it counts as the lowest value.
    fpu_reduction: the reduction's scale, on the [-1, 1] value scale.
  """

  name: str = "siblings"
  first_play: str = "loss"
  fpu_reduction: float = 0.0

  def __post_init__(self):
    if self.name not in ("siblings", "bounded"):
      raise ValueError(f"unknown Q transform {self.name!r}: 'siblings' or 'bounded'")
    if self.first_play not in FIRST_PLAY:
      raise ValueError(f"unknown first-play urgency {self.first_play!r}: one of "
                       f"{', '.join(FIRST_PLAY)} (search.first_play, --first-play)")

  def __call__(self, tree: mctx.Tree, node_index) -> jax.Array:
    if self.first_play == "loss":  # mctx's own transforms
      if self.name == "bounded":
        return mctx.qtransform_by_min_max(tree, node_index, min_value=-1.0, max_value=1.0)
      return mctx.qtransform_by_parent_and_siblings(tree, node_index)
    visits = tree.children_visits[node_index]
    node_value = tree.node_values[node_index]
    logits = tree.children_prior_logits[node_index]
    # Illegal children (masked logits) keep out of the first play and of the stretch: the
    # search would otherwise spend simulations on them inside the tree, where only the
    # root's invalid actions are masked.
    counted = (visits > 0) | (logits > jnp.finfo(logits.dtype).min / 2)
    fpu = node_value
    if self.first_play == "reduction":
      visited_prior = jnp.sum(jnp.where(visits > 0, jax.nn.softmax(logits), 0.0))
      fpu = node_value - self.fpu_reduction * jnp.sqrt(visited_prior)
    values = jnp.where(visits > 0, tree.qvalues(node_index), jnp.clip(fpu, -1.0, 1.0))
    if self.name == "bounded":
      return jnp.where(counted, (values + 1.0) / 2.0, 0.0)
    low = jnp.minimum(node_value, jnp.min(jnp.where(counted, values, jnp.inf)))
    high = jnp.maximum(node_value, jnp.max(jnp.where(counted, values, -jnp.inf)))
    return jnp.where(counted, (values - low) / jnp.maximum(high - low, 1e-8), 0.0)


def make_qtransform(q_transform) -> QTransform:
  """The QTransform of a name ('siblings' or 'bounded', first play a loss) or a QTransform."""
  return q_transform if isinstance(q_transform, QTransform) else QTransform(q_transform)


def puct_selection(q_transform, *, pb_c_init: float, pb_c_base: float):
  """mctx's PUCT action selection with a Q transform (a name or a QTransform)."""
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
