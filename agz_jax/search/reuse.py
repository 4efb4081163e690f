"""Subtree reuse: a new search starts from the subtree of an earlier one that
holds the position reached, keeping its visits (AlphaGo Zero reuses the
subtree of the move played)."""

import jax
import jax.numpy as jnp
import mctx


def find_node(tree: mctx.Tree, states) -> jax.Array:
  """The most visited node of each searched tree whose position is exactly `states`.

  Positions are compared field by field (board, history, hashes, counters), so
  a node matches only when the network would see the same planes there.

  Returns:
    [B] int32 node index, -1 where no node holds the position.
  """
  def same(node_states, state):
    fields = jax.tree.map(lambda n, s: jnp.all((n == s[None]).reshape(n.shape[0], -1), axis=1),
                          node_states, state)
    return jnp.all(jnp.stack(jax.tree.leaves(fields)), axis=0)                 # [N]

  match = jax.vmap(same)(tree.embeddings, states) & (tree.node_visits > 0)   # [B, N]
  best = jnp.argmax(jnp.where(match, tree.node_visits, -1), axis=1)
  return jnp.where(jnp.any(match, axis=1), best, -1).astype(jnp.int32)


def reroot(tree: mctx.Tree, node: jax.Array,
           num_nodes: int | None = None) -> tuple[mctx.Tree, jax.Array]:
  """The subtree under `node` as a tree of `num_nodes` nodes, rooted at index 0.

  Node statistics, children and embeddings are kept; the other nodes are
  dropped and the kept ones renumbered in their old order (a child still comes
  after its parent, as mctx allocates them).

  Args:
    tree: a searched tree, [B, N, ...].
    node: [B] int32, the new root of each tree; -1 keeps nothing.
    num_nodes: nodes of the returned trees (default: as many as `tree`'s; not fewer).

  Returns:
    (tree, kept [B] int32 number of nodes kept).
  """
  size = tree.node_visits.shape[1]
  num_nodes = size if num_nodes is None else num_nodes
  if num_nodes < size:
    raise ValueError(f"reroot: {num_nodes} nodes cannot hold a subtree of a {size}-node tree")

  def one(t, r):
    n = t.node_visits.shape[0]

    def mark(i, below):
      parent = t.parents[i]
      return below.at[i].set((i == r) | ((parent >= 0) & below[jnp.maximum(parent, 0)]))

    below = jax.lax.fori_loop(0, n, mark, jnp.zeros(n, bool))
    new = jnp.where(below, jnp.cumsum(below) - 1, num_nodes)                 # num_nodes: dropped

    def move(x, fill):
      return jnp.full((num_nodes,) + x.shape[1:], fill, x.dtype).at[new].set(x, mode="drop")

    def renumber(index):
      return jnp.where(index >= 0, new[jnp.maximum(index, 0)], index)

    parents = renumber(move(t.parents, mctx.Tree.NO_PARENT)).at[0].set(mctx.Tree.NO_PARENT)
    out = t.replace(
        node_visits=move(t.node_visits, 0), raw_values=move(t.raw_values, 0),
        node_values=move(t.node_values, 0), parents=parents,
        action_from_parent=move(t.action_from_parent, mctx.Tree.NO_PARENT).at[0].set(
            mctx.Tree.NO_PARENT),
        children_index=renumber(move(t.children_index, mctx.Tree.UNVISITED)),
        children_prior_logits=move(t.children_prior_logits, 0),
        children_visits=move(t.children_visits, 0), children_rewards=move(t.children_rewards, 0),
        children_discounts=move(t.children_discounts, 0),
        children_values=move(t.children_values, 0),
        embeddings=jax.tree.map(lambda x: move(x, 0), t.embeddings))
    return out, jnp.sum(below).astype(jnp.int32)

  return jax.vmap(one)(tree, node)


def reusing_loop(reused: mctx.Tree, kept: jax.Array, num_simulations: int):
  """An mctx loop_fn that starts from `reused` and adds num_simulations simulations.

  mctx builds a fresh tree (root only) and numbers the node expanded by
  simulation i as i + 1; this loop swaps in the reused tree (with the fresh
  root's prior, value and invalid-action mask, so root noise and masks are the
  new search's) and starts at the first simulation whose node index is free in
  every tree of the batch. Trees that kept nothing use the fresh tree.
  """
  def loop_fn(lower, upper, body_fun, init_val):
    del lower
    key, fresh = init_val
    root = lambda x, f: x.at[:, 0].set(f[:, 0])
    merged = reused.replace(
        children_prior_logits=root(reused.children_prior_logits, fresh.children_prior_logits),
        raw_values=root(reused.raw_values, fresh.raw_values),
        root_invalid_actions=fresh.root_invalid_actions, extra_data=fresh.extra_data)
    some = kept > 0
    tree = jax.tree.map(
        lambda m, f: jnp.where(some.reshape((-1,) + (1,) * (m.ndim - 1)), m, f), merged, fresh)
    if isinstance(num_simulations, int) and num_simulations == 0:
      # No simulation to run: the loop's body (the evaluator) is not traced, so a search's
      # start compiles the evaluator once, for its roots.
      return key, tree
    first = jnp.maximum(jnp.max(kept), 1) - 1
    return jax.lax.fori_loop(first, jnp.minimum(first + num_simulations, upper), body_fun,
                             (key, tree))

  return loop_fn
