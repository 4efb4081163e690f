"""AlphaGo Zero's dual-head residual network (Flax linen)."""

from typing import Any

import chex
import flax.linen as nn
import jax.numpy as jnp


def global_pool(x):
  """[B, H, W, C] -> [B, 2C]: each channel's mean and maximum over the board.

  The maximum is read at its argmax, so that its gradient goes to that one point (as
  KataGo's, a framework's max pooling). `jnp.max`'s gradient instead spreads over the points
  equal to the maximum, found by comparing them with it again: where the compiler computes
  the board twice (the forward value, and again inside the gradient's fusion) and the two
  differ in a last bit, none is equal, and the gradient divides by zero (NaN; seen on the
  CPU at XLA's lowest optimisation).
  """
  flat = x.reshape(x.shape[0], -1, x.shape[-1])                                 # [B, HW, C]
  where = jnp.argmax(flat, axis=1)[:, None, :]
  peak = jnp.take_along_axis(flat, where, axis=1)[:, 0, :]
  return jnp.concatenate([jnp.mean(x, axis=(1, 2)), peak], axis=-1)


class ResidualBlock(nn.Module):
  """conv 3x3 - BN - ReLU - conv 3x3 - BN - skip - ReLU.

  With `global_pooling` (KataGo), the first convolution's output gets a bias
  per channel computed from the whole board: its channels' means and maxima
  -> dense -> one bias per channel, before the second convolution. A local
  convolution then sees board-wide facts (ko threats, who is ahead).
  """

  channels: int
  global_pooling: bool = False
  dtype: Any = jnp.float32

  @nn.compact
  def __call__(self, x, train: bool):
    norm = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9, dtype=self.dtype)
    conv = lambda: nn.Conv(self.channels, (3, 3), use_bias=False, dtype=self.dtype)
    y = nn.relu(norm()(conv()(x)))
    if self.global_pooling:
      bias = nn.Dense(self.channels, dtype=self.dtype, name="pooled_bias")(global_pool(y))
      y = y + bias[:, None, None, :]
    y = norm()(conv()(y))
    return nn.relu(x + y)


def pooled_blocks(blocks: int) -> tuple[int, ...]:
  """The residual blocks that pool globally: every second one (the 2nd, 4th, ...), at least one."""
  return tuple(range(1, blocks, 2)) or (0,)


class AlphaZeroNet(nn.Module):
  """Input convolution, `blocks` residual blocks, policy and value heads.

  As in the AlphaGo Zero paper: policy head = 1x1 conv with 2 filters, BN,
  ReLU, dense to P + 1 logits; value head = 1x1 conv with 1 filter, BN, ReLU,
  dense 256, ReLU, dense 1, tanh. With dtype=bfloat16 the convolutions and
  dense layers compute in bfloat16 while parameters stay float32; the outputs
  are float32.

  KataGo's additions (Wu 2019), each off by default:
    global_pooling: `pooled_blocks` pool globally (ResidualBlock), the policy
      head's two channels get biases from the pooled trunk and the value head
      reads the pooled trunk beside its own features.
    ownership_head: 1x1 conv to one logit per point; tanh(logit) is the
      expected final owner from the mover's view (+1 the mover's).
    score_head: dense from the value head's hidden layer to the final score
      margin from the mover's view, divided by sqrt(points) (the side of a
      square board).
    opponent_policy_head: a second policy head, the opponent's reply at the
      next position.
    global_inputs: the last `global_inputs` input planes are global features, each the
      same over the board (the "katago" encoding's komi, passes, ...): they are not
      convolved but projected by a dense layer to one bias per channel, added to the
      first convolution's output, as KataGo feeds its global input vector.

  Attributes:
    blocks: residual blocks (AGZ: 20 or 40).
    channels: filters per convolution (AGZ: 256).
    value_hidden: width of the value head's hidden layer (AGZ: 256).
    num_actions: the policy's actions; None: one per point and a pass (Go's H * W + 1).
    dtype: compute dtype.
  """

  blocks: int
  channels: int
  value_hidden: int = 256
  global_pooling: bool = False
  ownership_head: bool = False
  score_head: bool = False
  opponent_policy_head: bool = False
  global_inputs: int = 0
  num_actions: int | None = None
  dtype: Any = jnp.float32

  @nn.compact
  def __call__(self, planes, train: bool = False, aux: bool = False):
    """Evaluates positions.

    Args:
      planes: [B, H, W, F] input planes (the game's features).
      train: use batch statistics and update the running ones (in the
        'batch_stats' collection) when True; use the running ones otherwise.
      aux: also return the auxiliary heads' outputs.

    Returns:
      (logits [B, A] float32, value [B] float32 in [-1, 1] for the player
      to move), A = num_actions (Go: H*W + 1), and with `aux` a dict of the
      auxiliary heads' float32 outputs: "ownership" [B, H*W] logits, "score"
      [B], "opponent_policy" [B, A] logits (only the heads the network has).
    """
    chex.assert_rank(planes, 4)
    batch, h, w, _ = planes.shape
    actions = h * w + 1 if self.num_actions is None else self.num_actions
    norm = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9, dtype=self.dtype)
    conv = lambda c: nn.Conv(c, (1, 1), use_bias=False, dtype=self.dtype)
    x = planes.astype(self.dtype)
    if self.global_inputs:
      x, features = x[..., :-self.global_inputs], x[:, 0, 0, -self.global_inputs:]
      x = nn.Conv(self.channels, (3, 3), use_bias=False, dtype=self.dtype)(x)
      x = x + nn.Dense(self.channels, use_bias=False, dtype=self.dtype,
                       name="global_inputs")(features)[:, None, None, :]
    else:
      x = nn.Conv(self.channels, (3, 3), use_bias=False, dtype=self.dtype)(x)
    x = nn.relu(norm()(x))
    pooling = pooled_blocks(self.blocks) if self.global_pooling else ()
    for i in range(self.blocks):
      x = ResidualBlock(self.channels, global_pooling=i in pooling, dtype=self.dtype)(x, train)
    pooled = global_pool(x) if self.global_pooling else None

    def policy_head(name):  # name None: the AGZ head, its layers named as they always were
      p = nn.relu(norm()(conv(2)(x)))
      if pooled is not None:
        bias_name = f"{name or 'policy'}_pooled_bias"
        p = p + nn.Dense(2, dtype=self.dtype, name=bias_name)(pooled)[:, None, None]
      return nn.Dense(actions, dtype=self.dtype, name=name)(p.reshape(batch, -1))

    logits = policy_head(None)
    v = nn.relu(norm()(conv(1)(x))).reshape(batch, -1)
    if pooled is not None:
      v = jnp.concatenate([v, pooled], axis=-1)
    hidden = nn.relu(nn.Dense(self.value_hidden, dtype=self.dtype)(v))
    value = jnp.tanh(nn.Dense(1, dtype=self.dtype)(hidden))[:, 0]
    outputs = {}
    if self.ownership_head:
      outputs["ownership"] = conv(1)(x).reshape(batch, h * w)
    if self.score_head:
      outputs["score"] = nn.Dense(1, dtype=self.dtype, name="score")(hidden)[:, 0]
    if self.opponent_policy_head:
      outputs["opponent_policy"] = policy_head("opponent_policy")
    as_f32 = lambda a: a.astype(jnp.float32)
    if aux:
      return as_f32(logits), as_f32(value), {k: as_f32(a) for k, a in outputs.items()}
    return as_f32(logits), as_f32(value)
