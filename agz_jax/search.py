"""Tree search with mctx over the real Go environment.

The search's embedding is the batch of GoStates itself: the recurrent function
steps the environment, so illegal moves (superko included) are masked inside
the tree as well as at the root, and a game that ends inside the tree is valued
by its result. Players alternate, so every edge has discount -1 and rewards and
values are from the point of view of the player to move at the node above.
"""

from typing import Callable

import jax
import jax.numpy as jnp
import mctx

from agz_jax import go

# (variables, planes [B, N, N, F]) -> (logits [B, A], value [B]); inference mode.
ApplyFn = Callable[[dict, jax.Array], tuple[jax.Array, jax.Array]]

ALGORITHMS = ("gumbel", "puct")


def _masked_logits(logits: jax.Array, legal: jax.Array) -> jax.Array:
  logits = logits - jnp.max(logits, axis=-1, keepdims=True)
  return jnp.where(legal, logits, jnp.finfo(logits.dtype).min)


def evaluate(cfg: go.GoConfig, apply_fn: ApplyFn, variables, states: go.GoState,
             min_pass_moves: int = 0):
  """Network prior (illegal actions masked) and value of a batch of positions.

  Args:
    min_pass_moves: before this many moves of a game, pass is only allowed
      when nothing else is legal (a self-play heuristic, see run_search).

  Returns:
    (logits [B, A], value [B] for the player to move, legal [B, A] bool).
  """
  planes = go.features(cfg, states)
  logits, value = apply_fn(variables, planes)
  legal = jax.vmap(lambda s: go.legal_actions(cfg, s))(states)
  if min_pass_moves:
    early = (states.move_count < min_pass_moves) & jnp.any(legal[:, :-1], axis=-1)
    legal = legal.at[:, -1].set(legal[:, -1] & ~early)
  return _masked_logits(logits, legal), value, legal


def make_recurrent_fn(cfg: go.GoConfig, apply_fn: ApplyFn, min_pass_moves: int = 0):
  """The mctx recurrent function: play `action`, evaluate the new position."""

  def recurrent_fn(variables, rng_key, action, states):
    del rng_key  # the environment is deterministic
    mover = states.to_play.astype(jnp.float32)
    was_over = states.terminated
    states = jax.vmap(lambda s, a: go.step(cfg, s, a))(states, action)
    logits, value, _ = evaluate(cfg, apply_fn, variables, states, min_pass_moves)
    ended_now = states.terminated & ~was_over
    result = jax.vmap(lambda s, e: go.result(cfg, score_only_where(s, e)))(states, ended_now)
    reward = jnp.where(ended_now, result * mover, 0.0)
    over = states.terminated
    output = mctx.RecurrentFnOutput(
        reward=reward,
        discount=jnp.where(over, 0.0, -1.0),
        prior_logits=logits,
        value=jnp.where(over, 0.0, value))
    return output, states

  return recurrent_fn


def score_only_where(state: go.GoState, needed) -> go.GoState:
  """The state, or where its score is not needed the same state with an empty
  board: scoring floods empty regions in a while_loop, which under vmap runs as
  long as the slowest board, and an empty board takes one round."""
  return state.replace(board=jnp.where(needed, state.board, jnp.int8(go.EMPTY)))


def dirichlet_alpha_for(cfg: go.GoConfig) -> float:
  """AlphaGo Zero's 0.03 on 19x19, scaled by the number of moves (AlphaZero's rule)."""
  return 0.03 * 361 / cfg.num_points


def run_search(cfg: go.GoConfig, apply_fn: ApplyFn, variables, states: go.GoState,
               rng_key: jax.Array, *, algorithm: str = "gumbel", num_simulations: int = 32,
               max_num_considered_actions: int = 16, gumbel_scale: float = 1.0,
               dirichlet_alpha: float | None = None, dirichlet_fraction: float = 0.25,
               pb_c_init: float = 1.25, pb_c_base: float = 19652.0,
               min_pass_moves: int = 0) -> mctx.PolicyOutput:
  """Searches from a batch of positions. Consumes `rng_key`.

  Args:
    cfg: the game's configuration.
    apply_fn: the network in inference mode.
    variables: the network's variables (params and BatchNorm statistics).
    states: [B] GoStates to search from (not terminated).
    rng_key: PRNG key.
    algorithm: 'gumbel' (mctx.gumbel_muzero_policy) or 'puct'
      (mctx.muzero_policy with Dirichlet noise at the root, as AlphaGo Zero).
    num_simulations: simulations per search.
    max_num_considered_actions: Gumbel: actions kept by sequential halving.
    gumbel_scale: Gumbel: scale of the root noise.
    dirichlet_alpha: PUCT: root noise concentration; None scales AGZ's 0.03
      on 19x19 to the board size.
    dirichlet_fraction: PUCT: weight of the noise in the root prior.
    pb_c_init: PUCT exploration constant.
    pb_c_base: PUCT exploration base.
    min_pass_moves: before this many moves of a game, pass is allowed (at the
      root and inside the tree) only when no other move is legal. Self-play
      uses it against a collapse seen from scratch: with komi, a side that
      passes early and is answered by a pass wins, so both learn to pass and
      stop learning the game. 0 (players, matches) keeps the rules as they are.

  Returns:
    mctx.PolicyOutput: `action` [B], `action_weights` [B, A] (the policy
    target), `search_tree` (root value, visit counts).
  """
  logits, value, legal = evaluate(cfg, apply_fn, variables, states, min_pass_moves)
  root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
  recurrent_fn = make_recurrent_fn(cfg, apply_fn, min_pass_moves)
  if algorithm == "gumbel":
    return mctx.gumbel_muzero_policy(
        variables, rng_key, root, recurrent_fn, num_simulations,
        invalid_actions=~legal, max_num_considered_actions=max_num_considered_actions,
        gumbel_scale=gumbel_scale)
  if algorithm == "puct":
    alpha = dirichlet_alpha_for(cfg) if dirichlet_alpha is None else dirichlet_alpha
    return mctx.muzero_policy(
        variables, rng_key, root, recurrent_fn, num_simulations,
        invalid_actions=~legal, dirichlet_fraction=dirichlet_fraction,
        dirichlet_alpha=alpha, pb_c_init=pb_c_init, pb_c_base=pb_c_base)
  raise ValueError(f"search algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
