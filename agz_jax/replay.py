"""A fixed-capacity window of recent self-play positions, kept on device.

Layout [B, R]: column b holds the last R positions played in game slot b, in
order, so the positions of one game sit together and the result of a game is
written to its positions when it ends. A position is `WAITING` until then and
`READY` (sampled for training) afterwards.

Beside the AlphaGo Zero targets the buffer keeps KataGo's: the finished game's
ownership and score (resolved with its result), whether the position's policy
is a target (playout cap randomization), and whether the game ended at the
position, which tells whether the next row holds the opponent's reply.

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
    full_search: [B, R] bool, the policy is a training target.
    ended: [B, R] bool, the game ended with this position's move.
    ownership: [B, R, P] int8, the final owner of each point from the view of
      the player to move; None when the buffer keeps no ownership.
    score_target: [B, R] float32, the final score margin, same view.
    scored: [B, R] bool, the two above hold the game's final ownership and
      score (it ended by the rules, not by resignation).
  """

  planes: jax.Array
  policy: jax.Array
  value_target: jax.Array
  to_play: jax.Array
  status: jax.Array
  next_row: jax.Array
  full_search: jax.Array
  ended: jax.Array
  ownership: jax.Array
  score_target: jax.Array
  scored: jax.Array


def empty(game: Game, encoding: str, batch: int, rows: int, *,
          final_targets: bool = False) -> ReplayBuffer:
  """A buffer of B game slots x R rows for positions encoded with `encoding`.

  Args:
    final_targets: keep each game's final ownership (of the game's H*W
      points) and score for the auxiliary heads.
  """
  points = game.symmetries()[0].shape[1]
  return ReplayBuffer(
      planes=jnp.zeros((batch, rows) + game.planes_shape(encoding), jnp.uint8),
      policy=jnp.zeros((batch, rows, game.num_actions), jnp.float32),
      value_target=jnp.zeros((batch, rows), jnp.float32),
      to_play=jnp.zeros((batch, rows), jnp.int8),
      status=jnp.zeros((batch, rows), jnp.int8),
      next_row=jnp.int32(0),
      full_search=jnp.zeros((batch, rows), bool),
      ended=jnp.zeros((batch, rows), bool),
      ownership=jnp.zeros((batch, rows, points), jnp.int8) if final_targets else None,
      score_target=jnp.zeros((batch, rows), jnp.float32),
      scored=jnp.zeros((batch, rows), bool))


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

  if (records.ownership is None) != (buffer.ownership is None):
    raise ValueError("replay: the records and the buffer must both keep ownership, or neither")

  def back(carry, x):
    known, final = carry
    ended, this = x
    known = known | ended
    final = jax.tree.map(lambda new, old: jnp.where(_rows(ended, new), new, old), this, final)
    return (known, final), (known, final)

  # Per slot: the game's final result, ownership, score and whether it was scored.
  final = (records.result, records.ownership, records.score, records.scored)
  init = (jnp.zeros_like(records.ended[0]), jax.tree.map(lambda x: jnp.zeros_like(x[0]), final))
  (first_known, first), (known, later) = jax.lax.scan(
      back, init, (records.ended, final), reverse=True)

  # Rows written earlier and still waiting take the first game end of their slot.
  waiting = (buffer.status == WAITING) & first_known[:, None]
  result, own, score, scored = first
  mover = buffer.to_play
  value_target = jnp.where(waiting, result[:, None] * mover, buffer.value_target)
  ownership = None
  if own is not None:
    ownership = jnp.where(waiting[..., None], own[:, None, :] * mover[..., None],
                          buffer.ownership)
  score_target = jnp.where(waiting, score[:, None] * mover, buffer.score_target)
  was_scored = jnp.where(waiting, scored[:, None], buffer.scored)
  status = jnp.where(waiting, READY, buffer.status)

  # The new rows, [T, B] -> [B, T].
  row_ids = (buffer.next_row + jnp.arange(num_steps)) % rows                 # [T]
  swap = lambda x: jnp.swapaxes(x, 0, 1)
  result, own, score, scored = later
  to_play = records.to_play
  new_status = jnp.where(known, READY, WAITING).astype(jnp.int8)
  put = lambda old, new: old.at[:, row_ids].set(swap(new))
  return ReplayBuffer(
      planes=put(buffer.planes, records.planes),
      policy=put(buffer.policy, records.policy),
      value_target=put(value_target, result * to_play),
      to_play=put(buffer.to_play, to_play),
      status=put(status, new_status),
      next_row=(buffer.next_row + num_steps) % rows,
      full_search=put(buffer.full_search, records.full_search),
      ended=put(buffer.ended, records.ended),
      ownership=None if own is None else put(ownership,
                                             (own * to_play[..., None]).astype(jnp.int8)),
      score_target=put(score_target, score * to_play),
      scored=put(was_scored, scored))


def _rows(mask, x):
  """`mask` [B] broadcast against x [B, ...]."""
  return mask.reshape(mask.shape + (1,) * (x.ndim - 1))


def num_ready(buffer: ReplayBuffer) -> jax.Array:
  return jnp.sum(buffer.status == READY)


@struct.dataclass
class Sample:
  """A minibatch of M positions and their targets (M: samples, A: actions, P: points).

  Attributes:
    planes: [M, H, W, F] float32 input planes.
    policy: [M, A] search policy.
    value_target: [M] game result for the player to move.
    weight: [M] float32, 0 for a draw from a group without ready positions
      (such a sample counts in no loss).
    policy_weight: [M] float32, the policy is a target (full search).
    ownership: [M, P] float32, final owner of each point, mover's view (None
      when the buffer keeps none).
    score: [M] final score margin, mover's view.
    final_weight: [M] float32, the two above are known (the game was scored).
    opponent_policy: [M, A] the search policy of the next position (the
      opponent's reply).
    opponent_weight: [M] float32, it is a target (the game went on and the
      next position got a full search).
  """

  planes: jax.Array
  policy: jax.Array
  value_target: jax.Array
  weight: jax.Array
  policy_weight: jax.Array
  ownership: jax.Array
  score: jax.Array
  final_weight: jax.Array
  opponent_policy: jax.Array
  opponent_weight: jax.Array


def sample(buffer: ReplayBuffer, rng_key: jax.Array, batch_size: int) -> Sample:
  """Draws `batch_size` READY positions, stratified over game slots. Consumes `rng_key`.

  Sample j is drawn uniformly from the READY positions of the j-th group of
  slots.
  """
  slots, rows = buffer.status.shape
  groups = min(slots, batch_size)
  if slots % groups or batch_size % groups:
    raise ValueError(f"replay: the number of games ({slots}) and the minibatch size "
                     f"({batch_size}) must divide one another")
  per_group, width = batch_size // groups, slots // groups
  group = lambda x: x.reshape((groups, width * rows) + x.shape[2:])
  rank = jax.random.uniform(rng_key, (groups, per_group))

  def draw(g, rank):
    ready = jnp.cumsum(g.status == READY)                                      # [width * R]
    count = ready[-1]
    i = jnp.searchsorted(ready, jnp.floor(rank * count).astype(ready.dtype), side="right")
    i = jnp.minimum(i, ready.shape[0] - 1)
    # The next row of the same slot (the ring wraps within a slot): the reply, unless the
    # game ended here. A READY row's game has ended, so its next row was written after it.
    row = i % rows
    following = i - row + (row + 1) % rows
    as_float = lambda x: x.astype(jnp.float32)
    weight = jnp.broadcast_to(as_float(count > 0), rank.shape)
    return Sample(
        planes=as_float(g.planes[i]), policy=g.policy[i], value_target=g.value_target[i],
        weight=weight, policy_weight=as_float(g.full_search[i]),
        ownership=None if g.ownership is None else as_float(g.ownership[i]),
        score=g.score_target[i],
        final_weight=as_float(g.scored[i]), opponent_policy=g.policy[following],
        opponent_weight=as_float(~g.ended[i] & g.full_search[following]))

  fields = ("planes", "policy", "value_target", "status", "full_search", "ended", "ownership",
            "score_target", "scored")
  grouped = buffer.replace(**{f: group(getattr(buffer, f)) for f in fields
                              if getattr(buffer, f) is not None})
  out = jax.vmap(draw, in_axes=(_GROUP_AXES, 0))(grouped, rank)
  return jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:]), out)


# vmap axes of a grouped buffer: every array by group except to_play (not grouped, unused)
# and the ring's write position. A None ownership has no leaves: its axis goes unused.
_GROUP_AXES = ReplayBuffer(planes=0, policy=0, value_target=0, to_play=None, status=0,
                           next_row=None, full_search=0, ended=0, ownership=0, score_target=0,
                           scored=0)
