"""Tromp-Taylor scoring in pure JAX: who owns each point, the score, the game's result.

Area scoring: a player's area is their stones and the empty points from which only their
stones can be reached through empty points; the score is black's area less white's, less
komi. One game per call, the static GoConfig first; jax.vmap for a batch.
"""

import jax
import jax.numpy as jnp

from agz_jax.go.config import GoConfig
from agz_jax.go.rules import neighbour_reduce
from agz_jax.go.state import BLACK, EMPTY, WHITE, GoState


def ownership(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """Tromp-Taylor owner of every point: +1 black, -1 white, 0 neither.

  A point belongs to a player when it holds their stone, or is empty and only
  their stones can be reached from it through empty points.

  Returns:
    [N * N] int8.
  """
  board = state.board
  empty = board == EMPTY
  seeds = jnp.stack([board == BLACK, board == WHITE])                         # [2, P]

  def grow(carry):
    reach, _ = carry
    near = neighbour_reduce(cfg, reach, False, jnp.logical_or)
    new = reach | (near & empty[None])
    return new, jnp.any(new != reach)

  reach, _ = jax.lax.while_loop(lambda c: c[1], grow, (seeds, jnp.bool_(True)))
  black = seeds[0] | (empty & reach[0] & ~reach[1])
  white = seeds[1] | (empty & reach[1] & ~reach[0])
  return black.astype(jnp.int8) - white.astype(jnp.int8)


def score(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """Tromp-Taylor area score: black area - white area - komi (areas as in `ownership`).

  Returns:
    [] float32.
  """
  return jnp.sum(ownership(cfg, state), dtype=jnp.float32) - jnp.float32(cfg.komi)


def result(cfg: GoConfig, state: GoState, needed=True) -> jnp.ndarray:
  """The game's outcome for black: +1 win, -1 loss, 0 draw.

  A forfeit (illegal action given to `step`) decides it; otherwise the sign of
  the Tromp-Taylor score of the current position.

  Args:
    needed: [] bool; where False the result is 0 and costs almost nothing:
      scoring floods empty regions in a while_loop, which under vmap runs as
      long as the slowest board, so an unneeded board is scored empty (one
      round).

  Returns:
    [] float32.
  """
  needed = jnp.asarray(needed, bool)
  board = jnp.where(needed, state.board, jnp.int8(EMPTY))
  by_score = jnp.sign(score(cfg, state.replace(board=board)))
  outcome = jnp.where(state.forfeit != 0, -state.forfeit.astype(jnp.float32), by_score)
  return jnp.where(needed, outcome, 0.0)
