"""A search that grows in steps until its time is up, in one compiled shape.

Players under a clock cannot know ahead how many simulations fit in their
time, and a search compiled for each simulation count (a static setting)
spends the time compiling. Here a game's searches share one tree size: `start`
makes a tree of `num_nodes` nodes holding the evaluated roots (and, with
`reuse`, the subtree kept from the previous search), and `grow` adds a number
of simulations given as an array, so the same two compiled programs serve every
move, every time budget and every simulation count. The caller grows the tree
in steps and stops when its time is up or the tree is full.

PUCT selection only (AlphaGo's or AlphaGo Zero's): Gumbel search plans its root
visits for a known number of simulations.
"""

import functools

import jax
import jax.numpy as jnp
import mctx

from agz_jax.game import Game
from agz_jax.search import leaf_batch
from agz_jax.search import reuse as reuse_lib
from agz_jax.search.config import SearchConfig
from agz_jax.search.evaluators import Evaluator
from agz_jax.search.action_selection import alphago_selection, puct_selection
from agz_jax.search.mcts import (evaluator_key, legal_mask, make_recurrent_fn, nodes_used,
                                 search_evaluator)
from agz_jax.search.policies import masked_logits, noisy_root_logits


def _selection(search: SearchConfig):
  """(root, interior) action selection functions of a PUCT search."""
  if search.algorithm == "alphago":
    select = functools.partial(alphago_selection, c_puct=search.c_puct)
    return functools.partial(select, depth=0), select
  if search.algorithm == "puct":
    select = puct_selection(search.qtransform, pb_c_init=search.pb_c_init,
                            pb_c_base=search.pb_c_base)
    return functools.partial(select, depth=0), select
  raise ValueError(f"a search grown in steps needs PUCT selection ('alphago' or 'puct'), "
                   f"not {search.algorithm!r}: Gumbel search plans its visits for a known count")


def _search(game: Game, evaluator: Evaluator, variables, rng_key: jax.Array, root, num_nodes: int,
            search: SearchConfig, invalid_actions: jax.Array, loop_fn) -> mctx.Tree:
  root_select, interior_select = _selection(search)
  return mctx.search(
      params=variables, rng_key=rng_key, root=root,
      recurrent_fn=make_recurrent_fn(game, evaluator, search.min_pass_moves),
      root_action_selection_fn=root_select, interior_action_selection_fn=interior_select,
      num_simulations=num_nodes - 1, invalid_actions=invalid_actions, loop_fn=loop_fn)


def start(game: Game, evaluator: Evaluator, variables, states, rng_key: jax.Array,
          search: SearchConfig, *, num_nodes: int, reuse: mctx.Tree | None = None) -> mctx.Tree:
  """A tree of `num_nodes` nodes with the roots evaluated and no simulation yet. Consumes
  `rng_key`.

  Args:
    states: [B] positions to search from (not terminated).
    num_nodes: the tree's size, the same for every search of a game (at least 2).
    reuse: an earlier tree of `num_nodes` nodes (of `start` / `grow`) in which the
      positions `states` were reached: the subtree under each is kept with its
      visits, the root's prior and value refreshed (search.reuse).

  Returns:
    The tree (mctx.Tree, [B] trees of `num_nodes` nodes).
  """
  if num_nodes < 2:
    raise ValueError(f"a search tree needs at least 2 nodes, got {num_nodes}")
  evaluator = search_evaluator(evaluator, search)

  def fresh(_):
    logits, value = evaluator(variables, states, evaluator_key(rng_key, 0))
    return logits.astype(jnp.float32), value.astype(jnp.float32)

  if reuse is None:
    logits, value = fresh(None)
    loop_fn = lambda lower, upper, body_fun, init_val: init_val
  else:
    if reuse.node_visits.shape[1] != num_nodes:
      raise ValueError(f"reuse: the earlier tree has {reuse.node_visits.shape[1]} nodes, "
                       f"this search {num_nodes}")
    kept_tree, kept = reuse_lib.reroot(reuse, reuse_lib.find_node(reuse, states), num_nodes)
    # A kept root was evaluated when it was expanded: its prior and value are reused and the
    # evaluator (rollouts, a network) runs only when some root is new.
    logits, value = jax.lax.cond(
        jnp.all(kept > 0), lambda _: (kept_tree.children_prior_logits[:, 0],
                                      kept_tree.raw_values[:, 0]), fresh, None)
    loop_fn = reuse_lib.reusing_loop(kept_tree, kept, 0)
  legal = legal_mask(game, states, search.min_pass_moves)
  logits = masked_logits(logits, legal)
  if search.algorithm == "puct" and search.dirichlet_fraction > 0:
    logits = noisy_root_logits(jax.random.fold_in(rng_key, 1), logits, legal,
                               fraction=search.dirichlet_fraction,
                               alpha=search.root_noise_alpha(game))
  root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
  return _search(game, evaluator, variables, jax.random.fold_in(rng_key, 2), root, num_nodes,
                 search, ~legal, loop_fn)


def grow(game: Game, evaluator: Evaluator, variables, tree: mctx.Tree, rng_key: jax.Array,
         search: SearchConfig, simulations: jax.Array, *, leaves: int = 1) -> mctx.Tree:
  """`tree` with `simulations` more simulations, or as many as its free nodes take. Consumes
  `rng_key`.

  Args:
    tree: a tree of `start` or `grow`.
    simulations: [] int, traced: any count runs in the same compiled program.
    leaves: leaves evaluated together per tree (static): 1 runs mctx's search, one leaf per
      simulation; more select them under a virtual loss (search.leaf_batch), one evaluation
      of every tree's leaves at a time, as an accelerator wants it.
  """
  evaluator = search_evaluator(evaluator, search)
  if leaves > 1:
    root_select, interior_select = _selection(search)
    return leaf_batch.grow(game, evaluator, variables, tree, rng_key, root_select,
                           interior_select, simulations, leaves=leaves,
                           min_pass_moves=search.min_pass_moves)
  num_nodes = tree.node_visits.shape[1]
  root = mctx.RootFnOutput(prior_logits=tree.children_prior_logits[:, 0],
                           value=tree.raw_values[:, 0],
                           embedding=jax.tree.map(lambda x: x[:, 0], tree.embeddings))
  loop_fn = reuse_lib.reusing_loop(tree, nodes_used(tree), simulations)
  return _search(game, evaluator, variables, rng_key, root, num_nodes, search,
                 tree.root_invalid_actions.astype(bool), loop_fn)


def policy_output(tree: mctx.Tree) -> mctx.PolicyOutput:
  """The most visited root action and the root's visit distribution, as the PUCT policies."""
  summary = tree.summary()
  action = jnp.argmax(summary.visit_counts, axis=-1).astype(jnp.int32)
  return mctx.PolicyOutput(action=action, action_weights=summary.visit_probs, search_tree=tree)
