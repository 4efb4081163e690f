"""AlphaGo Zero's dual-head residual network (Flax linen)."""

from typing import Any

import chex
import flax.linen as nn
import jax.numpy as jnp


class ResidualBlock(nn.Module):
  """conv 3x3 - BN - ReLU - conv 3x3 - BN - skip - ReLU."""

  channels: int
  dtype: Any = jnp.float32

  @nn.compact
  def __call__(self, x, train: bool):
    norm = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9, dtype=self.dtype)
    conv = lambda: nn.Conv(self.channels, (3, 3), use_bias=False, dtype=self.dtype)
    y = nn.relu(norm()(conv()(x)))
    y = norm()(conv()(y))
    return nn.relu(x + y)


class AlphaZeroNet(nn.Module):
  """Input convolution, `blocks` residual blocks, policy and value heads.

  As in the AlphaGo Zero paper: policy head = 1x1 conv with 2 filters, BN,
  ReLU, dense to P + 1 logits; value head = 1x1 conv with 1 filter, BN, ReLU,
  dense 256, ReLU, dense 1, tanh. With dtype=bfloat16 the convolutions and
  dense layers compute in bfloat16 while parameters stay float32; the outputs
  are float32.

  Attributes:
    blocks: residual blocks (AGZ: 20 or 40).
    channels: filters per convolution (AGZ: 256).
    value_hidden: width of the value head's hidden layer (AGZ: 256).
    dtype: compute dtype.
  """

  blocks: int
  channels: int
  value_hidden: int = 256
  dtype: Any = jnp.float32

  @nn.compact
  def __call__(self, planes, train: bool = False):
    """Evaluates positions.

    Args:
      planes: [B, N, N, F] input planes (go.features).
      train: use batch statistics and update the running ones (in the
        'batch_stats' collection) when True; use the running ones otherwise.

    Returns:
      (logits [B, N*N + 1] float32, value [B] float32 in [-1, 1] for the
      player to move).
    """
    chex.assert_rank(planes, 4)
    batch, n, _, _ = planes.shape
    norm = lambda: nn.BatchNorm(use_running_average=not train, momentum=0.9, dtype=self.dtype)
    x = planes.astype(self.dtype)
    x = nn.relu(norm()(nn.Conv(self.channels, (3, 3), use_bias=False, dtype=self.dtype)(x)))
    for _ in range(self.blocks):
      x = ResidualBlock(self.channels, dtype=self.dtype)(x, train)

    p = nn.relu(norm()(nn.Conv(2, (1, 1), use_bias=False, dtype=self.dtype)(x)))
    logits = nn.Dense(n * n + 1, dtype=self.dtype)(p.reshape(batch, -1))

    v = nn.relu(norm()(nn.Conv(1, (1, 1), use_bias=False, dtype=self.dtype)(x)))
    v = nn.relu(nn.Dense(self.value_hidden, dtype=self.dtype)(v.reshape(batch, -1)))
    v = jnp.tanh(nn.Dense(1, dtype=self.dtype)(v))
    return logits.astype(jnp.float32), v[:, 0].astype(jnp.float32)
