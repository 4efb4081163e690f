"""Tree search with mctx over a real game, its leaves valued by an evaluator.

The search's embedding is the batch of game states itself: the recurrent
function steps the game, so illegal moves (superko included, in Go) are masked
inside the tree as well as at the root, and a game that ends inside the tree is
valued by its result. Rewards and values are from the point of view of the
player to move at the node above; an edge's discount is -1 when the player to
move changes and +1 when the same player moves again.
"""

import functools

import jax
import jax.numpy as jnp
import mctx

from agz_jax.game import Game
from agz_jax.search import reuse as reuse_lib
from agz_jax.search.config import SearchConfig
from agz_jax.search.evaluators import Evaluator

# (logits [B, A] masked, value [B], legal [B, A] bool): a root's evaluation.
Root = tuple[jax.Array, jax.Array, jax.Array]

# Evaluator keys are folded from the search's keys with numbers from here on:
# far beyond any index jax.random.split hands out, so they never repeat a key
# the search (or the caller) draws its own noise from.
_EVALUATOR_STREAMS = 0x7E5A0000


def evaluator_key(rng_key: jax.Array, stream: int) -> jax.Array:
  """A key for an evaluator call, derived from `rng_key` apart from every key split from it."""
  return jax.random.fold_in(rng_key, _EVALUATOR_STREAMS + stream)


def masked_logits(logits: jax.Array, legal: jax.Array) -> jax.Array:
  """Logits shifted to a maximum of 0, illegal actions at the dtype's minimum (idempotent)."""
  logits = logits - jnp.max(logits, axis=-1, keepdims=True)
  return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def legal_mask(game: Game, states, min_pass_moves: int = 0) -> jax.Array:
  """[B, A] bool: the legal actions, a pass withheld early in a game (SearchConfig)."""
  legal = game.legal_batch(states)
  pass_action = game.pass_action
  if min_pass_moves and pass_action is not None:
    others = jnp.any(legal.at[:, pass_action].set(False), axis=-1)
    early = (states.move_count < min_pass_moves) & others
    legal = legal.at[:, pass_action].set(legal[:, pass_action] & ~early)
  return legal


def evaluate(game: Game, evaluator: Evaluator, variables, states, rng_key: jax.Array,
             min_pass_moves: int = 0) -> Root:
  """The evaluator's prior (illegal actions masked) and value of a batch of positions.

  Args:
    rng_key: one PRNG key for the batch, passed to the evaluator.
    min_pass_moves: see SearchConfig.

  Returns:
    (logits [B, A], value [B] for the player to move, legal [B, A] bool).
  """
  logits, value = evaluator(variables, states, rng_key)
  legal = legal_mask(game, states, min_pass_moves)
  return masked_logits(logits, legal), value, legal


def make_recurrent_fn(game: Game, evaluator: Evaluator, min_pass_moves: int = 0):
  """The mctx recurrent function: play `action`, evaluate the new position."""

  def recurrent_fn(variables, rng_key, action, states):
    mover = states.to_play.astype(jnp.float32)
    was_over = states.terminated
    after = game.step_batch(states, action)
    logits, value, _ = evaluate(game, evaluator, variables, after, rng_key, min_pass_moves)
    ended_now = after.terminated & ~was_over
    reward = jnp.where(ended_now, game.results_where(after, ended_now) * mover, 0.0)
    over = after.terminated
    same_player = after.to_play == states.to_play
    output = mctx.RecurrentFnOutput(
        reward=reward,
        discount=jnp.where(over, 0.0, jnp.where(same_player, 1.0, -1.0)),
        prior_logits=logits,
        value=jnp.where(over, 0.0, value))
    return output, after

  return recurrent_fn


def run_search(game: Game, evaluator: Evaluator, variables, states, rng_key: jax.Array,
               search: SearchConfig, *, reuse: mctx.Tree | None = None,
               root: Root | None = None) -> mctx.PolicyOutput:
  """Searches from a batch of positions. Consumes `rng_key`.

  Args:
    game: the game.
    evaluator: values the leaves (and the root when `root` is not given).
    variables: the evaluator's variables.
    states: [B] game states to search from (not terminated).
    rng_key: one PRNG key for the batch, or [B] keys, one per game: then each
      game is searched on its own (vmap over searches of one game), its
      result independent of the games it is batched with, as sharded
      self-play needs.
    search: the settings.
    reuse: PUCT and AlphaGo only: a tree from an earlier search (of this function with the
      same num_simulations and reuse) in which the positions `states` were
      reached (any earlier tree of at most 2 * num_simulations + 1 nodes); the
      subtree under each position is kept with its visits and num_simulations
      more simulations are added, as AlphaGo Zero reuses the subtree of the
      move played. Trees then hold 2 * num_simulations + 1 nodes, so a large
      kept subtree leaves room for fewer new simulations. Gumbel search
      always starts afresh: its sequential halving plans the root's visits from
      zero.
    root: the roots' evaluation, when known (`evaluate`'s output).

  Returns:
    mctx.PolicyOutput: `action` [B], `action_weights` [B, A] (the policy
    target), `search_tree` (root value, visit counts).
  """
  if search.algorithm == "gumbel" and reuse is not None:
    raise ValueError("reuse: only the PUCT search reuses trees (Gumbel plans its root visits "
                     "from zero)")
  per_game = _per_game(rng_key)
  if root is None:
    root_key = evaluator_key(rng_key[0] if per_game else rng_key, 0)
    root = evaluate(game, evaluator, variables, states, root_key, search.min_pass_moves)
  if not per_game:
    return _policy(game, evaluator, variables, states, rng_key, root, reuse, search)
  if reuse is not None:
    raise ValueError("reuse: give one PRNG key for the batch, not one per game")
  if search.algorithm == "gumbel":  # the root's noise is the only randomness: one batched search
    noise = jax.vmap(lambda k: jax.random.gumbel(k, root[0].shape[1:], root[0].dtype))(rng_key)
    return gumbel_policy(game, evaluator, variables, states, root, search.gumbel_scale * noise,
                         search, rng_key=evaluator_key(rng_key[0], 1))

  # PUCT breaks ties between equal children with noise drawn for each game of
  # the batch: searches of one game each, vmapped, keep the games independent.
  def one(state, key, logits, value, legal):
    batch_of_one = lambda tree: jax.tree.map(lambda x: x[None], tree)
    out = _policy(game, evaluator, variables, batch_of_one(state), key,
                  batch_of_one((logits, value, legal)), None, search)
    return jax.tree.map(lambda x: x[0], out)

  return jax.vmap(one)(states, rng_key, *root)


def gumbel_policy(game: Game, evaluator: Evaluator, variables, states, root: Root,
                  gumbel: jax.Array, search: SearchConfig, *,
                  rng_key: jax.Array) -> mctx.PolicyOutput:
  """mctx.gumbel_muzero_policy with the root's Gumbel noise given, one row per game.

  The same search (mctx.search with mctx's Gumbel root and interior action
  selection and completed Q-values), action (the best of the most visited
  actions by noise + prior logit + completed Q) and improved policy; only the
  noise comes from the caller, so each game's can come from its own key.

  Args:
    root: (logits, value, legal) of `states`, as `evaluate` returns them.
    gumbel: [B, A] the root's noise, already scaled.
    rng_key: the key the simulations' evaluator keys are split from (the
      selection functions draw nothing from it).
  """
  logits, value, legal = root
  logits = masked_logits(logits, legal)
  num_simulations = search.num_simulations
  tree = mctx.search(
      params=variables, rng_key=rng_key,
      root=mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states),
      recurrent_fn=make_recurrent_fn(game, evaluator, search.min_pass_moves),
      root_action_selection_fn=functools.partial(
          mctx.gumbel_muzero_root_action_selection, num_simulations=num_simulations,
          max_num_considered_actions=search.max_num_considered_actions,
          qtransform=mctx.qtransform_completed_by_mix_value),
      interior_action_selection_fn=functools.partial(
          mctx.gumbel_muzero_interior_action_selection,
          qtransform=mctx.qtransform_completed_by_mix_value),
      num_simulations=num_simulations, invalid_actions=~legal,
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


def _per_game(rng_key: jax.Array) -> bool:
  """Whether `rng_key` is a batch of keys (one per game) rather than one key."""
  if jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key):
    return rng_key.ndim == 1
  return rng_key.ndim == 2


def _policy(game: Game, evaluator: Evaluator, variables, states, rng_key: jax.Array, root: Root,
            reuse: mctx.Tree | None, search: SearchConfig) -> mctx.PolicyOutput:
  """The mctx policy call of run_search on a batch, with one key."""
  logits, value, legal = root
  root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
  recurrent_fn = make_recurrent_fn(game, evaluator, search.min_pass_moves)
  if search.algorithm == "gumbel":
    return mctx.gumbel_muzero_policy(
        variables, rng_key, root, recurrent_fn, search.num_simulations,
        invalid_actions=~legal, max_num_considered_actions=search.max_num_considered_actions,
        gumbel_scale=search.gumbel_scale)
  capacity, loop_fn = search.num_simulations, jax.lax.fori_loop
  if reuse is not None:
    kept_tree, kept = reuse_lib.reroot(reuse, reuse_lib.find_node(reuse, states),
                                       2 * search.num_simulations + 1)
    capacity = 2 * search.num_simulations
    loop_fn = reuse_lib.reusing_loop(kept_tree, kept, search.num_simulations)
  if search.algorithm == "alphago":
    return alphago_policy(variables, rng_key, root, recurrent_fn, capacity, loop_fn=loop_fn,
                          invalid_actions=~legal, c_puct=search.c_puct)
  alpha = game.dirichlet_alpha if search.dirichlet_alpha is None else search.dirichlet_alpha
  if search.forced_playouts:
    return forced_puct_policy(
        variables, rng_key, root, recurrent_fn, capacity, loop_fn=loop_fn,
        invalid_actions=~legal, dirichlet_fraction=search.dirichlet_fraction,
        dirichlet_alpha=alpha, pb_c_init=search.pb_c_init, pb_c_base=search.pb_c_base,
        k=search.forced_playouts_k)
  return mctx.muzero_policy(
      variables, rng_key, root, recurrent_fn, capacity, loop_fn=loop_fn,
      invalid_actions=~legal, dirichlet_fraction=search.dirichlet_fraction,
      dirichlet_alpha=alpha, pb_c_init=search.pb_c_init, pb_c_base=search.pb_c_base)


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


def alphago_policy(variables, rng_key: jax.Array, root: mctx.RootFnOutput, recurrent_fn,
                   num_simulations: int, *, invalid_actions: jax.Array, c_puct: float,
                   loop_fn=jax.lax.fori_loop) -> mctx.PolicyOutput:
  """AlphaGo's search (mctx.search with `alphago_selection`): the most visited move.

  Returns:
    mctx.PolicyOutput: `action` [B] the most visited root action,
    `action_weights` [B, A] the root's visit distribution, `search_tree`.
  """
  selection = functools.partial(alphago_selection, c_puct=c_puct)
  tree = mctx.search(params=variables, rng_key=rng_key, root=root, recurrent_fn=recurrent_fn,
                     root_action_selection_fn=functools.partial(selection, depth=0),
                     interior_action_selection_fn=selection, num_simulations=num_simulations,
                     invalid_actions=invalid_actions, loop_fn=loop_fn)
  summary = tree.summary()
  action = jnp.argmax(summary.visit_counts, axis=-1).astype(jnp.int32)
  return mctx.PolicyOutput(action=action, action_weights=summary.visit_probs, search_tree=tree)


def _puct_scores(tree: mctx.Tree, node_index, *, pb_c_init: float, pb_c_base: float):
  """([A] Q term, [A] numerator of the prior term) of AlphaGo Zero's PUCT at a node.

  A child's score is q + u / (1 + N), as mctx.muzero_action_selection scores it.
  """
  node_visits = tree.node_visits[node_index]
  pb_c = pb_c_init + jnp.log((node_visits + pb_c_base + 1.0) / pb_c_base)
  u = jnp.sqrt(node_visits) * pb_c * jax.nn.softmax(tree.children_prior_logits[node_index])
  return mctx.qtransform_by_parent_and_siblings(tree, node_index), u


def forced_playouts(tree: mctx.Tree, node_index, k: float) -> jax.Array:
  """[A] KataGo's forced visits of a node's children: sqrt(k * P * sum of their visits)."""
  visits = tree.children_visits[node_index]
  prior = jax.nn.softmax(tree.children_prior_logits[node_index])
  return jnp.sqrt(k * prior * jnp.sum(visits))


def forced_root_selection(rng_key: jax.Array, tree: mctx.Tree, node_index, *, pb_c_init: float,
                          pb_c_base: float, k: float) -> jax.Array:
  """PUCT at the root, except that a visited child below its forced visits is chosen first.

  As in KataGo, only children that already have visits are forced (PUCT decides
  which moves get a first look); among several below their forced visits, the
  one PUCT prefers.
  """
  visits = tree.children_visits[node_index]
  q, u = _puct_scores(tree, node_index, pb_c_init=pb_c_init, pb_c_base=pb_c_base)
  score = q + u / (1.0 + visits) + 1e-7 * jax.random.uniform(rng_key, visits.shape)
  valid = ~tree.root_invalid_actions.astype(bool)
  short = valid & (visits > 0) & (visits < forced_playouts(tree, node_index, k))
  allowed = jnp.where(jnp.any(short), short, valid)
  return jnp.argmax(jnp.where(allowed, score, -jnp.inf)).astype(jnp.int32)


def pruned_policy(tree: mctx.Tree, *, pb_c_init: float, pb_c_base: float,
                  k: float) -> jax.Array:
  """[B, A] KataGo's policy target pruning of the root's visit distribution.

  Every child but the most visited one loses as many of its forced visits as it
  can while its PUCT score stays at most that of the most visited child: the
  visits forced on it beyond what PUCT alone would have given. A child left with
  one visit or none is dropped.
  """
  root = mctx.Tree.ROOT_INDEX

  def one(tree):
    visits = tree.children_visits[root].astype(jnp.float32)
    q, u = _puct_scores(tree, root, pb_c_init=pb_c_init, pb_c_base=pb_c_base)
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
                       loop_fn=jax.lax.fori_loop) -> mctx.PolicyOutput:
  """AlphaGo Zero's PUCT search with KataGo's forced playouts and policy target pruning.

  The root prior gets Dirichlet noise as in mctx.muzero_policy; inside the tree
  the selection is mctx's PUCT; at the root, forced_root_selection.

  Returns:
    mctx.PolicyOutput: `action` [B] the most visited root action,
    `action_weights` [B, A] the pruned visit distribution (pruned_policy),
    `search_tree`.
  """
  k_noise, k_search = jax.random.split(rng_key)
  probs = jax.nn.softmax(root.prior_logits)
  noise = jax.random.dirichlet(k_noise, jnp.full(probs.shape[-1:], dirichlet_alpha),
                               probs.shape[:-1])
  noisy = (1.0 - dirichlet_fraction) * probs + dirichlet_fraction * noise
  root = root.replace(prior_logits=masked_logits(jnp.log(jnp.maximum(noisy, 1e-30)),
                                                 ~invalid_actions))
  tree = mctx.search(
      params=variables, rng_key=k_search, root=root, recurrent_fn=recurrent_fn,
      root_action_selection_fn=functools.partial(forced_root_selection, pb_c_init=pb_c_init,
                                                 pb_c_base=pb_c_base, k=k),
      interior_action_selection_fn=functools.partial(mctx.muzero_action_selection,
                                                     pb_c_init=pb_c_init, pb_c_base=pb_c_base),
      num_simulations=num_simulations, invalid_actions=invalid_actions, loop_fn=loop_fn)
  action = jnp.argmax(tree.summary().visit_counts, axis=-1).astype(jnp.int32)
  weights = pruned_policy(tree, pb_c_init=pb_c_init, pb_c_base=pb_c_base, k=k)
  return mctx.PolicyOutput(action=action, action_weights=weights, search_tree=tree)
