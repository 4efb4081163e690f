"""The exact Dots and Boxes solution (dots_and_boxes.solver) against a plain recursive search,
and the perfect player built on it."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import dots_and_boxes as dab
from agz_jax.dots_and_boxes import solver
from agz_jax.dots_and_boxes.config import DotsConfig, box_sides


def reference_values(cfg):
  """Negamax over frozensets of drawn lines, written from the rules alone."""
  sides = [frozenset(int(s) for s in box) for box in box_sides(cfg)]

  @functools.lru_cache(maxsize=None)
  def value(drawn):
    if len(drawn) == cfg.num_lines:
      return 0
    best = None
    for line in set(range(cfg.num_lines)) - drawn:
      after = drawn | {line}
      taken = sum(1 for box in sides if line in box and box <= after)
      v = taken + value(after) if taken else -value(after)
      best = v if best is None else max(best, v)
    return best
  return value


@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 2), (2, 2)])
def test_the_table_is_the_value_a_plain_search_finds(rows, cols):
  cfg = DotsConfig(rows=rows, cols=cols)
  table = solver.solve(cfg)
  value = reference_values(cfg)
  rng = np.random.default_rng(rows * 10 + cols)
  masks = range(1 << cfg.num_lines) if cfg.num_lines <= 12 else rng.integers(
      0, 1 << cfg.num_lines, 500)
  for mask in masks:
    drawn = frozenset(i for i in range(cfg.num_lines) if mask >> i & 1)
    assert table[mask] == value(drawn), (mask, table[mask], value(drawn))
  # The empty 1 x 1 board: whoever draws the fourth line takes the box, and that is the second
  # player (lines 1 and 3 go to the first).
  if (rows, cols) == (1, 1):
    assert table[0] == -1


def test_boards_beyond_the_table_are_refused_in_one_line():
  with pytest.raises(ValueError, match="at most 24 lines"):
    solver.solve(DotsConfig(rows=3, cols=4))


def reference_line_values(cfg, value, drawn):
  """{line: its value for the player to move} at the set `drawn`, from reference_values."""
  out = {}
  for line in set(range(cfg.num_lines)) - drawn:
    after = drawn | {line}
    taken = sum(1 for box in box_sides(cfg) if line in box.tolist() and set(box.tolist()) <= after)
    out[line] = taken + value(after) if taken else -value(after)
  return out


def test_the_perfect_player_takes_a_line_of_the_best_value_and_keeps_the_board_s_value():
  cfg = DotsConfig(rows=2, cols=2)
  table = solver.solve(cfg)
  value = reference_values(cfg)
  play = jax.jit(functools.partial(solver.perfect_lines, cfg))
  greedy = jax.jit(functools.partial(dab.OPPONENTS["greedy"], cfg))
  step = jax.jit(jax.vmap(functools.partial(dab.step, cfg)))
  games = 64
  states = jax.vmap(lambda _: dab.init(cfg))(jnp.arange(games))
  key = jax.random.PRNGKey(0)
  checked = 0
  for _ in range(cfg.num_lines):
    key, k1, k2 = jax.random.split(key, 3)
    mine = states.to_play == 1  # the perfect player moves first
    lines = jnp.where(mine, play(states, k1), greedy(states, k2))
    for b in np.flatnonzero(np.asarray(mine & ~states.terminated))[:4]:
      drawn = frozenset(np.flatnonzero(np.asarray(states.lines[b])).tolist())
      expected = reference_line_values(cfg, value, drawn)
      values = solver.line_values(cfg, table, np.asarray(states.lines[b]))
      assert {line: int(values[line]) for line in expected} == expected
      assert expected[int(lines[b])] == max(expected.values())
      checked += 1
    states = step(states, lines)
  assert bool(jnp.all(states.terminated)) and checked > 20
  # Best play keeps at least the empty board's value against any opponent, in every game.
  margins = np.asarray(jax.vmap(functools.partial(dab.score, cfg))(states))
  assert (margins >= table[0]).all(), (margins.min(), table[0])
