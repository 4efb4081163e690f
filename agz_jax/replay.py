"""A fixed-capacity window of recent self-play positions, kept on device.

Layout [B, R]: column b holds the last R positions played in game slot b, in
order, so the positions of one game sit together and the result of a game is
written to its positions when it ends. A position is `WAITING` until then and
`READY` (sampled for training) afterwards.

Minibatches are stratified over game slots: sample j of M comes from the j-th
of min(B, M) equal groups of slots. Each device of a data-parallel mesh holds
whole groups, so sampling needs no communication, and the samples drawn do not
depend on the number of devices.
"""

import jax
import jax.numpy as jnp
from flax import struct

from agz_jax.game import Game
from agz_jax.selfplay import StepRecord

EMPTY_SLOT, WAITING, READY = 0, 1, 2


@struct.dataclass
class ReplayBuffer:
  """B game slots x R positions each; A actions, [H, W, F] input planes.

  Attributes:
    planes: [B, R, H, W, F] uint8 input planes.
    policy: [B, R, A] float32 search policy.
    value_target: [B, R] float32, game result for the player to move (z).
    to_play: [B, R] int8.
    status: [B, R] int8, EMPTY_SLOT, WAITING or READY.
    next_row: [] int32, the row the next step writes (modulo R).
  """

  planes: jax.Array
  policy: jax.Array
  value_target: jax.Array
  to_play: jax.Array
  status: jax.Array
  next_row: jax.Array


def empty(game: Game, encoding: str, batch: int, rows: int) -> ReplayBuffer:
  """A buffer of B game slots x R rows for positions encoded with `encoding`."""
  return ReplayBuffer(
      planes=jnp.zeros((batch, rows) + game.planes_shape(encoding), jnp.uint8),
      policy=jnp.zeros((batch, rows, game.num_actions), jnp.float32),
      value_target=jnp.zeros((batch, rows), jnp.float32),
      to_play=jnp.zeros((batch, rows), jnp.int8),
      status=jnp.zeros((batch, rows), jnp.int8),
      next_row=jnp.int32(0))


def add(buffer: ReplayBuffer, records: StepRecord) -> ReplayBuffer:
  """Writes T steps of self-play ([T, B] records) and the results of games that ended.

  A position's game ends at the first step at or after it with `ended` in its
  slot; positions of games still going stay WAITING. Positions written earlier
  and still waiting belong to the game that was going when these T steps began,
  so the first end in their slot resolves them.
  """
  num_steps = records.ended.shape[0]
  rows = buffer.status.shape[1]
  if num_steps > rows:
    raise ValueError(f"replay: {num_steps} steps per iteration do not fit in {rows} rows per slot")

  def back(carry, x):
    known, result = carry
    ended, res = x
    known = known | ended
    result = jnp.where(ended, res, result)
    return (known, result), (known, result)

  init = (jnp.zeros_like(records.ended[0]), jnp.zeros_like(records.result[0]))
  (first_known, first_result), (known, result) = jax.lax.scan(
      back, init, (records.ended, records.result), reverse=True)

  waiting = (buffer.status == WAITING) & first_known[:, None]
  value_target = jnp.where(waiting, first_result[:, None] * buffer.to_play, buffer.value_target)
  status = jnp.where(waiting, READY, buffer.status)

  row_ids = (buffer.next_row + jnp.arange(num_steps)) % rows                 # [T]
  swap = lambda x: jnp.swapaxes(x, 0, 1)                                     # [T, B] -> [B, T]
  new_status = jnp.where(known, READY, WAITING).astype(jnp.int8)
  new_target = result * records.to_play
  return ReplayBuffer(
      planes=buffer.planes.at[:, row_ids].set(swap(records.planes)),
      policy=buffer.policy.at[:, row_ids].set(swap(records.policy)),
      value_target=value_target.at[:, row_ids].set(swap(new_target)),
      to_play=buffer.to_play.at[:, row_ids].set(swap(records.to_play)),
      status=status.at[:, row_ids].set(swap(new_status)),
      next_row=(buffer.next_row + num_steps) % rows)


def num_ready(buffer: ReplayBuffer) -> jax.Array:
  return jnp.sum(buffer.status == READY)


def sample(buffer: ReplayBuffer, rng_key: jax.Array, batch_size: int):
  """Draws `batch_size` READY positions, stratified over game slots. Consumes `rng_key`.

  Sample j is drawn uniformly from the READY positions of the j-th group of
  slots.

  Returns:
    (planes [M, H, W, F] float32, policy [M, A], value_target [M],
    weight [M] float32: 0 for a draw from a group without ready positions).
  """
  slots, rows = buffer.status.shape
  groups = min(slots, batch_size)
  if slots % groups or batch_size % groups:
    raise ValueError(f"replay: the number of games ({slots}) and the minibatch size "
                     f"({batch_size}) must divide one another")
  per_group, width = batch_size // groups, slots // groups
  group = lambda x: x.reshape((groups, width * rows) + x.shape[2:])
  rank = jax.random.uniform(rng_key, (groups, per_group))

  def draw(g_status, g_planes, g_policy, g_target, rank):
    ready = jnp.cumsum(g_status == READY)                                      # [width * R]
    count = ready[-1]
    i = jnp.searchsorted(ready, jnp.floor(rank * count).astype(ready.dtype), side="right")
    i = jnp.minimum(i, ready.shape[0] - 1)
    return (g_planes[i].astype(jnp.float32), g_policy[i], g_target[i],
            jnp.broadcast_to((count > 0).astype(jnp.float32), rank.shape))

  out = jax.vmap(draw)(group(buffer.status), group(buffer.planes), group(buffer.policy),
                       group(buffer.value_target), rank)
  return jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:]), out)
