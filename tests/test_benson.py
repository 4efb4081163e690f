"""Benson's pass-alive area (agz_jax.go.benson) on hand-drawn positions and against the plain
reference (tests/reference_benson.py) on random positions.

A hand-drawn case gives the board and the expected area as text: X black's area, O white's,
. neither. Each case is checked against both implementations, so the reference is held to the
hand-made expectations too. The JAX function is compiled once per board size (jit + vmap).
"""

import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_benson  # noqa: E402  pylint: disable=wrong-import-position

from agz_jax import go  # noqa: E402
from agz_jax.go.benson import pass_alive  # noqa: E402


@functools.cache
def compiled(size):
  """pass_alive for a batch of boards [B, P] of one size."""
  cfg = go.GoConfig(size=size)
  return jax.jit(jax.vmap(lambda board: pass_alive(cfg, board)))


def board_of(text):
  """(size, [P] int8 board) from parse_board's text format."""
  size, black, white = go.parse_board(text)
  board = np.zeros(size * size, np.int8)
  board[black], board[white] = 1, -1
  return size, board


def swap_colours(text):
  return text.translate(str.maketrans("XO", "OX"))


def check(position, expected):
  """Both implementations give `expected` (text) on `position` (text)."""
  size, board = board_of(position)
  _, want = board_of(expected)
  got = np.asarray(compiled(size)(board[None]))[0]
  reference = np.array(reference_benson.pass_alive(size, board.tolist()))
  np.testing.assert_array_equal(reference, want, err_msg="reference")
  np.testing.assert_array_equal(got, want, err_msg="jax")


TWO_EYES = """
  . X . X X
  X X X X .
  . . . . .
  . . . . .
  . . . . .
"""
TWO_EYES_AREA = """
  X X X X X
  X X X X .
  . . . . .
  . . . . .
  . . . . .
"""


def test_two_eyes_are_alive_with_their_eyes():
  check(TWO_EYES, TWO_EYES_AREA)


def test_two_eyes_of_white_are_white_area():
  check(swap_colours(TWO_EYES), swap_colours(TWO_EYES_AREA))


ALL_NEUTRAL_5 = "\n".join([". . . . ."] * 5)


@pytest.mark.parametrize("position", [
    # One eye of one point.
    """
    . X . . .
    X X . . .
    . . . . .
    . . . . .
    . . . . .
    """,
    # One eye of two points, each a liberty: one vital region, not two.
    """
    . . X . .
    X X X . .
    . . . . .
    . . . . .
    . . . . .
    """,
], ids=["one-point", "two-point"])
def test_one_eye_is_not_alive(position):
  check(position, ALL_NEUTRAL_5)


# The corner point is next to two chains cut apart by the white stones on its diagonal: the
# lower chain has no other eye, so it falls first, takes the corner with it, and the upper
# chain is left with one eye.
FALSE_EYE = """
  . X X . X X
  X O X X X X
  X O . . . .
  X . . . . .
  . . . . . .
  . . . . . .
"""


def test_false_eye_is_not_an_eye():
  check(FALSE_EYE, "\n".join([". . . . . ."] * 6))


def test_the_same_eye_made_real_is_alive():
  real = """
    . X X . X X
    X X X X X X
    X . . . . .
    X . . . . .
    . . . . . .
    . . . . . .
  """
  area = """
    X X X X X X
    X X X X X X
    X . . . . .
    X . . . . .
    . . . . . .
    . . . . . .
  """
  check(real, area)


def test_seki_is_neither_players_area():
  # One eye each and two shared liberties: each region of one side holds the other's stones
  # and a point away from it, so neither side has a second vital region.
  seki = """
    . X . O .
    X X . O O
    X X X O O
    O O O O O
    O O O O O
  """
  check(seki, ALL_NEUTRAL_5)


def test_eye_shared_by_two_chains_counts_for_both():
  # Two black chains, each with an eye of its own, and the two-point region between them,
  # which touches both at each of its points: both chains have two vital regions.
  shared = """
    . X . X .
    X X . X X
    . X X O .
    . . . . .
    . . . . .
  """
  area = """
    X X X X X
    X X X X X
    . X X . .
    . . . . .
    . . . . .
  """
  check(shared, area)


def test_eye_shared_with_a_chain_without_another_eye_is_lost():
  # As above but the right chain has no eye of its own: it falls, and with it the shared
  # region, which the left chain needed.
  position = """
    . X . X X
    X X . X X
    . X X O .
    . . . . .
    . . . . .
  """
  check(position, ALL_NEUTRAL_5)


@pytest.mark.parametrize("size", [2, 5, 9, 19])
def test_empty_board_is_nobodys(size):
  got = np.asarray(compiled(size)(np.zeros((1, size * size), np.int8)))[0]
  assert not got.any()
  assert not any(reference_benson.pass_alive(size, [0] * size * size))


def test_whole_board_alive_with_a_dead_stone_inside():
  # The white stone sits in a region that touches black at every point: dead, black's area.
  position = """
    . X . X .
    X X X X X
    . X O . X
    X X X X X
    . X . X .
  """
  check(position, "\n".join(["X X X X X"] * 5))


@pytest.mark.parametrize("corner, area", [
    # (0, 5) is the region's one point with no black stone next to it: black's.
    ("X", """
      X X X X X X
      X X X X X X
      X X X X X X
      X X X X X X
      . . . . . .
      . . . . . .
    """),
    # (0, 5) and (1, 5) touch no black stone: white could live there, not black's.
    (".", """
      X X X X . .
      X X X X . .
      X X X X . .
      X X X X X X
      . . . . . .
      . . . . . .
    """),
], ids=["one-internal-point", "two-internal-points"])
def test_region_of_alive_chains_counts_with_at_most_one_internal_point(corner, area):
  position = f"""
    . X . X . .
    X X X X . .
    . . . X . {corner}
    X X X X X X
    . . . . . .
    . . . . . .
  """
  check(position, area)


@pytest.mark.parametrize("size", [2, 3, 4, 5])
def test_matches_reference_on_arbitrary_boards(size):
  """Random stones, legal or not (chains without liberties, regions without empty points)."""
  rng = np.random.default_rng(size)
  boards = rng.choice(np.array([-1, 0, 0, 1], np.int8), size=(300, size * size))
  got = np.asarray(compiled(size)(boards))
  want = np.array([reference_benson.pass_alive(size, b.tolist()) for b in boards])
  np.testing.assert_array_equal(got, want)
  assert (want == 1).any() and (want == -1).any()


@functools.cache
def random_games(size, games, moves):
  """Plays `games` random games of `moves` moves; returns their boards [games, moves, P].

  Moves are mostly AlphaGo's sensible ones (no own eye filled), so that groups with two eyes
  form; one in ten is any legal move, so that eyes are filled and groups captured too.
  """
  cfg = go.GoConfig(size=size, max_moves=moves + 1)

  def turn(state, key):
    pick, draw = jax.random.split(key)
    sensible = go.sensible_moves(cfg, state, superko=False)
    legal = go.legal_actions(cfg, state, superko=False)
    allowed = jnp.where((jax.random.uniform(pick) < 0.9) & jnp.any(sensible), sensible, legal)
    action = jax.random.categorical(draw, jnp.where(allowed, 0.0, -jnp.inf))
    state = go.step(cfg, state, action, superko=False)
    return state, state.board

  def game(key):
    return jax.lax.scan(turn, go.init(cfg), jax.random.split(key, moves))[1]

  keys = jax.random.split(jax.random.PRNGKey(size), games)
  return np.asarray(jax.jit(jax.vmap(game))(keys))


@pytest.mark.parametrize("size, games, moves", [(9, 40, 200), (19, 10, 750)])
def test_matches_reference_on_random_games(size, games, moves):
  """Five positions of each game, spread over it: 200 boards on 9x9, 50 on 19x19."""
  step = moves // 5
  boards = random_games(size, games, moves)[:, step - 1::step].reshape(-1, size * size)
  got = np.asarray(compiled(size)(boards))
  want = np.array([reference_benson.pass_alive(size, b.tolist()) for b in boards])
  for i in range(len(boards)):
    np.testing.assert_array_equal(got[i], want[i],
                                  err_msg=f"board {i}:\n{boards[i].reshape(size, size)}")
  # The positions exercise the algorithm: both players' areas, their territory and dead stones.
  assert (want == 1).any(axis=1).sum() >= len(boards) // 5
  assert (want == -1).any(axis=1).sum() >= len(boards) // 5
  assert ((want != 0) & (boards == 0)).sum() >= 10 * len(boards) // 5
  assert ((want != 0) & (boards == -want)).any()
