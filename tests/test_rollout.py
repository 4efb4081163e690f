"""Rollouts on the device: sensible moves, passes, scoring, and lanes that take the next game."""

import functools
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go
from agz_jax.alphago import rollout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import SUPERKO, ReferenceGo  # noqa: E402  pylint: disable=wrong-import-position

CFG = go.GoConfig(size=5, komi=0.5)


def lowest_first(cfg):
  """A policy that all but always plays its lowest-numbered sensible point."""
  return lambda states: jnp.broadcast_to(-100.0 * jnp.arange(cfg.num_points, dtype=jnp.float32),
                                         states.board.shape[:1] + (cfg.num_points,))


def _host_rollout(cfg, state, max_moves, superko=False):
  """The lowest sensible point each turn (pass when none), one move at a time: (black's result,
  moves played)."""
  sensible = jax.jit(functools.partial(go.sensible_moves, cfg, superko=superko))
  step = jax.jit(functools.partial(go.step, cfg, superko=superko))
  start = int(state.move_count)
  while not bool(state.terminated) and int(state.move_count) - start < max_moves:
    points = np.flatnonzero(np.asarray(sensible(state))[:cfg.num_points])
    state = step(state, int(points[0]) if len(points) else cfg.pass_action)
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


@pytest.mark.parametrize("superko", [False, True])
def test_rollouts_equal_a_host_replay_whatever_the_lanes(superko, monkeypatch):
  starts = _starts(CFG, 6, 0)
  batch = jax.tree.map(lambda *x: jnp.stack(x), *starts)
  expected, expected_lengths = zip(*[_host_rollout(CFG, s, 60, superko) for s in starts])
  expected = [r * int(s.to_play) for r, s in zip(expected, starts)]
  # Narrowing down to one lane: 6 -> 3 -> 1 lanes, 2 -> 1, or never (shrink 1).
  monkeypatch.setattr(rollout, "MIN_LANES", 1)
  for lanes, shrink in ((6, 1), (6, 2), (2, 2), (1, 2)):
    run = jax.jit(functools.partial(rollout.rollouts, CFG, lowest_first(CFG), lanes=lanes,
                                    max_moves=60, with_lengths=True, superko=superko, shrink=shrink))
    results, lengths = run(batch, jax.random.PRNGKey(lanes))
    np.testing.assert_array_equal(np.asarray(results), expected, err_msg=f"{lanes} lanes")
    np.testing.assert_array_equal(np.asarray(lengths), expected_lengths)
  assert len(set(expected)) > 1  # both sides win some: the sign of the view is checked
  assert len(set(expected_lengths)) > 1  # games end at different moves: the lanes narrow


def test_moves_are_drawn_from_the_softmax_of_the_logits():
  logits = jnp.array([0.0, -jnp.inf, 1.0, 2.0, -1.0, -jnp.inf, 0.5, -3.0])
  rows = 40_000
  draws = np.asarray(jax.jit(rollout._draw)(jax.random.PRNGKey(3),  # pylint: disable=protected-access
                                             jnp.broadcast_to(logits, (rows, 8))))
  counts = np.bincount(draws, minlength=8)
  expected = rows * np.asarray(jax.nn.softmax(logits))
  assert counts[1] == counts[5] == 0  # never a point without a finite logit
  # Within 5 standard deviations of the multinomial counts, every point.
  np.testing.assert_array_less(np.abs(counts - expected), 5 * np.sqrt(expected + 1))
  # And a row with one finite logit always draws it.
  single = jnp.full((4, 8), -jnp.inf).at[:, 6].set(-50.0)
  assert set(np.asarray(rollout._draw(jax.random.PRNGKey(0), single)).tolist()) == {6}  # pylint: disable=protected-access


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


def test_the_simple_ko_rule_equals_the_reference():
  """Random games on small boards (kos are frequent there) stepped by the simple ko rule: the
  legal moves and boards equal the pure-Python reference's at every move."""
  rng = np.random.default_rng(4)
  bans = 0
  for size, games, moves in ((4, 48, 60), (5, 48, 80)):
    cfg = go.GoConfig(size=size, komi=0.5, max_moves=moves)
    refs = [ReferenceGo(size, 0.5, moves, simple_ko=True) for _ in range(games)]
    legal = jax.jit(jax.vmap(functools.partial(go.legal_actions, cfg, superko=False)))
    step = jax.jit(jax.vmap(functools.partial(go.step, cfg, superko=False)))
    states = jax.vmap(lambda _: go.init(cfg))(jnp.arange(games))
    for move in range(moves):
      mask = np.asarray(legal(states))
      for g, ref in enumerate(refs):
        np.testing.assert_array_equal(mask[g], ref.legal_mask(), err_msg=f"{size}x{size} game {g} "
                                      f"move {move}\n{ref.to_ascii()}")
        np.testing.assert_array_equal(np.asarray(states.board[g]), ref.board)
        bans += sum(ref.illegal_reason(a) == SUPERKO for a in range(ref.num_points))
      actions = []
      for ref, m in zip(refs, mask):
        points = np.flatnonzero(m[:-1])
        action = int(rng.choice(points)) if len(points) and rng.random() > 0.03 else ref.pass_action
        ref.play(action)
        actions.append(action)
      states = step(states, jnp.asarray(actions))
  assert bans > 50, bans  # the ko rule was exercised
