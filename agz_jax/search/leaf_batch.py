"""Several leaves of one tree per step, chosen under a virtual loss and evaluated as one batch.

mctx runs one simulation per tree at a time: a player with one tree (a GTP engine on one
accelerator) sends the network one position per call, and the device idles between them.
Here a step of `grow` selects `leaves` leaves of each tree one after another; after each
selection every edge on its path counts one more visit, lost for the player who chose it (a
virtual loss, as Leela Zero and KataGo batch a tree's leaves), so that the next selection
leans elsewhere. The leaves of all the trees are then evaluated in one call, expanded and
backed up in the order they were chosen. The virtual visits live only in the copy of the tree
the selections read; the tree that is kept never holds them.

A leaf chosen twice in one step (the virtual loss did not turn the later selection away) is
evaluated twice and kept once: the step then adds fewer nodes than it evaluated. With
`leaves` = 1 a step is one mctx simulation, node for node.

Trees are mctx.Tree values of `search.anytime` (a node per expansion, numbered in order),
so `anytime.nodes_used`, `policy_output` and tree reuse read them as they read mctx's.
"""

import jax
import jax.numpy as jnp
import mctx

from agz_jax.game import Game
from agz_jax.search.evaluators import Evaluator
from agz_jax.search.mcts import make_recurrent_fn, nodes_used

UNVISITED = mctx.Tree.UNVISITED
ROOT = mctx.Tree.ROOT_INDEX


def descend(tree: mctx.Tree, rng_key: jax.Array, root_select, interior_select):
  """(node, action): the edge out of `tree` (one tree, no batch axis) that a simulation would
  expand, following the selection functions from the root until an unexpanded child."""

  def step(carry):
    key, node, _, depth, _ = carry
    key, choose = jax.random.split(key)
    action = jax.lax.cond(depth == 0, lambda: root_select(choose, tree, node),
                          lambda: interior_select(choose, tree, node, depth))
    child = tree.children_index[node, action]
    return key, child, (node, action), depth + 1, child != UNVISITED

  start = (rng_key, jnp.int32(ROOT), (jnp.int32(ROOT), jnp.int32(0)), jnp.int32(0), True)
  *_, edge, _, _ = jax.lax.while_loop(lambda c: c[-1], step, start)
  return edge


def _lose_edge(tree: mctx.Tree, node, action, on) -> mctx.Tree:
  """One more visit of edge (node, action), lost for the player to move at `node`, where `on`.

  The edge's Q becomes (Q n - 1) / (n + 1) (-1 on a first visit). It is held in the edge's
  reward with a zero discount, which tree.qvalues reads as the Q itself: every selection rule
  sees the loss without knowing of it.
  """
  size = tree.node_visits.shape[0]
  row = jnp.where(on, node, size)  # out of range: the writes below are dropped
  visits = tree.children_visits[node, action]
  q = jnp.where(visits > 0, tree.qvalues(node)[action], 0.0)
  lost = (q * visits - 1.0) / (visits + 1.0)
  return tree.replace(
      children_visits=tree.children_visits.at[row, action].add(1, mode="drop"),
      children_rewards=tree.children_rewards.at[row, action].set(lost, mode="drop"),
      children_discounts=tree.children_discounts.at[row, action].set(0.0, mode="drop"))


def add_virtual_loss(tree: mctx.Tree, node, action) -> mctx.Tree:
  """`tree` (one tree) as the next selection should see it once the edge (node, action) is
  pending: each edge from the root down to it one visit more and lost, each node on the way
  one visit more."""
  tree = _lose_edge(tree, node, action, True)

  def up(carry):
    tree, node = carry
    parent = tree.parents[node]
    tree = tree.replace(node_visits=tree.node_visits.at[node].add(1))
    tree = _lose_edge(tree, jnp.maximum(parent, 0), tree.action_from_parent[node], parent >= 0)
    return tree, parent

  tree, _ = jax.lax.while_loop(lambda c: c[1] >= 0, up, (tree, jnp.asarray(node, jnp.int32)))
  return tree


def select(tree: mctx.Tree, rng_key: jax.Array, leaves: int, root_select, interior_select):
  """([leaves] nodes, [leaves] actions): the edges to expand, each chosen with the virtual
  losses of those before it (one tree)."""

  def choose(k, carry):
    seen, nodes, actions = carry
    node, action = descend(seen, jax.random.fold_in(rng_key, k), root_select, interior_select)
    return add_virtual_loss(seen, node, action), nodes.at[k].set(node), actions.at[k].set(action)

  empty = jnp.zeros(leaves, jnp.int32)
  _, nodes, actions = jax.lax.fori_loop(0, leaves, choose, (tree, empty, empty))
  return nodes, actions


def backup(tree: mctx.Tree, leaf) -> mctx.Tree:
  """`tree` (one tree) with the value of node `leaf` added to every node above it; the root
  as `leaf` changes nothing. Values are for the player to move at each node: an edge's reward
  and discount carry them up (mctx's convention)."""

  def up(carry):
    tree, value, node = carry
    parent, action = tree.parents[node], tree.action_from_parent[node]
    value = tree.children_rewards[parent, action] + tree.children_discounts[parent, action] * value
    visits = tree.node_visits[parent]
    return tree.replace(
        node_values=tree.node_values.at[parent].set(
            (tree.node_values[parent] * visits + value) / (visits + 1)),
        node_visits=tree.node_visits.at[parent].set(visits + 1),
        children_values=tree.children_values.at[parent, action].set(tree.node_values[node]),
        children_visits=tree.children_visits.at[parent, action].add(1)), value, parent

  leaf = jnp.asarray(leaf, jnp.int32)
  tree, _, _ = jax.lax.while_loop(lambda c: c[2] != ROOT, up, (tree, tree.node_values[leaf], leaf))
  return tree


def insert(tree: mctx.Tree, nodes, actions, step: mctx.RecurrentFnOutput, states, used,
           wanted) -> mctx.Tree:
  """`tree` (one tree) with the evaluated leaves expanded and backed up in order: leaf k, the
  child `actions[k]` of node `nodes[k]` evaluated as `step[k]` at position `states[k]`, becomes
  node `used` (then `used` + 1, ...) where `wanted[k]`, the child is still unexpanded and a node
  is free."""
  size = tree.node_visits.shape[0]

  def one(k, carry):
    tree, used = carry
    node, action = nodes[k], actions[k]
    keep = wanted[k] & (tree.children_index[node, action] == UNVISITED) & (used < size)
    new = jnp.where(keep, used, size)  # out of range: nothing written
    row = jnp.where(keep, node, size)
    put = lambda x, value: x.at[new].set(value, mode="drop")
    edge = lambda x, value: x.at[row, action].set(value, mode="drop")
    tree = tree.replace(
        node_visits=put(tree.node_visits, 1),
        raw_values=put(tree.raw_values, step.value[k]),
        node_values=put(tree.node_values, step.value[k]),
        children_prior_logits=put(tree.children_prior_logits, step.prior_logits[k]),
        embeddings=jax.tree.map(lambda x, s: put(x, s[k]), tree.embeddings, states),
        parents=put(tree.parents, node),
        action_from_parent=put(tree.action_from_parent, action),
        children_index=edge(tree.children_index, new),
        children_rewards=edge(tree.children_rewards, step.reward[k]),
        children_discounts=edge(tree.children_discounts, step.discount[k]))
    return backup(tree, jnp.where(keep, new, ROOT)), used + keep.astype(used.dtype)

  tree, _ = jax.lax.fori_loop(0, nodes.shape[0], one, (tree, jnp.asarray(used, jnp.int32)))
  return tree


def grow(game: Game, evaluator: Evaluator, variables, tree: mctx.Tree, rng_key: jax.Array,
         root_select, interior_select, simulations: jax.Array, *, leaves: int,
         min_pass_moves: int = 0) -> mctx.Tree:
  """`tree` ([B] trees) with `simulations` more leaves evaluated in each, `leaves` at a time
  (the last step fewer); fewer nodes are added where a step chose a leaf twice or the tree is
  full. Consumes `rng_key`.

  Args:
    root_select, interior_select: mctx action selection functions (search.anytime's).
    simulations: [] int, traced.
    leaves: leaves per step and tree, static: one evaluation of B * leaves positions.
  """
  if leaves < 1:
    raise ValueError(f"a search step needs at least one leaf, got {leaves}")
  recurrent_fn = make_recurrent_fn(game, evaluator, min_pass_moves)
  batch = tree.node_visits.shape[0]

  def step(i, carry):
    tree, key = carry
    key, choose, evaluate = jax.random.split(key, 3)
    nodes, actions = jax.vmap(select, (0, 0, None, None, None))(
        tree, jax.random.split(choose, batch), leaves, root_select, interior_select)
    rows = jnp.arange(batch)[:, None]
    states = jax.tree.map(lambda x: x[rows, nodes].reshape((batch * leaves,) + x.shape[2:]),
                          tree.embeddings)
    out, after = recurrent_fn(variables, evaluate, actions.reshape(-1), states)
    split = lambda x: x.reshape((batch, leaves) + x.shape[1:])
    out, after = jax.tree.map(split, out), jax.tree.map(split, after)
    used = nodes_used(tree)
    wanted = jnp.arange(leaves) < simulations - i * leaves
    tree = jax.vmap(insert, (0, 0, 0, 0, 0, 0, None))(tree, nodes, actions, out, after, used,
                                                       wanted)
    return tree, key

  steps = (jnp.asarray(simulations, jnp.int32) + leaves - 1) // leaves
  tree, _ = jax.lax.fori_loop(0, steps, step, (tree, rng_key))
  return tree
