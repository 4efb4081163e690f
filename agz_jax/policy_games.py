"""Games between two policies alone, played on the device: both sample every move from their
policy over the sensible moves (legal, not filling one's own eye), a player with no sensible
move passes, and games run to their end (two passes or the config's move limit), scored by
Tromp-Taylor. AlphaGo's reinforcement stage learns from them (training.rl_policy) and the
tournament's policy-only matches count them (tournament).
"""

import functools

import jax
import jax.numpy as jnp
from flax import struct

from agz_jax import go


@struct.dataclass
class Games:
  """A batch of finished games, half with the learner as black (the first half).

  Attributes:
    z: [G] float32, the result for the learner (+1, -1, 0).
    length: [G] int32, moves played.
    planes: [T, G/2, H, W, F] uint8: the learner's input planes at ply t (ply t
      is the learner's in the first half when t is even, in the second when odd).
    sensible: [T, G/2, A] bool, the moves the learner could sample there.
    action: [T, G/2] int32, the learner's move.
    sampled: [T, G/2] bool, a move the learner sampled (not a forced pass, not
      after the end).
    moves: [T, G] int32, every move of every game at ply t (entries from a game's length
      on mean nothing: a finished game ignores its moves).
    entropy: [] float32, the mean entropy of the learner's sampled moves.
  """

  z: jax.Array
  length: jax.Array
  planes: jax.Array | None
  sensible: jax.Array | None
  action: jax.Array | None
  sampled: jax.Array
  moves: jax.Array
  entropy: jax.Array


def masked_log_policy(logits: jax.Array, sensible: jax.Array) -> jax.Array:
  """log-probabilities of the softmax over the sensible moves; the others get the dtype's
  minimum (not -inf: a row without a sensible move must keep finite gradients)."""
  logits = jnp.where(sensible, logits, jnp.finfo(logits.dtype).min)
  return jax.nn.log_softmax(logits, axis=-1)


def play_games(cfg: go.GoConfig, encoding: str, model, learner, opponent, key: jax.Array, *,
               num_games: int, record: bool) -> Games:
  """Plays `num_games` games of the policy `learner` (its params) against `opponent`.

  Args:
    record: keep the learner's planes, sensible moves and actions for an update.
  """
  half = num_games // 2
  max_moves = cfg.max_moves
  planes_shape = go.planes_shape(cfg, encoding)
  actions = cfg.num_actions
  sensible_fn = jax.vmap(functools.partial(go.sensible_moves, cfg))
  apply = lambda params, planes: model.apply({"params": params}, planes)

  def body(carry):
    states, t, key, buffers, moves, entropy = carry
    key, k_sample = jax.random.split(key)
    planes = go.features(cfg, states, encoding)
    sensible = sensible_fn(states)
    even = t % 2 == 0
    first, second = planes[:half], planes[half:]
    mine = jnp.where(even, first, second)
    logits_mine = apply(learner, mine)
    logits_theirs = apply(opponent, jnp.where(even, second, first))
    logits = jnp.where(even, jnp.concatenate([logits_mine, logits_theirs]),
                       jnp.concatenate([logits_theirs, logits_mine]))
    log_p = masked_log_policy(logits, sensible)
    has_move = jnp.any(sensible, axis=-1)
    sampled = jax.random.categorical(k_sample, log_p)
    action = jnp.where(has_move, sampled, cfg.pass_action).astype(jnp.int32)
    going = ~states.terminated
    # The learner's half at this ply.
    pick = lambda x: jnp.where(even, x[:half], x[half:])
    learner_sampled = pick(going & has_move)
    p = jnp.exp(log_p)
    h = -jnp.sum(jnp.where(sensible, p * log_p, 0.0), axis=-1)
    entropy = entropy + jnp.stack([jnp.sum(jnp.where(learner_sampled, pick(h), 0.0)),
                                   jnp.sum(learner_sampled)])
    if record:
      planes_buf, sensible_buf, action_buf, sampled_buf = buffers
      buffers = (planes_buf.at[t].set(mine.astype(jnp.uint8)),
                 sensible_buf.at[t].set(pick(sensible)), action_buf.at[t].set(pick(action)),
                 sampled_buf.at[t].set(learner_sampled))
    else:
      buffers = buffers[:3] + (buffers[3].at[t].set(learner_sampled),)
    moves = moves.at[t].set(action)
    states = jax.vmap(functools.partial(go.step, cfg))(states, action)
    return states, t + 1, key, buffers, moves, entropy

  def running(carry):
    states, t, *_ = carry
    return (t < max_moves) & ~jnp.all(states.terminated)

  states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(num_games))
  rows = max_moves if record else 1
  buffers = (jnp.zeros((rows, half) + planes_shape, jnp.uint8),
             jnp.zeros((rows, half, actions), bool), jnp.zeros((rows, half), jnp.int32),
             jnp.zeros((max_moves, half), bool))
  states, _, _, buffers, moves, entropy = jax.lax.while_loop(
      running, body, (states, jnp.int32(0), key, buffers,
                      jnp.zeros((max_moves, num_games), jnp.int32), jnp.zeros(2)))
  colour = jnp.concatenate([jnp.ones(half), -jnp.ones(half)])
  z = jax.vmap(functools.partial(go.result, cfg))(states) * colour
  planes, sensible, action, sampled = buffers
  return Games(z=z, length=states.move_count, planes=planes if record else None,
               sensible=sensible if record else None, action=action if record else None,
               sampled=sampled, moves=moves, entropy=entropy[0] / jnp.maximum(entropy[1], 1.0))
