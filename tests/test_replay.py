"""The replay buffer: game results written back to positions, the ring of rows, stratified sampling.

Positions are hand-made: position `id` has every input plane equal to `id`, policy[0] = id, so a
sampled position can be recognised. A 2x2 board with history 1 keeps the arrays small
(F = 3 planes, A = 5 actions).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go, replay
from agz_jax.game import Game
from agz_jax.selfplay import StepRecord

CFG = go.GoConfig(size=2, history=1)
GAME = Game(go, CFG)
F, A = 2 * CFG.history + 1, CFG.num_actions
EMPTY, WAITING, READY = replay.EMPTY_SLOT, replay.WAITING, replay.READY


def records(ids, to_play, ended, result):
  """[T, B] StepRecords: position ids, colour to move, game ends and results (for black)."""
  ids = np.asarray(ids)
  t, b = ids.shape
  return StepRecord(
      planes=jnp.asarray(np.broadcast_to(ids[:, :, None, None, None], (t, b, CFG.size, CFG.size, F)),
                         jnp.uint8),
      policy=jnp.asarray(np.concatenate([ids[:, :, None], np.zeros((t, b, A - 1))], -1),
                         jnp.float32),
      to_play=jnp.asarray(to_play, jnp.int8),
      action=jnp.zeros((t, b), jnp.int32),
      root_value=jnp.zeros((t, b), jnp.float32),
      ended=jnp.asarray(ended, bool),
      result=jnp.asarray(result, jnp.float32),
      length=jnp.zeros((t, b), jnp.int32),
      resigned=jnp.zeros((t, b), bool),
      resign_checked=jnp.zeros((t, b), bool),
      false_resign=jnp.zeros((t, b), bool),
      root_evaluated=jnp.ones((t, b), bool),
      full_search=jnp.ones((t, b), bool),
      ownership=None,
      score=jnp.zeros((t, b), jnp.float32),
      scored=jnp.zeros((t, b), bool))


_add = jax.jit(replay.add)


def ids_of(buffer):
  """[B, R] id of the position stored in each row (0 where never written)."""
  planes = np.asarray(buffer.planes)
  assert np.all(planes == planes[:, :, :1, :1, :1])
  return planes[:, :, 0, 0, 0].astype(int)


# ---------------------------------------------------------------------------- add

# Two slots, six rows, three steps per add. Slot 0's game ends at step 1 (black wins) and a new
# game starts at step 2; slot 1's game goes on. Colours alternate within a game.
FIRST = records(ids=[[1, 11], [2, 12], [3, 13]],
                to_play=[[1, -1], [-1, 1], [1, -1]],
                ended=[[False, False], [True, False], [False, False]],
                result=[[0, 0], [1, 0], [0, 0]])

# Next three steps. Slot 0: the game begun at row 2 ends at step 0 (white wins), the next game
# ends at step 2 in a draw. Slot 1: the long game ends at step 1 (white wins), a new one starts.
SECOND = records(ids=[[4, 14], [5, 15], [6, 16]],
                 to_play=[[-1, 1], [1, -1], [-1, 1]],
                 ended=[[True, False], [False, True], [True, False]],
                 result=[[-1, 0], [0, -1], [0, 0]])

# Two more steps wrap around to rows 0 and 1. Slot 0: the game begun at step 0 ends at step 1
# (black wins). Slot 1: the game begun at row 5 ends at step 0 (black wins).
THIRD = records(ids=[[7, 17], [8, 18]],
                to_play=[[1, -1], [-1, 1]],
                ended=[[False, True], [True, False]],
                result=[[0, 1], [1, 0]])


def _buffers():
  b0 = replay.empty(GAME, "agz17", 2, 6)
  b1 = _add(b0, FIRST)
  b2 = _add(b1, SECOND)
  b3 = _add(b2, THIRD)
  return b0, b1, b2, b3


def test_empty_buffer():
  b0 = replay.empty(GAME, "agz17", 2, 6)
  assert b0.planes.shape == (2, 6, 2, 2, F) and b0.planes.dtype == jnp.uint8
  assert b0.policy.shape == (2, 6, A)
  np.testing.assert_array_equal(np.asarray(b0.status), EMPTY)
  assert int(replay.num_ready(b0)) == 0


def test_add_resolves_games_that_ended_and_keeps_running_ones_waiting():
  _, b1, _, _ = _buffers()
  np.testing.assert_array_equal(ids_of(b1), [[1, 2, 3, 0, 0, 0], [11, 12, 13, 0, 0, 0]])
  np.testing.assert_array_equal(np.asarray(b1.status), [
      [READY, READY, WAITING, EMPTY, EMPTY, EMPTY],
      [WAITING, WAITING, WAITING, EMPTY, EMPTY, EMPTY]])
  # z = result for black * colour to move: black won slot 0's game.
  np.testing.assert_array_equal(np.asarray(b1.value_target)[0, :2], [1.0, -1.0])
  np.testing.assert_array_equal(np.asarray(b1.policy)[..., 0], ids_of(b1))
  np.testing.assert_array_equal(np.asarray(b1.to_play)[:, :3], [[1, -1, 1], [-1, 1, -1]])
  assert int(b1.next_row) == 3
  assert int(replay.num_ready(b1)) == 2


def test_later_add_resolves_the_waiting_positions_of_each_slot():
  _, _, b2, _ = _buffers()
  np.testing.assert_array_equal(ids_of(b2), [[1, 2, 3, 4, 5, 6], [11, 12, 13, 14, 15, 16]])
  np.testing.assert_array_equal(np.asarray(b2.status), [
      [READY, READY, READY, READY, READY, READY],
      [READY, READY, READY, READY, READY, WAITING]])
  target = np.asarray(b2.value_target)
  # Slot 0: rows 0-1 keep black's win; rows 2-3 (the game that ended at SECOND's step 0) white's
  # win; rows 4-5 (the game that ended at step 2) a draw.
  np.testing.assert_array_equal(target[0], [1, -1, -1 * 1, -1 * -1, 0, 0])
  # Slot 1: rows 0-4 are one game, won by white.
  np.testing.assert_array_equal(target[1, :5], [-1 * -1, -1 * 1, -1 * -1, -1 * 1, -1 * -1])
  assert int(b2.next_row) == 0
  assert int(replay.num_ready(b2)) == 11


def test_ring_wraps_around_and_overwrites_the_oldest_rows():
  _, _, _, b3 = _buffers()
  np.testing.assert_array_equal(ids_of(b3), [[7, 8, 3, 4, 5, 6], [17, 18, 13, 14, 15, 16]])
  np.testing.assert_array_equal(np.asarray(b3.status), [
      [READY, READY, READY, READY, READY, READY],
      [READY, WAITING, READY, READY, READY, READY]])
  target = np.asarray(b3.value_target)
  np.testing.assert_array_equal(target[0, :2], [1 * 1, 1 * -1])         # black won the new game
  np.testing.assert_array_equal(target[0, 2:], [-1, 1, 0, 0])           # unchanged
  np.testing.assert_array_equal(target[1, [5, 0]], [1 * 1, 1 * -1])     # row 5's game, then row 0
  np.testing.assert_array_equal(np.asarray(b3.to_play)[:, :2], [[1, -1], [-1, 1]])
  np.testing.assert_array_equal(np.asarray(b3.policy)[..., 0], ids_of(b3))
  assert int(b3.next_row) == 2


def _reference_add(ref, recs, rows):
  """Step by step: write each position WAITING; an end resolves every waiting one in its slot."""
  ids, to_play = np.asarray(recs.policy)[..., 0].astype(int), np.asarray(recs.to_play)
  ended, result = np.asarray(recs.ended), np.asarray(recs.result)
  for t in range(ids.shape[0]):
    row = ref["next"]
    for b in range(ids.shape[1]):
      ref["id"][b, row], ref["to_play"][b, row] = ids[t, b], to_play[t, b]
      ref["status"][b, row] = WAITING
      if ended[t, b]:
        waiting = ref["status"][b] == WAITING
        ref["target"][b, waiting] = result[t, b] * ref["to_play"][b, waiting]
        ref["status"][b, waiting] = READY
    ref["next"] = (row + 1) % rows


def test_add_matches_a_step_by_step_reference():
  slots, rows, steps = 3, 5, 3           # 3 does not divide 5: the ring wraps mid-add
  rng = np.random.default_rng(0)
  buffer = replay.empty(GAME, "agz17", slots, rows)
  ref = dict(id=np.zeros((slots, rows), int), to_play=np.zeros((slots, rows), int),
             status=np.zeros((slots, rows), int), target=np.zeros((slots, rows)), next=0)
  colour = np.ones(slots, int)
  for call in range(7):
    ids = 1 + call * steps * slots + np.arange(steps * slots).reshape(steps, slots)
    ended = rng.random((steps, slots)) < 0.3
    result = rng.choice([-1.0, 0.0, 1.0], size=(steps, slots))
    to_play = np.zeros((steps, slots), int)
    for t in range(steps):
      to_play[t] = colour
      colour = np.where(ended[t], 1, -colour)
    recs = records(ids, to_play, ended, np.where(ended, result, 0.0))
    buffer = _add(buffer, recs)
    _reference_add(ref, recs, rows)
    np.testing.assert_array_equal(ids_of(buffer), ref["id"])
    np.testing.assert_array_equal(np.asarray(buffer.status), ref["status"])
    np.testing.assert_array_equal(np.asarray(buffer.to_play), ref["to_play"])
    ready = ref["status"] == READY
    np.testing.assert_array_equal(np.asarray(buffer.value_target)[ready], ref["target"][ready])
    assert int(buffer.next_row) == ref["next"]
    assert int(replay.num_ready(buffer)) == ready.sum()


def test_add_refuses_more_steps_than_rows():
  recs = records(np.ones((4, 2)), np.ones((4, 2)), np.zeros((4, 2)), np.zeros((4, 2)))
  with pytest.raises(ValueError, match="4 steps per iteration do not fit in 3 rows"):
    replay.add(replay.empty(GAME, "agz17", 2, 3), recs)
  replay.add(replay.empty(GAME, "agz17", 2, 4), recs)   # exactly R steps fit


# ---------------------------------------------------------------------------- sample


def hand_buffer(status):
  """A buffer with the given [B, R] status; position (b, r) has id 10 * b + r + 1, z = id / 100."""
  status = np.asarray(status)
  slots, rows = status.shape
  ids = 10 * np.arange(slots)[:, None] + np.arange(rows)[None, :] + 1
  buffer = replay.empty(GAME, "agz17", slots, rows)
  return buffer.replace(
      planes=jnp.asarray(np.broadcast_to(ids[:, :, None, None, None], buffer.planes.shape),
                         jnp.uint8),
      policy=buffer.policy.at[..., 0].set(jnp.asarray(ids, jnp.float32)),
      value_target=jnp.asarray(ids / 100.0, jnp.float32),
      status=jnp.asarray(status, jnp.int8)), ids


@functools.cache
def _sampler(batch_size):
  return jax.jit(jax.vmap(lambda buffer, key: replay.sample(buffer, key, batch_size),
                          in_axes=(None, 0)))


def draws(buffer, batch_size, num_keys=200):
  """Samples with many keys: planes, policy, target, weight with a leading [K] axis."""
  keys = jax.random.split(jax.random.PRNGKey(1), num_keys)
  out = _sampler(batch_size)(buffer, keys)
  planes, policy, target, weight = out.planes, out.policy, out.value_target, out.weight
  planes = np.asarray(planes)
  assert planes.dtype == np.float32
  assert np.all(planes == planes[..., :1, :1, :1])
  ids = planes[..., 0, 0, 0].astype(int)                                        # [K, M]
  # The three fields come from the same position.
  np.testing.assert_array_equal(np.asarray(policy)[..., 0], ids)
  np.testing.assert_allclose(np.asarray(target), ids / 100.0, rtol=1e-6)
  return ids, np.asarray(weight)


# Eight slots of four rows: a mix of READY, WAITING and EMPTY rows; every slot has a READY row.
STATUS_8x4 = [
    [READY, READY, WAITING, EMPTY],
    [WAITING, READY, READY, READY],
    [READY, EMPTY, EMPTY, EMPTY],
    [READY, READY, READY, READY],
    [WAITING, WAITING, READY, WAITING],
    [READY, WAITING, WAITING, READY],
    [EMPTY, READY, EMPTY, EMPTY],
    [READY, READY, WAITING, WAITING],
]


def test_sample_returns_only_ready_positions_stratified_over_slot_groups():
  buffer, ids = hand_buffer(STATUS_8x4)
  ready = np.asarray(STATUS_8x4) == READY
  # M = 4 samples from 8 slots: sample j comes from slots 2j and 2j + 1.
  drawn, weight = draws(buffer, 4)
  np.testing.assert_array_equal(weight, 1.0)
  for j in range(4):
    group = {int(i) for i in ids[2 * j:2 * j + 2][ready[2 * j:2 * j + 2]]}
    assert set(drawn[:, j].tolist()) == group, j       # every ready position, nothing else


def test_sample_more_samples_than_slots():
  buffer, ids = hand_buffer(STATUS_8x4[:4])
  ready = np.asarray(STATUS_8x4[:4]) == READY
  # M = 8 samples from 4 slots: samples 2g and 2g + 1 both come from slot g.
  drawn, weight = draws(buffer, 8)
  np.testing.assert_array_equal(weight, 1.0)
  for j in range(8):
    assert set(drawn[:, j].tolist()) == set(ids[j // 2][ready[j // 2]].tolist()), j


def test_sample_weight_is_zero_for_a_group_without_ready_positions():
  status = np.asarray(STATUS_8x4)
  status[2:4] = np.where(status[2:4] == READY, WAITING, status[2:4])   # group 1: nothing ready
  buffer, ids = hand_buffer(status)
  drawn, weight = draws(buffer, 4)
  np.testing.assert_array_equal(weight[:, 1], 0.0)
  np.testing.assert_array_equal(weight[:, [0, 2, 3]], 1.0)
  ready = status == READY
  for j in (0, 2, 3):
    assert set(drawn[:, j].tolist()) <= set(ids[2 * j:2 * j + 2][ready[2 * j:2 * j + 2]].tolist())


def test_sample_draws_from_any_slot_of_a_group_that_has_ready_positions():
  # Early in training some slots have no finished game yet. A group whose other slot has ready
  # positions must still yield a ready position with weight 1 (sample's docstring: weight 0
  # only "for a draw from a group without ready positions").
  status = np.asarray(STATUS_8x4)
  status[0] = np.where(status[0] == READY, WAITING, status[0])         # slot 0: nothing ready
  buffer, ids = hand_buffer(status)
  drawn, weight = draws(buffer, 4)
  np.testing.assert_array_equal(weight, 1.0)
  ready = status == READY
  assert set(drawn[:, 0].tolist()) == set(ids[1][ready[1]].tolist())


def test_sample_is_roughly_uniform_within_a_slot():
  buffer, ids = hand_buffer([[READY, READY, WAITING, READY]])
  drawn, _ = draws(buffer, 1, num_keys=3000)
  counts = np.array([np.sum(drawn == i) for i in (1, 2, 4)])
  assert counts.sum() == 3000
  assert np.all(np.abs(counts - 1000) < 150), counts


@pytest.mark.parametrize("slots, batch_size", [(4, 6), (6, 4), (8, 12)])
def test_sample_refuses_sizes_that_do_not_divide(slots, batch_size):
  buffer = replay.empty(GAME, "agz17", slots, 2)
  with pytest.raises(ValueError, match=rf"number of games \({slots}\) and the minibatch size "
                                       rf"\({batch_size}\) must divide one another"):
    replay.sample(buffer, jax.random.PRNGKey(0), batch_size)
