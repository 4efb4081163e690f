"""Several leaves of one tree per step (search.leaf_batch): one leaf a step is mctx's search node
for node, the virtual loss spreads a step's leaves, the kept tree holds no virtual visit and its
values are the means of what was evaluated, trees of a batch do not mix, a full tree stops."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go, search
from agz_jax.game import Game

import helpers

CFG = go.GoConfig(size=5, komi=0.5)
GAME = Game(go, CFG)
NODES = 40


def board_evaluator(variables, states, rng_key):
  """A fixed prior without ties and a value that depends on the position (for the player to
  move): every node of a tree gets its own value, which the backups must carry up exactly."""
  del rng_key
  batch = states.board.shape[0]
  logits = jnp.broadcast_to(variables["logits"], (batch, CFG.num_actions))
  black = jnp.tanh(states.board.astype(jnp.float32) @ variables["weights"])
  return logits, black * states.to_play.astype(jnp.float32)


def variables(seed=0):
  rng = np.random.default_rng(seed)
  logits = rng.normal(0.0, 1.0, CFG.num_actions).astype(np.float32)
  logits[CFG.pass_action] = -30.0
  return {"logits": jnp.asarray(logits),
          "weights": jnp.asarray(rng.normal(0.0, 0.6, CFG.num_points), jnp.float32)}


def settings(algorithm):
  return helpers.search_config(algorithm=algorithm, num_simulations=NODES - 1, c_puct=5.0,
                               dirichlet_fraction=0.0, q_transform="bounded", first_play="parent")


@functools.cache
def _start(algorithm="alphago"):
  config = settings(algorithm)
  return jax.jit(lambda v, states, key: search.anytime.start(
      GAME, board_evaluator, v, states, key, config, num_nodes=NODES))


@functools.cache
def _grow(algorithm="alphago", leaves=1):
  config = settings(algorithm)
  return jax.jit(lambda v, tree, key, n: search.anytime.grow(
      GAME, board_evaluator, v, tree, key, config, n, leaves=leaves))


def batch(*states):
  return jax.tree.map(lambda *x: jnp.stack([jnp.asarray(v) for v in x]), *states)


def position():
  return go.play(CFG, [go.gtp_to_action(CFG, v) for v in ("C3", "B2", "D4")])


def grown(states, steps, *, algorithm="alphago", leaves=1, v=None):
  v = variables() if v is None else v
  tree = _start(algorithm)(v, states, jax.random.PRNGKey(0))
  for i, n in enumerate(steps):
    tree = _grow(algorithm, leaves)(v, tree, jax.random.PRNGKey(i + 1), jnp.int32(n))
  return tree


def check_tree(tree, b=0):
  """The kept tree of batch element `b` is a plain search tree: each node's visits are one
  (its evaluation) plus its children's, each edge's visits its child's, each node's value the
  mean of its own evaluation and its children's backed-up values, each edge's reward and
  discount the game's (no virtual loss left), each node's position its parent's after the
  edge's move and its raw value the evaluator's there."""
  t = jax.tree.map(lambda x: np.asarray(x[b]), tree)
  v = variables()
  used = int(search.anytime.nodes_used(tree)[b])
  for n in range(used):
    kids = [(a, int(c)) for a, c in enumerate(t.children_index[n]) if c >= 0]
    assert t.node_visits[n] == 1 + sum(t.node_visits[c] for _, c in kids), n
    total = t.raw_values[n]
    for a, c in kids:
      assert t.children_visits[n, a] == t.node_visits[c]
      assert t.parents[c] == n and t.action_from_parent[c] == a
      assert t.children_discounts[n, a] in (-1.0, 0.0, 1.0)
      total += t.node_visits[c] * (t.children_rewards[n, a]
                                   + t.children_discounts[n, a] * t.node_values[c])
    np.testing.assert_allclose(t.node_values[n], total / t.node_visits[n], atol=1e-5)
    assert (t.children_visits[n][t.children_index[n] < 0] == 0).all()
    if n:
      parent = jax.tree.map(lambda x: jnp.asarray(x[t.parents[n]]), t.embeddings)
      state = go.step(CFG, parent, int(t.action_from_parent[n]))
      np.testing.assert_array_equal(np.asarray(state.board), t.embeddings.board[n])
      _, value = board_evaluator(v, batch(state), None)
      np.testing.assert_allclose(t.raw_values[n], float(value[0]), atol=1e-6)
  assert (t.node_visits[used:] == 0).all()
  return used


def test_one_leaf_a_step_is_mctx_s_search_node_for_node():
  states = batch(position())
  mctx_tree = grown(states, (3, 9))
  # The virtual-loss path with one leaf a step (called directly: grow sends leaves=1 to mctx).
  config = settings("alphago")
  root_select, interior_select = search.anytime._selection(config)
  tree = _start()(variables(), states, jax.random.PRNGKey(0))
  batched = jax.jit(lambda v, t, k, n: search.leaf_batch.grow(
      GAME, board_evaluator, v, t, k, root_select, interior_select, n, leaves=1))
  for i, n in enumerate((3, 9)):
    tree = batched(variables(), tree, jax.random.PRNGKey(i + 1), jnp.int32(n))
  assert int(search.anytime.nodes_used(tree)[0]) == 13
  for name in ("node_visits", "children_index", "parents", "children_visits"):
    np.testing.assert_array_equal(getattr(tree, name), getattr(mctx_tree, name), err_msg=name)
  np.testing.assert_allclose(tree.node_values, mctx_tree.node_values, atol=1e-6)
  np.testing.assert_allclose(tree.children_values, mctx_tree.children_values, atol=1e-6)


def test_the_virtual_loss_spreads_one_step_s_leaves_over_the_root_s_children():
  states = batch(position())
  tree = grown(states, (8,), leaves=8)
  # Without the virtual loss every selection of the step would have taken the same edge.
  config = settings("alphago")
  root_select, interior_select = search.anytime._selection(config)
  start = _start()(variables(), states, jax.random.PRNGKey(0))
  one = jax.tree.map(lambda x: x[0], start)
  first = [search.leaf_batch.descend(one, jax.random.PRNGKey(k), root_select, interior_select)
           for k in range(3)]
  assert len({(int(n), int(a)) for n, a in first}) == 1
  assert check_tree(tree) == 9
  root_children = tree.children_index[0, 0]
  assert int(jnp.sum(root_children >= 0)) == 8 and int(tree.node_visits[0, 0]) == 9


def test_the_kept_tree_holds_plain_visits_and_means_of_the_evaluations():
  for algorithm in ("alphago", "puct"):
    tree = grown(batch(position()), (5, 16, 7), algorithm=algorithm, leaves=4)
    used = check_tree(tree)
    # 28 leaves evaluated, each kept unless a step chose it twice.
    assert 20 < used <= 29, (algorithm, used)
    assert int(tree.node_visits[0, 0]) == used


def test_trees_of_one_batch_grow_as_each_alone():
  a, b = position(), go.play(CFG, [go.gtp_to_action(CFG, "B4")])
  together = grown(batch(a, b), (12, 6), leaves=4)
  for i, state in enumerate((a, b)):
    alone = grown(batch(state), (12, 6), leaves=4)
    check_tree(together, i)
    for name in ("node_visits", "children_index"):
      np.testing.assert_array_equal(getattr(together, name)[i], getattr(alone, name)[0])
    np.testing.assert_allclose(together.node_values[i], alone.node_values[0], atol=1e-6)


def test_a_full_tree_takes_no_more_leaves():
  tree = grown(batch(position()), (NODES + 20, 8), leaves=8)
  assert check_tree(tree) == NODES == int(tree.node_visits[0, 0])
