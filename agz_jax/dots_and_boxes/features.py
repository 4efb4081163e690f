"""Input planes of a Dots and Boxes position, and the board's symmetries.

The planes lie on the (2 rows + 1) x (2 cols + 1) grid of dots, lines and
boxes (DotsConfig.grid_shape), from the view of the player to move:

  0  the lines drawn
  1  the boxes the player to move owns
  2  the boxes the opponent owns
  3  where a line can be (constant)
  4  where a box is (constant)
  5  the mover's lead in boxes / number of boxes (the whole plane)
"""

import functools

import jax.numpy as jnp
import numpy as np

from agz_jax.dots_and_boxes.config import DotsConfig, box_cells, line_cells

ENCODINGS = ("boxes",)
NUM_PLANES = 6


def check_encoding(cfg: DotsConfig, encoding: str) -> None:
  """Raises a ValueError naming the problem if `encoding` is not a Dots and Boxes encoding."""
  del cfg
  if encoding not in ENCODINGS:
    raise ValueError(f"Dots and Boxes networks read the encoding {' or '.join(ENCODINGS)!r} "
                     f"(model.encoding), got {encoding!r}")


def planes_shape(cfg: DotsConfig, encoding: str) -> tuple[int, int, int]:
  check_encoding(cfg, encoding)
  return (*cfg.grid_shape, NUM_PLANES)


def features(cfg: DotsConfig, state, encoding: str = "boxes"):
  """[..., H, W, 6] float32 planes of one state or a batch (any leading axes)."""
  check_encoding(cfg, encoding)
  h, w = cfg.grid_shape
  lead = state.lines.shape[:-1]
  mover = state.to_play.astype(jnp.int8)[..., None]
  mine = (state.boxes == mover).astype(jnp.float32)
  theirs = (state.boxes == -mover).astype(jnp.float32)
  lines_at, boxes_at = jnp.asarray(line_cells(cfg)), jnp.asarray(box_cells(cfg))

  def on_grid(values, cells):
    return jnp.zeros((*lead, h * w), jnp.float32).at[..., cells].set(values)

  lead_plane = (mine.sum(-1) - theirs.sum(-1)) / cfg.num_boxes
  planes = [on_grid(state.lines.astype(jnp.float32), lines_at), on_grid(mine, boxes_at),
            on_grid(theirs, boxes_at),
            jnp.broadcast_to(jnp.asarray(_mask(cfg, "lines")), (*lead, h * w)),
            jnp.broadcast_to(jnp.asarray(_mask(cfg, "boxes")), (*lead, h * w)),
            jnp.broadcast_to(lead_plane[..., None], (*lead, h * w))]
  return jnp.stack(planes, axis=-1).reshape(*lead, h, w, NUM_PLANES)


@functools.lru_cache(maxsize=None)
def _mask(cfg: DotsConfig, which: str) -> np.ndarray:
  h, w = cfg.grid_shape
  mask = np.zeros(h * w, np.float32)
  mask[line_cells(cfg) if which == "lines" else box_cells(cfg)] = 1.0
  return mask


@functools.lru_cache(maxsize=None)
def symmetries(cfg: DotsConfig) -> tuple[np.ndarray, np.ndarray]:
  """(plane_perm [S, H*W], action_perm [S, L]): the board's 8 symmetries if it is square,
  else its 4 (identity, the two mirrors, the half turn); k = 0 is the identity.

  Transform k maps the planes x (over the grid's cells) to x[plane_perm[k]] and
  a policy p over the lines to p[action_perm[k]].
  """
  h, w = cfg.grid_shape
  grid = np.arange(h * w).reshape(h, w)
  maps = [lambda g: g, np.flipud, np.fliplr, lambda g: np.rot90(g, 2)]
  if h == w:
    maps += [np.transpose, lambda g: np.rot90(g, 1), lambda g: np.rot90(g, 3),
             lambda g: np.rot90(g, 2).T]
  plane_perm = np.stack([f(grid).ravel() for f in maps]).astype(np.int32)
  line_at = np.full(h * w, -1, np.int32)
  line_at[line_cells(cfg)] = np.arange(cfg.num_lines)
  action_perm = line_at[plane_perm[:, line_cells(cfg)]]
  assert (action_perm >= 0).all()  # lines go to lines under every symmetry of the grid
  return plane_perm, action_perm.astype(np.int32)
