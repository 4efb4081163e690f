"""Dots and Boxes solved exactly on small boards, and a perfect player from the solution.

The boxes a player can still take depend only on the lines drawn, not on who owns the boxes
already taken, so one table over every set of lines holds the game's solution: `values[m]`,
for the player to move when the lines of bitmask `m` are drawn, is the most boxes (theirs
minus the opponent's) that player can make from there on against best play. Tables are built
backwards, from the full board to the empty one, one number of drawn lines at a time, with
numpy; 3 x 3 boxes (24 lines, 16.8 million sets) takes about a minute on one core and 16 MB.

`perfect_lines` plays from the table (batched on device, as the scripted opponents): a line of
the highest value, chosen at random among equals. It maximises the box margin, as the solution
defines best play; against a weak opponent a player that maximised its chance of winning
instead could win a little more often.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax.dots_and_boxes.config import DotsConfig, box_sides
from agz_jax.dots_and_boxes.rules import legal_actions

MAX_LINES = 24  # 3 x 3 boxes; 2 x 4 has 22 lines, 3 x 4 (31) would need 2 GB


def _box_masks(cfg: DotsConfig) -> np.ndarray:
  """[N] int64: the bitmask of each box's four sides."""
  return np.asarray([sum(1 << int(s) for s in sides) for sides in box_sides(cfg)], np.int64)


def _popcount(x: np.ndarray) -> np.ndarray:
  count = np.zeros(x.shape, np.int8)
  for bit in range(int(x.max()).bit_length()):
    count += ((x >> bit) & 1).astype(np.int8)
  return count


@functools.lru_cache(maxsize=4)
def solve(cfg: DotsConfig) -> np.ndarray:
  """[2^L] int8: the value of every set of drawn lines for the player to move (module doc).

  Raises:
    ValueError: a board of more than MAX_LINES lines (its table would not fit).
  """
  lines = cfg.num_lines
  if lines > MAX_LINES:
    raise ValueError(f"a {cfg.rows}x{cfg.cols} board has {lines} lines: the exact solution "
                     f"covers boards of at most {MAX_LINES} lines (3 x 3 boxes)")
  boxes = _box_masks(cfg)
  sets = np.arange(1 << lines, dtype=np.int64)
  drawn = _popcount(sets)
  values = np.zeros(1 << lines, np.int8)  # all lines drawn: nothing left to take
  for count in range(lines - 1, -1, -1):
    layer = sets[drawn == count]
    best = np.full(layer.shape, -128, np.int16)
    for line in range(lines):
      bit = np.int64(1) << line
      free = (layer & bit) == 0
      before = layer[free]
      after = before | bit
      taken = np.zeros(before.shape, np.int16)
      for box in boxes[(boxes & bit) != 0]:  # the boxes this line is a side of
        taken += (after & box) == box
      rest = values[after].astype(np.int16)
      best[free] = np.maximum(best[free], np.where(taken > 0, taken + rest, -rest))
    values[layer] = best.astype(np.int8)
  return values


def line_values(cfg: DotsConfig, values: np.ndarray, lines_drawn) -> np.ndarray:
  """[L] the value of each line for the player to move (boxes it takes now, plus the rest as
  the solution values it; -128 for a line already drawn), from one state's [L] bool lines."""
  mask = sum(1 << i for i, drawn in enumerate(np.asarray(lines_drawn)) if drawn)
  out = np.full(cfg.num_lines, -128, np.int16)
  for line in range(cfg.num_lines):
    if mask >> line & 1:
      continue
    after = mask | (1 << line)
    taken = sum(1 for box in _box_masks(cfg) if box >> line & 1 and after & box == box)
    out[line] = taken + values[after] if taken else -values[after]
  return out


def perfect_lines(cfg: DotsConfig, states, rng_key: jax.Array) -> jax.Array:
  """[B] lines of a perfect player (a scripted opponent: (cfg, states [B], key) -> lines)."""
  table = jnp.asarray(solve(cfg))
  bits = jnp.left_shift(jnp.int32(1), jnp.arange(cfg.num_lines, dtype=jnp.int32))  # [L]
  boxes = jnp.asarray(_box_masks(cfg), jnp.int32)                                  # [N]
  mask = jnp.sum(jnp.where(states.lines, bits, 0), axis=-1)                        # [B]
  after = mask[:, None] | bits[None]                                               # [B, L]
  sides = (boxes[None, None] & bits[None, :, None]) != 0                           # [1, L, N]
  taken = jnp.sum(sides & ((after[..., None] & boxes) == boxes), axis=-1)          # [B, L]
  rest = table[after].astype(jnp.int32)
  value = jnp.where(taken > 0, taken + rest, -rest)
  legal = jax.vmap(functools.partial(legal_actions, cfg))(states)
  value = jnp.where(legal, value, -1000)
  best = legal & (value == jnp.max(value, axis=-1, keepdims=True))
  noise = jax.random.uniform(rng_key, best.shape)
  return jnp.argmax(jnp.where(best, noise, -1.0), axis=-1).astype(jnp.int32)
