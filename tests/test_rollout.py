"""Rollouts on the device: sensible moves, passes, scoring, and lanes that take the next game."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax import go
from agz_jax.go import rollout

CFG = go.GoConfig(size=5, komi=0.5)


def lowest_first(cfg):
  """A policy that all but always plays its lowest-numbered sensible point."""
  return lambda states: jnp.broadcast_to(-100.0 * jnp.arange(cfg.num_points, dtype=jnp.float32),
                                         states.board.shape[:1] + (cfg.num_points,))


def _host_rollout(cfg, state, max_moves):
  """The lowest sensible point each turn (pass when none), played with go.play: (black's result,
  moves played)."""
  sensible = jax.jit(functools.partial(go.sensible_moves, cfg))
  start = int(state.move_count)
  while not bool(state.terminated) and int(state.move_count) - start < max_moves:
    points = np.flatnonzero(np.asarray(sensible(state))[:cfg.num_points])
    state = go.play(cfg, [int(points[0]) if len(points) else cfg.pass_action], state)
  moves = int(state.move_count) - start
  if int(state.forfeit):
    return -int(state.forfeit), moves
  return int(np.sign(go.host_score(cfg, state))), moves


def _starts(cfg, num, seed):
  rng = np.random.default_rng(seed)
  states = []
  for _ in range(num):
    state = go.init(cfg)
    for _ in range(int(rng.integers(0, 8))):
      legal = np.flatnonzero(np.asarray(go.sensible_moves(cfg, state))[:-1])
      state = go.play(cfg, [int(rng.choice(legal))], state)
    states.append(state)
  return states


def test_rollouts_equal_a_host_replay_whatever_the_lanes():
  starts = _starts(CFG, 6, 0)
  batch = jax.tree.map(lambda *x: jnp.stack(x), *starts)
  expected, expected_lengths = zip(*[_host_rollout(CFG, s, 60) for s in starts])
  expected = [r * int(s.to_play) for r, s in zip(expected, starts)]
  for lanes in (6, 2, 1):
    run = jax.jit(functools.partial(rollout.rollouts, CFG, lowest_first(CFG), lanes=lanes,
                                    max_moves=60, with_lengths=True))
    results, lengths = run(batch, jax.random.PRNGKey(lanes))
    np.testing.assert_array_equal(np.asarray(results), expected, err_msg=f"{lanes} lanes")
    np.testing.assert_array_equal(np.asarray(lengths), expected_lengths)
  assert len(set(expected)) > 1  # both sides win some: the sign of the view is checked


def test_a_move_cap_scores_the_game_as_it_stands():
  starts = _starts(CFG, 3, 1)
  batch = jax.tree.map(lambda *x: jnp.stack(x), *starts)
  run = jax.jit(functools.partial(rollout.rollouts, CFG, lowest_first(CFG), max_moves=3,
                                  with_lengths=True))
  results, lengths = run(batch, jax.random.PRNGKey(0))
  np.testing.assert_array_equal(np.asarray(lengths), [3, 3, 3])
  expected = [_host_rollout(CFG, s, 3)[0] * int(s.to_play) for s in starts]
  np.testing.assert_array_equal(np.asarray(results), expected)


EYES = """
. X . X .
X X X X X
O O O O O
. O . O .
O O O O O
"""


CORNER = """
. X . X . . .
X X X X . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
. . . . . . .
"""


def test_no_eye_is_filled():
  size, black, white = go.parse_board(CORNER)
  cfg = go.GoConfig(size=size, komi=0.5)
  state = go.init(cfg, black=black, white=white, to_play=go.BLACK)
  batch = jax.tree.map(lambda x: jnp.stack([x] * 512), state)
  moves = np.asarray(jax.jit(functools.partial(rollout.sample_move, cfg, rollout.uniform_logits(cfg)))(
      batch, jax.random.PRNGKey(1)))
  assert not {0, 2} & set(moves.tolist())
  assert len(set(moves.tolist())) > 20 and cfg.pass_action not in moves


def test_pass_comes_only_when_nothing_sensible_is_left():
  size, black, white = go.parse_board(EYES)
  cfg = go.GoConfig(size=size, komi=0.5)
  for to_play in (go.BLACK, go.WHITE):
    # The only legal points are eyes: the opponent's are suicide, one's own are not sensible.
    state = go.init(cfg, black=black, white=white, to_play=to_play)
    batch = jax.tree.map(lambda x: jnp.stack([x] * 64), state)
    moves = jax.jit(functools.partial(rollout.sample_move, cfg, rollout.uniform_logits(cfg)))(
        batch, jax.random.PRNGKey(0))
    assert set(np.asarray(moves).tolist()) == {cfg.pass_action}


def test_a_settled_board_is_won_by_its_owner_from_either_side():
  size, black, white = go.parse_board(EYES)
  cfg = go.GoConfig(size=size, komi=0.5)
  # Black has 7 stones and 3 eyes (10 points), white 12 stones and 3 eyes (15): white wins.
  for to_play, expected in ((go.BLACK, -1.0), (go.WHITE, 1.0)):
    state = go.init(cfg, black=black, white=white, to_play=to_play)
    batch = jax.tree.map(lambda x: jnp.stack([x] * 8), state)
    results = jax.jit(functools.partial(rollout.rollouts, cfg, rollout.uniform_logits(cfg)))(
        batch, jax.random.PRNGKey(2))
    np.testing.assert_array_equal(np.asarray(results), expected)
