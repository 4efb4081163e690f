"""Tree search with mctx over a real game, its leaves valued by an evaluator.

The search's embedding is the batch of game states itself: the recurrent
function steps the game, so illegal moves (superko included, in Go) are masked
inside the tree as well as at the root, and a game that ends inside the tree is
valued by its result. Rewards and values are from the point of view of the
player to move at the node above; an edge's discount is -1 when the player to
move changes and +1 when the same player moves again.

This module is the search loop (the root's evaluation, the recurrent function, which policy
runs); the policies themselves are in search.policies, their choice of a child at a node in
search.action_selection, as mctx splits them.
"""

import jax
import jax.numpy as jnp
import mctx

from agz_jax.game import Game
from agz_jax.search.config import SearchConfig
from agz_jax.search.evaluators import Evaluator
from agz_jax.search.policies import (alphago_policy, forced_puct_policy, gumbel_policy,
                                     masked_logits)

# (logits [B, A] masked, value [B], legal [B, A] bool): a root's evaluation.
Root = tuple[jax.Array, jax.Array, jax.Array]

# Evaluator keys are folded from the search's keys with numbers from here on:
# far beyond any index jax.random.split hands out, so they never repeat a key
# the search (or the caller) draws its own noise from.
_EVALUATOR_STREAMS = 0x7E5A0000


def evaluator_key(rng_key: jax.Array, stream: int) -> jax.Array:
  """A key for an evaluator call, derived from `rng_key` apart from every key split from it."""
  return jax.random.fold_in(rng_key, _EVALUATOR_STREAMS + stream)


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


def tempered(evaluator: Evaluator, temperature: float) -> Evaluator:
  """`evaluator` with its prior logits divided by `temperature` (SearchConfig.prior_temperature);
  `evaluator` itself at 1."""
  if temperature == 1.0:
    return evaluator

  def evaluate_tempered(variables, states, rng_key):
    logits, value = evaluator(variables, states, rng_key)
    return logits / temperature, value

  return evaluate_tempered


def scaled_value(search: SearchConfig, states, value: jax.Array) -> jax.Array:
  """[B] `value` times search.value_scale's entry for each position's move number (itself
  where value_scale is empty)."""
  if not search.value_scale:
    return value
  scale = jnp.asarray(search.value_scale, jnp.float32)
  phase = jnp.minimum(states.move_count // search.value_scale_moves, scale.shape[0] - 1)
  return value * scale[phase].astype(value.dtype)


def search_evaluator(evaluator: Evaluator, search: SearchConfig) -> Evaluator:
  """`evaluator` as the search sees it: its prior tempered (search.prior_temperature) and its
  value scaled by the move number (search.value_scale); `evaluator` itself where neither is
  set."""
  evaluator = tempered(evaluator, search.prior_temperature)
  if not search.value_scale:
    return evaluator

  def evaluate_scaled(variables, states, rng_key):
    logits, value = evaluator(variables, states, rng_key)
    return logits, scaled_value(search, states, value)

  return evaluate_scaled


def nodes_used(tree: mctx.Tree) -> jax.Array:
  """[B] int32: one past the highest node of each tree that holds a position (mctx numbers
  nodes in the order they are expanded, so the next simulation's node is this one)."""
  index = jnp.arange(1, tree.node_visits.shape[1] + 1)
  return jnp.max(jnp.where(tree.node_visits > 0, index, 0), axis=1).astype(jnp.int32)


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
               search: SearchConfig, *, root: Root | None = None) -> mctx.PolicyOutput:
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
    root: the roots' evaluation, when known, as the search sees it: `evaluate` of
      `search_evaluator(evaluator, search)` (the prior tempered, the value scaled), as the
      tree's own nodes hold it, so that a child's stored evaluation serves as the next root.

  Returns:
    mctx.PolicyOutput: `action` [B], `action_weights` [B, A] (the policy
    target), `search_tree` (root value, visit counts).

  Every search starts afresh; players that keep the subtree of the move played search with
  `search.anytime` (its `start(reuse=)`), which grows a tree of a fixed size in steps.
  """
  per_game = _per_game(rng_key)
  evaluator = search_evaluator(evaluator, search)
  if root is None:
    root_key = evaluator_key(rng_key[0] if per_game else rng_key, 0)
    root = evaluate(game, evaluator, variables, states, root_key, search.min_pass_moves)
  if not per_game:
    return _policy(game, evaluator, variables, states, rng_key, root, search)
  if search.algorithm == "gumbel":  # the root's noise is the only randomness: one batched search
    noise = jax.vmap(lambda k: jax.random.gumbel(k, root[0].shape[1:], root[0].dtype))(rng_key)
    logits, value, legal = root
    return gumbel_policy(
        variables, evaluator_key(rng_key[0], 1),
        mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states),
        make_recurrent_fn(game, evaluator, search.min_pass_moves), search.num_simulations,
        invalid_actions=~legal, gumbel=search.gumbel_scale * noise,
        max_num_considered_actions=search.max_num_considered_actions)

  # PUCT breaks ties between equal children with noise drawn for each game of
  # the batch: searches of one game each, vmapped, keep the games independent.
  def one(state, key, logits, value, legal):
    batch_of_one = lambda tree: jax.tree.map(lambda x: x[None], tree)
    out = _policy(game, evaluator, variables, batch_of_one(state), key,
                  batch_of_one((logits, value, legal)), search)
    return jax.tree.map(lambda x: x[0], out)

  return jax.vmap(one)(states, rng_key, *root)


def _per_game(rng_key: jax.Array) -> bool:
  """Whether `rng_key` is a batch of keys (one per game) rather than one key."""
  if jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key):
    return rng_key.ndim == 1
  return rng_key.ndim == 2


def _policy(game: Game, evaluator: Evaluator, variables, states, rng_key: jax.Array, root: Root,
            search: SearchConfig) -> mctx.PolicyOutput:
  """The mctx policy call of run_search on a batch, with one key."""
  logits, value, legal = root
  root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
  recurrent_fn = make_recurrent_fn(game, evaluator, search.min_pass_moves)
  if search.algorithm == "gumbel":
    return mctx.gumbel_muzero_policy(
        variables, rng_key, root, recurrent_fn, search.num_simulations,
        invalid_actions=~legal, max_num_considered_actions=search.max_num_considered_actions,
        gumbel_scale=search.gumbel_scale)
  simulations = search.num_simulations
  if search.algorithm == "alphago":
    return alphago_policy(variables, rng_key, root, recurrent_fn, simulations,
                          invalid_actions=~legal, c_puct=search.c_puct)
  alpha = search.root_noise_alpha(game)
  if search.forced_playouts:
    return forced_puct_policy(
        variables, rng_key, root, recurrent_fn, simulations,
        invalid_actions=~legal, dirichlet_fraction=search.dirichlet_fraction,
        dirichlet_alpha=alpha, pb_c_init=search.pb_c_init, pb_c_base=search.pb_c_base,
        k=search.forced_playouts_k, q_transform=search.qtransform)
  return mctx.muzero_policy(
      variables, rng_key, root, recurrent_fn, simulations,
      invalid_actions=~legal, dirichlet_fraction=search.dirichlet_fraction,
      dirichlet_alpha=alpha, pb_c_init=search.pb_c_init, pb_c_base=search.pb_c_base,
      qtransform=search.qtransform)
