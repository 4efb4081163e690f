"""The rules of Dots and Boxes in pure JAX, one game per call (vmap outside).

Players take turns drawing one line between two neighbouring dots. A player
who completes the fourth side of a box (or of two boxes at once) owns it and
must draw another line; otherwise the turn passes. The game ends when every
line is drawn; the player with more boxes wins (equal counts: a draw).
"""

import jax
import jax.numpy as jnp
from flax import struct

from agz_jax.dots_and_boxes.config import DotsConfig, box_cells, box_sides

FIRST, SECOND = 1, -1


@struct.dataclass
class DotsState:
  """One game of Dots and Boxes (L lines, N boxes; DotsConfig numbers them).

  Attributes:
    lines: [L] bool, the lines drawn.
    boxes: [N] int8, each box's owner: +1 the first player, -1 the second, 0 none yet.
    to_play: [] int8, +1 or -1.
    terminated: [] bool.
    move_count: [] int32, lines drawn so far.
    forfeit: [] int8, the player who drew an illegal line (that player loses), else 0.
  """

  lines: jax.Array
  boxes: jax.Array
  to_play: jax.Array
  terminated: jax.Array
  move_count: jax.Array
  forfeit: jax.Array


def init(cfg: DotsConfig) -> DotsState:
  """An empty board, the first player (+1) to move."""
  return DotsState(lines=jnp.zeros(cfg.num_lines, bool), boxes=jnp.zeros(cfg.num_boxes, jnp.int8),
                   to_play=jnp.int8(FIRST), terminated=jnp.bool_(False),
                   move_count=jnp.int32(0), forfeit=jnp.int8(0))


def _where(cond, a: DotsState, b: DotsState) -> DotsState:
  return jax.tree.map(lambda x, y: jnp.where(cond, x, y), a, b)


def step(cfg: DotsConfig, state: DotsState, action) -> DotsState:
  """Draws line `action` for the player to move.

  Returns:
    The game after the line. A finished game is returned unchanged. An
    illegal action (a line already drawn, or no line at all) changes only
    `terminated` (set) and `forfeit` (the mover): the mover loses.
  """
  action = jnp.asarray(action, jnp.int32)
  line = jnp.clip(action, 0, cfg.num_lines - 1)
  legal = (action >= 0) & (action < cfg.num_lines) & ~state.lines[line]
  lines = state.lines.at[line].set(True)
  completed = jnp.all(lines[jnp.asarray(box_sides(cfg))], axis=1) & (state.boxes == 0)
  scored = jnp.any(completed)
  played = DotsState(
      lines=lines, boxes=jnp.where(completed, state.to_play, state.boxes).astype(jnp.int8),
      to_play=jnp.where(scored, state.to_play, -state.to_play).astype(jnp.int8),
      terminated=jnp.all(lines), move_count=state.move_count + 1, forfeit=jnp.int8(0))
  forfeited = state.replace(terminated=jnp.bool_(True), forfeit=state.to_play)
  return _where(state.terminated, state, _where(legal, played, forfeited))


def legal_actions(cfg: DotsConfig, state: DotsState) -> jax.Array:
  """[L] bool: the lines not drawn yet (none once the game is over)."""
  del cfg
  return ~state.lines & ~state.terminated


def score(cfg: DotsConfig, state: DotsState) -> jax.Array:
  """[] float32: the first player's boxes minus the second's."""
  del cfg
  return jnp.sum(state.boxes.astype(jnp.float32))


def result(cfg: DotsConfig, state: DotsState, needed=True) -> jax.Array:
  """[] float32: +1 if the first player won, -1 if the second did, 0 for a draw (or where
  not `needed`). A forfeit loses whatever the boxes say."""
  outcome = jnp.where(state.forfeit != 0, -state.forfeit.astype(jnp.float32),
                      jnp.sign(score(cfg, state)))
  return jnp.where(needed, outcome, 0.0).astype(jnp.float32)


def ownership(cfg: DotsConfig, state: DotsState) -> jax.Array:
  """[H * W] int8 over the grid of `features`: each box's owner at its cell, 0 on the dots
  and lines."""
  h, w = cfg.grid_shape
  return jnp.zeros(h * w, jnp.int8).at[jnp.asarray(box_cells(cfg))].set(state.boxes)
