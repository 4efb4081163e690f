"""A search grown in steps (search.anytime): the same tree as one search, one compiled program
for every step size, a kept subtree whose root is not evaluated again, a tree that fills up."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go, search
from agz_jax.game import Game

import helpers

CFG = go.GoConfig(size=5, komi=0.5)
GAME = Game(go, CFG)
NODES = 24
TRACES = {"grow": 0}


def settings(algorithm="alphago", **overrides):
  return helpers.search_config(**{"algorithm": algorithm, "num_simulations": NODES - 1,
                                  "c_puct": 5.0, "dirichlet_fraction": 0.0, **overrides})


def noisy_value_evaluator(variables, states, rng_key):
  """fake_evaluator's prior, and a value drawn from the key: a second evaluation of a
  position would give it another value."""
  logits, _ = helpers.fake_evaluator(variables, states, rng_key)
  return logits, jax.random.uniform(rng_key, states.to_play.shape, minval=-1.0, maxval=1.0)


@functools.cache
def _start(algorithm="alphago", evaluator=helpers.fake_evaluator, num_nodes=NODES, **overrides):
  config = settings(algorithm, **overrides)
  return jax.jit(lambda variables, states, key, reuse: search.anytime.start(
      GAME, evaluator, variables, states, key, config, num_nodes=num_nodes, reuse=reuse))


@functools.cache
def _grow(algorithm="alphago", evaluator=helpers.fake_evaluator):
  config = settings(algorithm)

  def grow(variables, tree, key, simulations):
    TRACES["grow"] += 1
    return search.anytime.grow(GAME, evaluator, variables, tree, key, config, simulations)
  return jax.jit(grow)


def one(state):
  return jax.tree.map(lambda x: jnp.asarray(x)[None], state)


def distinct_logits(seed=0):
  """Priors without ties, so that the selection needs no tie-breaking noise."""
  logits = np.random.default_rng(seed).normal(0.0, 1.0, CFG.num_actions).astype(np.float32)
  logits[CFG.pass_action] = -30.0
  return logits


def position():
  return go.play(CFG, [go.gtp_to_action(CFG, v) for v in ("C3", "B2", "D4")])


def subtree(tree, node):
  """The nodes under `node` (itself included) of batch element 0, by walking children_index."""
  children = np.asarray(tree.children_index[0])
  out, todo = [], [node]
  while todo:
    n = todo.pop()
    out.append(n)
    todo.extend(int(c) for c in children[n] if c >= 0)
  return out


def grown(variables, state, steps, seed=0, evaluator=helpers.fake_evaluator):
  key = jax.random.PRNGKey(seed)
  tree = _start(evaluator=evaluator)(variables, one(state), key, None)
  for i, n in enumerate(steps):
    tree = _grow(evaluator=evaluator)(variables, tree, jax.random.fold_in(key, i + 1),
                                      jnp.int32(n))
  return tree


def test_a_search_grown_in_steps_is_the_search_run_at_once():
  # A deterministic evaluator and a prior without ties: AlphaGo's selection needs no noise,
  # so 1 + 2 + 0 + 4 + 5 simulations in steps build the tree that 12 at once build.
  variables = helpers.fake_variables(CFG.num_actions, distinct_logits(), 0.0)
  state = position()
  tree = grown(variables, state, (1, 2, 0, 4, 5))
  at_once = jax.jit(functools.partial(
      search.run_search, GAME, helpers.fake_evaluator,
      search=settings().replace(num_simulations=12)))(variables, one(state),
                                                      jax.random.PRNGKey(9)).search_tree
  assert int(search.anytime.nodes_used(tree)[0]) == 13
  np.testing.assert_array_equal(tree.node_visits[0, :13], at_once.node_visits[0])
  np.testing.assert_array_equal(tree.children_index[0, :13], at_once.children_index[0])
  np.testing.assert_allclose(tree.node_values[0, :13], at_once.node_values[0], atol=1e-6)
  np.testing.assert_array_equal(tree.node_visits[0, 13:], 0)
  out = search.anytime.policy_output(tree)
  visits = np.asarray(at_once.summary().visit_counts[0])
  assert int(out.action[0]) == int(np.argmax(visits))
  np.testing.assert_allclose(out.action_weights[0], visits / visits.sum(), atol=1e-6)


def test_every_step_size_runs_in_one_compiled_program():
  variables = helpers.fake_variables(CFG.num_actions, distinct_logits(1), 0.0)
  grown(variables, position(), (1,))
  before = TRACES["grow"]
  grown(variables, position(), (3, 7, 2), seed=1)
  grown(variables, go.init(CFG), (5,), seed=2)
  assert TRACES["grow"] == before == 1


def test_a_full_tree_takes_no_more_simulations():
  variables = helpers.fake_variables(CFG.num_actions, distinct_logits(2), 0.0)
  tree = grown(variables, position(), (NODES + 10, 5))
  assert int(search.anytime.nodes_used(tree)[0]) == NODES
  assert int(tree.node_visits[0, 0]) == NODES  # the root's evaluation and NODES - 1 simulations
  assert int(np.asarray(tree.summary().visit_counts[0]).sum()) == NODES - 1


def test_a_kept_subtree_goes_on_and_its_root_is_not_evaluated_again():
  variables = helpers.fake_variables(CFG.num_actions, distinct_logits(3), 0.0)
  state = position()
  tree = grown(variables, state, (14,), evaluator=noisy_value_evaluator)
  visits = np.asarray(tree.children_visits[0, 0])
  best = int(visits.argmax())
  child = int(tree.children_index[0, 0, best])
  assert visits[best] > 1
  after = go.step(CFG, state, best)
  start = _start(evaluator=noisy_value_evaluator)
  kept = start(variables, one(after), jax.random.PRNGKey(5), tree)
  # The child's visits, value and raw evaluation come along: no new rollout of the root.
  assert int(kept.node_visits[0, 0]) == int(tree.node_visits[0, child])
  assert float(kept.raw_values[0, 0]) == float(tree.raw_values[0, child])
  np.testing.assert_allclose(kept.node_values[0, 0], tree.node_values[0, child], atol=1e-6)
  used = int(search.anytime.nodes_used(kept)[0])
  assert used == len(subtree(tree, child)) > 1
  more = _grow(evaluator=noisy_value_evaluator)(variables, kept, jax.random.PRNGKey(6),
                                                jnp.int32(4))
  assert int(more.node_visits[0, 0]) == int(tree.node_visits[0, child]) + 4
  assert int(search.anytime.nodes_used(more)[0]) == used + 4
  # The grown tree is kept in turn at the same position (as repeated analysis does).
  again = start(variables, one(after), jax.random.PRNGKey(7), more)
  assert int(again.node_visits[0, 0]) == int(more.node_visits[0, 0])
  assert int(search.anytime.nodes_used(again)[0]) == used + 4
  # A position the tree never reached is evaluated afresh: as a search with nothing kept.
  legal = np.asarray(go.legal_actions(CFG, state))
  elsewhere = go.step(CFG, state, int(np.flatnonzero(legal & (visits == 0))[0]))
  fresh = start(variables, one(elsewhere), jax.random.PRNGKey(5), tree)
  assert int(fresh.node_visits[0, 0]) == 1 and int(search.anytime.nodes_used(fresh)[0]) == 1
  alone = start(variables, one(elsewhere), jax.random.PRNGKey(5), None)
  assert float(fresh.raw_values[0, 0]) == float(alone.raw_values[0, 0])
  np.testing.assert_array_equal(fresh.children_prior_logits[0, 0],
                                alone.children_prior_logits[0, 0])


def test_root_noise_of_the_puct_search_stays_on_legal_moves():
  variables = helpers.fake_variables(CFG.num_actions, distinct_logits(4), 0.0)
  state = position()
  start = _start("puct", dirichlet_fraction=0.25, dirichlet_alpha=0.3)
  tree = start(variables, one(state), jax.random.PRNGKey(0), None)
  prior = np.asarray(jax.nn.softmax(tree.children_prior_logits[0, 0]))
  legal = np.asarray(go.legal_actions(CFG, state))
  np.testing.assert_allclose(prior.sum(), 1.0, atol=1e-5)
  assert prior[~legal].max() < 1e-12
  plain = np.asarray(jax.nn.softmax(np.where(legal, distinct_logits(4), -np.inf)))
  assert np.abs(prior - plain).max() > 1e-3  # the noise moved it
  tree = _grow("puct")(variables, tree, jax.random.PRNGKey(1), jnp.int32(10))
  assert np.asarray(tree.summary().visit_counts[0])[~legal].sum() == 0


def test_gumbel_search_is_refused_with_a_reason():
  with pytest.raises(ValueError, match="needs PUCT selection"):
    _start("gumbel")(helpers.fake_variables(CFG.num_actions), one(go.init(CFG)),
                     jax.random.PRNGKey(0), None)
