"""AlphaGo's value network v_theta (Flax linen)."""

from typing import Any

import chex
import flax.linen as nn
import jax.numpy as jnp


class ValueNet(nn.Module):
  """The 2016 AlphaGo value network: the policy network's convolutions, then a value head.

  A 5x5 convolution and `layers - 2` 3x3 convolutions of `filters` filters
  (ReLU after each; the paper: the SL policy's layers 1-11 and one more 3x3
  layer), a 1x1 convolution with one filter, a fully connected layer of
  `hidden` ReLU units and one tanh output: the expected result for the player
  to move. The paper's network: 13 layers of 192 filters, 256 hidden units,
  49 input planes (AlphaGo's 48 and the colour to play).

  The paper does not say whether a ReLU follows the 1x1 layer. With one, that
  layer's single channel can die: on human games (results hard to read, mean
  near 0) it fell below zero at every point early in training, the gradient
  with it, and the network said the same value for every position from then on.
  So none by default; `relu_1x1=True` is the layer of the networks trained before
  (their checkpoints load with it).

  Attributes:
    layers: convolution layers in all, the 1x1 one included (>= 2).
    filters: filters of the hidden convolutions.
    hidden: units of the fully connected layer.
    relu_1x1: a ReLU after the 1x1 layer (the networks trained before this setting).
    dtype: compute dtype (parameters stay float32; the value is float32).
  """

  layers: int = 13
  filters: int = 192
  hidden: int = 256
  relu_1x1: bool = False
  dtype: Any = jnp.float32

  @nn.compact
  def __call__(self, planes, train: bool = False):
    """Values of positions: [B, N, N, F] planes -> [B] float32 in [-1, 1], for the player to move.

    `train` is unused (no dropout or normalisation); kept for the shared network signature.
    """
    del train
    chex.assert_rank(planes, 4)
    b = planes.shape[0]
    x = planes.astype(self.dtype)
    x = nn.relu(nn.Conv(self.filters, (5, 5), dtype=self.dtype, name="conv_in")(x))
    for i in range(self.layers - 2):
      x = nn.relu(nn.Conv(self.filters, (3, 3), dtype=self.dtype, name=f"conv_{i}")(x))
    x = nn.Conv(1, (1, 1), dtype=self.dtype, name="conv_out")(x)
    if self.relu_1x1:
      x = nn.relu(x)
    x = x.reshape(b, -1)
    x = nn.relu(nn.Dense(self.hidden, dtype=self.dtype, name="hidden")(x))
    return jnp.tanh(nn.Dense(1, dtype=self.dtype, name="value")(x))[:, 0].astype(jnp.float32)
