"""B games advance together, one searched move at a time, on device.

Games that end are scored and restarted in the same step, so every slot always
holds a game in progress and every step yields B training positions. A game
ends by the rules (two passes, the move limit) or by resignation: when the
searched value of the player to move falls below the threshold. A fraction of
games never resigns; in those, the colour that would have resigned is
remembered, and if it wins anyway the resignation would have been false.
"""

import functools

import jax
import jax.numpy as jnp
from flax import struct

from agz_jax import go
from agz_jax.search import ApplyFn, score_only_where, run_search


@struct.dataclass
class Games:
  """B games in progress. B: games, A = P + 1 actions.

  Attributes:
    states: [B] GoState.
    may_resign: [B] bool, this game may end by resignation.
    would_resign: [B] int8, in a game that may not resign, the first colour
      whose value fell below the threshold, else 0.
  """

  states: go.GoState
  may_resign: jax.Array
  would_resign: jax.Array


@struct.dataclass
class StepRecord:
  """What one self-play step produced, per game slot ([B] or [T, B] for T steps).

  Attributes:
    planes: [B, N, N, F] uint8, the input planes of the position searched.
    policy: [B, A] float32, the search policy (training target).
    to_play: [B] int8, colour to move in that position.
    action: [B] int32, the move played (meaningless when the game resigned).
    root_value: [B] float32, searched value for the player to move (the Q
      value of the best move).
    ended: [B] bool, the game ended with this step's move (or resignation).
    result: [B] float32, the ended game's result for black (+1, -1, 0).
    length: [B] int32, the ended game's number of moves.
    resigned: [B] bool, it ended by resignation.
    resign_checked: [B] bool, an ended no-resign game in which a colour would
      have resigned.
    false_resign: [B] bool, ... and that colour won.
  """

  planes: jax.Array
  policy: jax.Array
  to_play: jax.Array
  action: jax.Array
  root_value: jax.Array
  ended: jax.Array
  result: jax.Array
  length: jax.Array
  resigned: jax.Array
  resign_checked: jax.Array
  false_resign: jax.Array


def new_games(cfg: go.GoConfig, rng_key: jax.Array, batch: int, *,
              no_resign_fraction: float) -> Games:
  """B fresh games; each may resign with probability 1 - no_resign_fraction."""
  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(batch))
  may_resign = jax.random.uniform(rng_key, (batch,)) >= no_resign_fraction
  return Games(states=states, may_resign=may_resign,
               would_resign=jnp.zeros(batch, jnp.int8))


def _select(mask, a, b):
  return jax.tree.map(lambda x, y: jnp.where(mask.reshape(mask.shape + (1,) * (x.ndim - 1)), x, y),
                      a, b)


def selfplay_step(cfg: go.GoConfig, apply_fn: ApplyFn, variables, games: Games,
                  rng_key: jax.Array, *, search: dict, temperature_moves: int,
                  resign_threshold: float, resign_min_moves: int,
                  no_resign_fraction: float) -> tuple[Games, StepRecord]:
  """Searches and plays one move in every game. Consumes `rng_key`.

  Args:
    cfg: the game's configuration.
    apply_fn: the network in inference mode.
    variables: the network's variables.
    games: [B] games in progress.
    rng_key: PRNG key.
    search: keyword arguments of search.run_search (algorithm, simulations...).
    temperature_moves: for this many moves of a game the move is sampled from
      the search policy; afterwards the search's best move is played.
    resign_threshold: resign when the searched value is below this; -1 or
      less never resigns.
    resign_min_moves: no resignation before this many moves.
    no_resign_fraction: share of restarted games that may not resign.

  Returns:
    (games after the move, restarted where they ended; StepRecord).
  """
  k_search, k_sample, k_new = jax.random.split(rng_key, 3)
  states = games.states
  batch = states.to_play.shape[0]
  out = run_search(cfg, apply_fn, variables, states, k_search, **search)
  weights = out.action_weights
  if search.get("algorithm", "gumbel") == "gumbel":
    best = out.action
  else:
    best = jnp.argmax(out.search_tree.summary().visit_counts, axis=-1)
  sampled = jax.random.categorical(k_sample, jnp.log(jnp.maximum(weights, 1e-30)))
  sampled = jnp.where(jnp.take_along_axis(weights, sampled[:, None], 1)[:, 0] > 0, sampled, best)
  action = jnp.where(states.move_count < temperature_moves, sampled, best).astype(jnp.int32)

  # The searched value of the move to be played: with Gumbel search the root's
  # average also counts visits that sequential halving spends on poor moves.
  summary = out.search_tree.summary()
  best_q = jnp.take_along_axis(summary.qvalues, best[:, None], axis=1)[:, 0]
  best_visited = jnp.take_along_axis(summary.visit_counts, best[:, None], axis=1)[:, 0] > 0
  value = jnp.where(best_visited, best_q, summary.value)
  low = (value < resign_threshold) & (states.move_count >= resign_min_moves)
  resign = games.may_resign & low
  would_resign = jnp.where(~games.may_resign & low & (games.would_resign == 0),
                           states.to_play, games.would_resign)

  after = jax.vmap(lambda s, a: go.step(cfg, s, a))(states, action)
  ended = after.terminated | resign
  by_rules = jax.vmap(lambda s: go.result(cfg, score_only_where(s, s.terminated)))(after)
  result = jnp.where(resign, -states.to_play.astype(jnp.float32), by_rules)
  checked = ended & (would_resign != 0)
  record = StepRecord(
      planes=go.features(cfg, states).astype(jnp.uint8),
      policy=weights,
      to_play=states.to_play,
      action=action,
      root_value=value,
      ended=ended,
      result=result,
      length=jnp.where(resign, states.move_count, after.move_count),
      resigned=resign,
      resign_checked=checked,
      false_resign=checked & (result * would_resign > 0))
  fresh = new_games(cfg, k_new, batch, no_resign_fraction=no_resign_fraction)
  games = Games(states=after, may_resign=games.may_resign, would_resign=would_resign)
  return _select(ended, fresh, games), record


def selfplay(cfg: go.GoConfig, apply_fn: ApplyFn, variables, games: Games, rng_key: jax.Array,
             num_steps: int, **kwargs) -> tuple[Games, StepRecord]:
  """Runs `num_steps` self-play steps (lax.scan). Consumes `rng_key`.

  Returns:
    (games, StepRecord with a leading [T] axis).
  """
  step = functools.partial(selfplay_step, cfg, apply_fn, variables, **kwargs)
  return jax.lax.scan(lambda g, k: step(g, k), games, jax.random.split(rng_key, num_steps))
