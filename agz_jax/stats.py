"""Match statistics (placeholder until the shared module lands)."""

import jax.numpy as jnp


def elo_difference(score, games=None):
  """Elo difference implied by an expected score, clipped away from 0 and 1 by 0.5 / games."""
  if games is not None:
    eps = 0.5 / games
    score = jnp.clip(score, eps, 1 - eps)
  return 400.0 * jnp.log10(score / (1 - score))
