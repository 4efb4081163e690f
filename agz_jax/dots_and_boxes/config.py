"""Static configuration of a Dots and Boxes game, and the board's geometry as numpy tables."""

import dataclasses
import functools

import numpy as np


@dataclasses.dataclass(frozen=True)
class DotsConfig:
  """The size of one Dots and Boxes game; hashable, so it can be a static jit argument.

  Attributes:
    rows: boxes from top to bottom (1 to 10).
    cols: boxes from left to right (1 to 10).

  Lines are numbered as in OpenSpiel's `dots_and_boxes`: the horizontal lines
  first, row by row (`h(r, c) = r * cols + c`, r in 0..rows, c in 0..cols-1),
  then the vertical ones (`v(r, c) = (rows + 1) * cols + r * (cols + 1) + c`,
  r in 0..rows-1, c in 0..cols). Box (r, c) has the sides h(r, c), h(r+1, c),
  v(r, c) and v(r, c+1).
  """

  rows: int = 3
  cols: int = 3

  def __post_init__(self):
    for name in ("rows", "cols"):
      value = getattr(self, name)
      if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 10:
        raise ValueError(f"DotsConfig: {name} (boxes) must be an integer from 1 to 10, "
                         f"got {value!r}")

  @property
  def num_lines(self) -> int:
    return (self.rows + 1) * self.cols + self.rows * (self.cols + 1)

  @property
  def num_boxes(self) -> int:
    return self.rows * self.cols

  @property
  def grid_shape(self) -> tuple[int, int]:
    """(H, W) = (2 rows + 1, 2 cols + 1): dots, lines and boxes on one grid, dots at even
    (row, column), box (r, c) at (2r + 1, 2c + 1)."""
    return 2 * self.rows + 1, 2 * self.cols + 1


def num_actions(cfg: DotsConfig) -> int:
  """Every line is an action; there is no pass."""
  return cfg.num_lines


def max_length(cfg: DotsConfig) -> int:
  """A game draws every line once."""
  return cfg.num_lines


def pass_action(cfg: DotsConfig) -> None:
  del cfg  # no pass in Dots and Boxes


def dirichlet_alpha(cfg: DotsConfig) -> float:
  """AlphaZero's ~10 / typical number of legal moves (half the lines), at most 1."""
  return min(1.0, 20.0 / cfg.num_lines)


def line_name(cfg: DotsConfig, line: int) -> tuple[str, int, int]:
  """("h" or "v", r, c) of a line index."""
  horizontal = (cfg.rows + 1) * cfg.cols
  if not 0 <= line < cfg.num_lines:
    raise ValueError(f"line {line} is not on a {cfg.rows}x{cfg.cols} board "
                     f"(lines 0..{cfg.num_lines - 1})")
  if line < horizontal:
    return "h", line // cfg.cols, line % cfg.cols
  r, c = divmod(line - horizontal, cfg.cols + 1)
  return "v", r, c


def line_index(cfg: DotsConfig, kind: str, r: int, c: int) -> int:
  """The index of line h(r, c) or v(r, c).

  Raises:
    ValueError: no such line on this board.
  """
  if kind == "h" and 0 <= r <= cfg.rows and 0 <= c < cfg.cols:
    return r * cfg.cols + c
  if kind == "v" and 0 <= r < cfg.rows and 0 <= c <= cfg.cols:
    return (cfg.rows + 1) * cfg.cols + r * (cfg.cols + 1) + c
  raise ValueError(f"no line {kind}({r},{c}) on a {cfg.rows}x{cfg.cols} board: h(r,c) takes "
                   f"r 0..{cfg.rows}, c 0..{cfg.cols - 1}; v(r,c) takes r 0..{cfg.rows - 1}, "
                   f"c 0..{cfg.cols}")


@functools.lru_cache(maxsize=None)
def box_sides(cfg: DotsConfig) -> np.ndarray:
  """[boxes, 4] int32: the lines around each box (r * cols + c): top, bottom, left, right."""
  sides = [[line_index(cfg, "h", r, c), line_index(cfg, "h", r + 1, c),
            line_index(cfg, "v", r, c), line_index(cfg, "v", r, c + 1)]
           for r in range(cfg.rows) for c in range(cfg.cols)]
  return np.asarray(sides, np.int32)


@functools.lru_cache(maxsize=None)
def line_cells(cfg: DotsConfig) -> np.ndarray:
  """[lines] int32: each line's cell on the (H, W) grid, flattened (y * W + x)."""
  _, w = cfg.grid_shape
  cells = []
  for line in range(cfg.num_lines):
    kind, r, c = line_name(cfg, line)
    y, x = (2 * r, 2 * c + 1) if kind == "h" else (2 * r + 1, 2 * c)
    cells.append(y * w + x)
  return np.asarray(cells, np.int32)


@functools.lru_cache(maxsize=None)
def box_cells(cfg: DotsConfig) -> np.ndarray:
  """[boxes] int32: each box's cell on the (H, W) grid, flattened."""
  _, w = cfg.grid_shape
  return np.asarray([(2 * r + 1) * w + 2 * c + 1 for r in range(cfg.rows)
                     for c in range(cfg.cols)], np.int32)
