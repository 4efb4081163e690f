"""Match statistics: the Wilson score interval of a win rate and the Elo difference it implies.

One definition for the host-side match runner and ratings (Python floats) and
the on-device arena (jax arrays inside jit).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np

# Elo points per unit of natural-log odds: a difference D means odds of 10^(D / 400).
ELO_PER_LOG_ODDS = 400 / math.log(10)
# The two-sided 95% quantile of the standard normal distribution.
Z95 = 1.959963984540054


def wilson_interval(points: float, games: int, z: float = Z95) -> tuple[float, float]:
  """Wilson score interval of a win rate.

  Args:
    points: points scored, wins + draws / 2 (not the rate).
    games: games played; with none the interval is [0, 1].
    z: the normal quantile of the confidence level (default 95%).

  Returns:
    (low, high) bounds of the win rate, within [0, 1].
  """
  if games <= 0:
    return 0.0, 1.0
  p = points / games
  denominator = 1 + z * z / games
  centre = (p + z * z / (2 * games)) / denominator
  half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
  return max(0.0, centre - half), min(1.0, centre + half)


def elo_difference(rate, games=None):
  """Elo difference implied by an expected score (a rate) under the logistic model.

  Works on Python or numpy floats (returns a float, or an ndarray for an array
  argument) and on jax arrays, also inside jit: nothing branches on the value.

  Args:
    rate: the expected score (wins + draws / 2) / games, in [0, 1] (not the points).
    games: when given, the rate is first clipped to [0.5 / games, 1 - 0.5 / games]
      so that a clean sweep gives a finite difference; without it a score of 1
      gives +inf and 0 gives -inf.

  Returns:
    400 * log10(rate / (1 - rate)), of the type of `rate`.
  """
  xp = jnp if isinstance(rate, jax.Array) else np
  s = rate if xp is jnp else np.asarray(rate, np.float64)
  if games is not None:
    eps = 0.5 / games
    s = xp.clip(s, eps, 1 - eps)
  with np.errstate(divide="ignore"):  # 1 / 0 and log(0): the infinities documented above
    elo = 400 * xp.log10(s / (1 - s))
  return float(elo) if xp is np and elo.ndim == 0 else elo
