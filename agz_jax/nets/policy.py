"""AlphaGo's supervised-learning policy network (Flax linen)."""

from typing import Any

import chex
import flax.linen as nn
import jax.numpy as jnp


class PolicyNet(nn.Module):
  """The 2016 AlphaGo policy network: a plain stack of convolutions, no residuals.

  A 5x5 convolution with `filters` filters, `layers - 2` 3x3 convolutions with
  `filters` filters (each followed by ReLU, zero padding keeps 19x19), then a 1x1
  convolution with one filter plus a learned bias per point: the logits of the
  board points. AlphaGo's network had no pass output; ours adds one logit for
  pass, a dense layer on the last hidden layer's mean over the board, because
  human games (and GTP play) contain passes. The paper's network: 13 layers,
  192 filters, ~3.9M parameters, 48 input planes.

  Attributes:
    layers: convolution layers in all, the 1x1 output layer included (>= 2).
    filters: filters of the hidden layers.
    dtype: compute dtype (parameters stay float32; logits are float32).
  """

  layers: int = 13
  filters: int = 192
  dtype: Any = jnp.float32

  @nn.compact
  def __call__(self, planes, train: bool = False):
    """Move logits of positions.

    Args:
      planes: [B, N, N, F] input planes (go.features).
      train: unused (no dropout or normalisation); kept for the shared network signature.

    Returns:
      [B, N * N + 1] float32 logits, pass last.
    """
    del train
    chex.assert_rank(planes, 4)
    b, n, _, _ = planes.shape
    x = planes.astype(self.dtype)
    x = nn.relu(nn.Conv(self.filters, (5, 5), dtype=self.dtype, name="conv_in")(x))
    for i in range(self.layers - 2):
      x = nn.relu(nn.Conv(self.filters, (3, 3), dtype=self.dtype, name=f"conv_{i}")(x))
    points = nn.Conv(1, (1, 1), use_bias=False, dtype=self.dtype, name="conv_out")(x)
    bias = self.param("point_bias", nn.initializers.zeros, (n * n,))
    points = points.reshape(b, n * n).astype(jnp.float32) + bias
    pass_logit = nn.Dense(1, dtype=self.dtype, name="pass")(jnp.mean(x, axis=(1, 2)))
    return jnp.concatenate([points, pass_logit.astype(jnp.float32)], axis=-1)
