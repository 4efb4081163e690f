"""Scripted Dots and Boxes players, batched on device: the yardsticks of a trained network.

Each is `(cfg, states [B], rng_key) -> [B] lines`, choosing uniformly at random
among the lines its rule allows:

  random  any line not drawn yet
  greedy  takes a box whenever one is offered; otherwise draws a line that gives
          no box away (one that leaves no box with three sides) when there is
          one; otherwise any line
  perfect a line of the best value by the board's exact solution (dots_and_boxes.solver:
          boards of at most 24 lines, solved at its first use)
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax.dots_and_boxes import solver
from agz_jax.dots_and_boxes.config import DotsConfig, box_sides
from agz_jax.dots_and_boxes.rules import legal_actions


def _pick(mask: jax.Array, rng_key: jax.Array) -> jax.Array:
  """[B] a uniformly random True index of each row of [B, L] `mask` (0 for an empty row)."""
  noise = jax.random.uniform(rng_key, mask.shape)
  return jnp.argmax(jnp.where(mask, noise, -1.0), axis=-1).astype(jnp.int32)


@functools.lru_cache(maxsize=None)
def _adjacent(cfg: DotsConfig) -> np.ndarray:
  """[L, N] bool: line l is a side of box b."""
  adjacent = np.zeros((cfg.num_lines, cfg.num_boxes), bool)
  for box, sides in enumerate(box_sides(cfg)):
    adjacent[sides, box] = True
  return adjacent


def random_lines(cfg: DotsConfig, states, rng_key: jax.Array) -> jax.Array:
  return _pick(jax.vmap(functools.partial(legal_actions, cfg))(states), rng_key)


def greedy_lines(cfg: DotsConfig, states, rng_key: jax.Array) -> jax.Array:
  legal = jax.vmap(functools.partial(legal_actions, cfg))(states)
  drawn = states.lines.astype(jnp.int32)                                  # [B, L]
  sides = drawn @ jnp.asarray(_adjacent(cfg), jnp.int32)                  # [B, N]
  adjacent = jnp.asarray(_adjacent(cfg))
  touches = lambda count: jnp.any(adjacent[None] & (sides == count)[:, None, :], axis=-1)
  takes, gives = legal & touches(3), legal & touches(2)                   # [B, L]
  safe = legal & ~gives
  choice = jnp.where(jnp.any(takes, -1, keepdims=True), takes,
                     jnp.where(jnp.any(safe, -1, keepdims=True), safe, legal))
  return _pick(choice, rng_key)


OPPONENTS = {"random": random_lines, "greedy": greedy_lines, "perfect": solver.perfect_lines}
