"""AlphaGo Zero feature planes (go.features) and the 8 board symmetries, checked by hand.

Feature planes for a history of 8: planes 0..7 hold the stones of the player to move at times
t, t-1, ..., t-7, planes 8..15 the opponent's, plane 16 is all ones when black is to move.
Boards before the start of the game are empty, even when the game starts from setup stones.
"""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import alphago, go

COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips the letter I.

CFG9 = go.GoConfig(size=9, history=8)
CFG5 = go.GoConfig(size=5, komi=0.5)


@functools.cache
def _jit(name):
  return jax.jit(getattr(go, name), static_argnums=0)


def _point(size, vertex):
  """GTP vertex -> action index, computed independently of go.gtp_to_action."""
  if vertex == "pass":
    return size * size
  return (size - int(vertex[1:])) * size + COLUMNS.index(vertex[0])


def _vertices(plane, size):
  """The set of GTP vertices where a [size, size] plane is 1; every other entry must be 0."""
  plane = np.asarray(plane)
  assert set(np.unique(plane).tolist()) <= {0.0, 1.0}, np.unique(plane)
  rows, cols = np.nonzero(plane)
  return {f"{COLUMNS[c]}{size - r}" for r, c in zip(rows, cols)}


def _planes_as_vertices(planes, size):
  return [_vertices(planes[:, :, i], size) for i in range(planes.shape[-1])]


# ---------------------------------------------------------------------------- features


@pytest.fixture(scope="module")
def short_game():
  """Setup: white A9, black B9. Then B A8 (captures A9), W E5, B pass, W C7.

  Returns the states at times 0..4.
  """
  size, black, white = go.parse_board("""
      O X . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
  """)
  assert size == 9
  states = [go.init(CFG9, black=black, white=white, to_play=go.BLACK)]
  for vertex in ("A8", "E5", "pass", "C7"):
    states.append(_jit("step")(CFG9, states[-1], jnp.int32(_point(9, vertex))))
  assert all(int(s.forfeit) == 0 for s in states)
  return states


def _features(state):
  planes = np.asarray(_jit("features")(CFG9, state))
  assert planes.shape == (9, 9, 17)
  assert planes.dtype == np.float32
  return planes


def test_features_at_the_start_of_a_game_with_setup_stones(short_game):
  planes = _features(short_game[0])
  expected = [set() for _ in range(16)]
  expected[0] = {"B9"}          # black (to move) now
  expected[8] = {"A9"}          # white now; all earlier boards are before the start: empty
  assert _planes_as_vertices(planes[:, :, :16], 9) == expected
  np.testing.assert_array_equal(planes[:, :, 16], 1.0)


def test_features_with_white_to_play(short_game):
  # Time 3, after B A8, W E5, B pass: white to move.
  planes = _features(short_game[3])
  expected = [set() for _ in range(16)]
  expected[0] = {"E5"}          # white at t3
  expected[1] = {"E5"}          # white at t2
  expected[2] = set()           # white at t1: A9 was just captured
  expected[3] = {"A9"}          # white at t0 (setup)
  expected[8] = {"B9", "A8"}    # black at t3 (the pass changed nothing)
  expected[9] = {"B9", "A8"}    # black at t2
  expected[10] = {"B9", "A8"}   # black at t1
  expected[11] = {"B9"}         # black at t0; planes 12..15 are before the start
  assert _planes_as_vertices(planes[:, :, :16], 9) == expected
  np.testing.assert_array_equal(planes[:, :, 16], 0.0)


def test_features_with_black_to_play_after_four_moves(short_game):
  planes = _features(short_game[4])
  expected = [set() for _ in range(16)]
  expected[0:5] = [{"B9", "A8"}] * 4 + [{"B9"}]        # black at t4, t3, t2, t1, t0
  expected[8:13] = [{"E5", "C7"}, {"E5"}, {"E5"}, set(), {"A9"}]   # white at t4..t0
  assert _planes_as_vertices(planes[:, :, :16], 9) == expected
  np.testing.assert_array_equal(planes[:, :, 16], 1.0)


def test_features_with_a_history_of_one():
  cfg = go.GoConfig(size=5, history=1)
  s = go.init(cfg, black=[0], white=[24], to_play=go.WHITE)
  planes = np.asarray(_jit("features")(cfg, s))
  assert planes.shape == (5, 5, 3)
  assert _planes_as_vertices(planes, 5) == [{"E1"}, {"A5"}, set()]


# ---------------------------------------------------------------------------- symmetries

KS = range(8)


def _policy_perm(size, k):
  """perm[p] = where transform_policy sends a one-hot at p (pass included)."""
  eye = jnp.eye(size * size + 1, dtype=jnp.float32)
  moved = jax.vmap(go.transform_policy, in_axes=(0, None))(eye, k)
  return np.asarray(jnp.argmax(moved, axis=-1))


def _planes_perm(size, k):
  """perm[p] = where transform_planes sends a stone at p; channel p holds a one-hot at p."""
  eye = jnp.eye(size * size, dtype=jnp.float32).reshape(size * size, size, size)
  moved = go.transform_planes(jnp.transpose(eye, (1, 2, 0)), k)      # [N, N, P]
  return np.asarray(jnp.argmax(moved.reshape(size * size, size * size), axis=0))


@pytest.mark.parametrize("size", [4, 5])
def test_each_transform_is_a_distinct_permutation(size):
  points = np.arange(size * size, dtype=np.float32)
  boards = []
  for k in KS:
    moved = np.asarray(go.transform_planes(points.reshape(size, size, 1), k)).ravel()
    assert sorted(moved.tolist()) == points.tolist()          # a permutation of the points
    boards.append(tuple(moved.tolist()))
    policy = np.asarray(go.transform_policy(np.arange(size * size + 1, dtype=np.float32), k))
    assert sorted(policy.tolist()) == list(range(size * size + 1))
  assert len(set(boards)) == 8
  np.testing.assert_array_equal(boards[0], points)          # k == 0 is the identity


@pytest.mark.parametrize("k", KS)
def test_transform_then_inverse_is_identity(k):
  rng = np.random.default_rng(k)
  planes = jnp.asarray(rng.normal(size=(5, 5, 3)), jnp.float32)
  policy = jnp.asarray(rng.normal(size=26), jnp.float32)
  inv = go.inverse_symmetry(k)
  assert 0 <= int(inv) < 8
  assert int(go.inverse_symmetry(inv)) == k
  np.testing.assert_array_equal(go.transform_planes(go.transform_planes(planes, k), inv), planes)
  np.testing.assert_array_equal(go.transform_planes(go.transform_planes(planes, inv), k), planes)
  np.testing.assert_array_equal(go.transform_policy(go.transform_policy(policy, k), inv), policy)
  np.testing.assert_array_equal(go.transform_policy(go.transform_policy(policy, inv), k), policy)


@pytest.mark.parametrize("k", KS)
def test_transform_policy_keeps_pass(k):
  policy = jnp.zeros(26).at[25].set(0.7).at[3].set(0.3)
  moved = go.transform_policy(policy, k)
  assert float(moved[25]) == pytest.approx(0.7)
  assert float(moved[:25].sum()) == pytest.approx(0.3)


@pytest.mark.parametrize("size", [4, 5, 9])
def test_planes_and_policy_stay_aligned(size):
  for k in KS:
    policy_perm = _policy_perm(size, k)
    assert policy_perm[size * size] == size * size
    np.testing.assert_array_equal(_planes_perm(size, k), policy_perm[:size * size])


def test_transforms_of_an_asymmetric_board_are_distinct_and_closed_under_composition():
  size, black, white = go.parse_board("""
      X X . . .
      . . . . O
      . . . . .
      . O . . .
      . . . . .
  """)
  board = np.zeros(size * size, np.float32)
  board[black], board[white] = 1, -1
  planes = jnp.asarray(board.reshape(size, size, 1))
  images = [np.asarray(go.transform_planes(planes, k)) for k in KS]
  assert len({im.tobytes() for im in images}) == 8
  for a in KS:
    for b in KS:
      twice = np.asarray(go.transform_planes(jnp.asarray(images[a]), b))
      assert any(np.array_equal(twice, im) for im in images), (a, b)


def test_transforms_with_a_traced_k():
  traces = 0

  def transform(planes, policy, k):
    nonlocal traces
    traces += 1
    return go.transform_planes(planes, k), go.transform_policy(policy, k)

  jitted = jax.jit(transform)
  rng = np.random.default_rng(1)
  planes = jnp.asarray(rng.normal(size=(5, 5, 17)), jnp.float32)
  policy = jnp.asarray(rng.normal(size=26), jnp.float32)
  for k in KS:
    got_planes, got_policy = jitted(planes, policy, jnp.int32(k))
    np.testing.assert_array_equal(got_planes, go.transform_planes(planes, k))
    np.testing.assert_array_equal(got_policy, go.transform_policy(policy, k))
  assert traces == 1
  # One random symmetry per example, as in training: vmap over k.
  batch_planes, batch_policy = jax.jit(jax.vmap(transform, in_axes=(None, None, 0)))(
      planes, policy, jnp.arange(8, dtype=jnp.int32))
  for k in KS:
    np.testing.assert_array_equal(batch_planes[k], go.transform_planes(planes, k))
    np.testing.assert_array_equal(batch_policy[k], go.transform_policy(policy, k))


def test_inverse_symmetry_with_a_traced_k():
  inverse = jax.jit(go.inverse_symmetry)
  for k in KS:
    assert int(inverse(jnp.int32(k))) == int(go.inverse_symmetry(k))


def test_rules_commute_with_symmetries():
  # Legal moves transform with the board, and the score does not change.
  _, black, white = go.parse_board("""
      . O X . .
      O X . . .
      X . . O .
      . . O . O
      . . . O .
  """)
  s = go.init(CFG5, black=black, white=white, to_play=go.BLACK)
  legal = _jit("legal_actions")(CFG5, s)
  for k in KS:
    perm = _policy_perm(5, k)
    t = go.init(CFG5, black=perm[black].tolist(), white=perm[white].tolist(), to_play=go.BLACK)
    moved = go.transform_policy(legal.astype(jnp.float32), k)
    np.testing.assert_array_equal(np.asarray(_jit("legal_actions")(CFG5, t)), np.asarray(moved) == 1.0)
    assert float(_jit("score")(CFG5, t)) == float(_jit("score")(CFG5, s))
    board_planes = go.transform_planes(s.board.astype(jnp.float32).reshape(5, 5, 1), k)
    np.testing.assert_array_equal(np.asarray(board_planes).ravel(), np.asarray(t.board, np.float32))


def test_ladder_settings_are_frozen_chosen_per_backend_and_checked():
  """How the ladders are read is a value passed to go.features, not a module setting that a
  change after the first trace would silently miss."""
  default = alphago.ladder_settings()
  assert default == alphago.ladder_settings("cpu" if jax.default_backend() == "cpu" else "accelerator")
  assert alphago.ladder_settings("cpu").reader == "device"       # a CPU reads inside the program
  assert alphago.ladder_settings("accelerator").reader == "host"  # an accelerator on the host's CPU
  with pytest.raises(dataclasses.FrozenInstanceError):
    default.lanes = 1.0
  assert alphago.LadderSettings(lanes=0.125).lanes_for(64) == 8 and alphago.LadderSettings().lanes_for(1) == 1
  for bad, message in (({"reader": "gpu"}, "reader must be 'device' or 'host'"),
                       ({"lanes": 0.0}, "lanes must be positive"),
                       ({"shrink": 0}, "shrink and host_chunk at least 1")):
    with pytest.raises(ValueError, match=message):
      alphago.LadderSettings(**bad)
