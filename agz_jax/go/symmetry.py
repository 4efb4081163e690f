"""The 8 symmetries of the square board, for planes and policies alike.

Transform k (0..7) rotates the board by k % 4 quarter turns and, for k >= 4,
then mirrors it. The same point permutation is applied to feature planes and to
the board part of a policy vector, so a stone and a policy mass on the same
point move together; the pass entry never moves. k may be a traced integer.
"""

import functools

import jax.numpy as jnp
import numpy as np

NUM_SYMMETRIES = 8


@functools.cache
def symmetry_permutations(size: int) -> np.ndarray:
  """[8, P] int32: transform k maps a per-point array x to x[perm[k]]."""
  grid = np.arange(size * size).reshape(size, size)
  perms = []
  for k in range(NUM_SYMMETRIES):
    t = np.rot90(grid, k % 4)
    if k >= 4:
      t = t.T
    perms.append(t.reshape(-1))
  return np.stack(perms).astype(np.int32)


def symmetries(cfg) -> tuple[np.ndarray, np.ndarray]:
  """The game protocol's symmetries: ([8, P] point and [8, P + 1] action permutations)."""
  points = symmetry_permutations(cfg.size)
  actions = np.concatenate([points, np.full((NUM_SYMMETRIES, 1), cfg.size * cfg.size)], axis=1)
  return points, actions.astype(np.int32)


@functools.cache
def _inverse_table(size: int) -> np.ndarray:
  perms = symmetry_permutations(size)
  inverse = []
  for k in range(NUM_SYMMETRIES):
    undo = np.argsort(perms[k])
    inverse.append(next(j for j in range(NUM_SYMMETRIES) if np.array_equal(perms[j], undo)))
  return np.asarray(inverse, np.int32)


def inverse_symmetry(k):
  """The transform that undoes transform k (the same for every board size)."""
  return jnp.asarray(_inverse_table(3))[k]


def transform_planes(planes: jnp.ndarray, k) -> jnp.ndarray:
  """Applies transform k to [N, N, C] planes."""
  n, _, c = planes.shape
  perm = jnp.asarray(symmetry_permutations(n))[k]
  return planes.reshape(n * n, c)[perm].reshape(n, n, c)


def transform_policy(policy: jnp.ndarray, k) -> jnp.ndarray:
  """Applies transform k to a [P + 1] policy (or logits) vector; pass stays last."""
  n = int(round(np.sqrt(policy.shape[-1] - 1)))
  perm = jnp.asarray(symmetry_permutations(n))[k]
  return jnp.concatenate([policy[perm], policy[-1:]])
