"""The lane scheduler that AlphaGo's ladder reader and rollouts share (agz_jax.alphago.lanes)."""

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax.alphago import lanes


def test_widths_divide_while_enough_lanes_are_left():
  assert lanes.widths(6, 2) == [6, 3, 1]
  assert lanes.widths(64, 4, 8) == [64, 16]   # 4 would be below the fewest, 8
  assert lanes.widths(20, 4, 8) == [20]
  assert lanes.widths(8, 1) == [8]            # shrink 1: the lanes never narrow
  # The ladder reader's rule: a division below the fewest ends on a phase of the fewest.
  assert lanes.widths(32, 4, end_at_fewest=True) == [32, 8, 2, 1]
  assert lanes.widths(32, 4) == [32, 8, 2]
  assert lanes.widths(1, 4, end_at_fewest=True) == [1]


def test_busy_lanes_go_first_in_their_order():
  busy = jnp.array([False, True, False, True, True])
  np.testing.assert_array_equal(lanes.busy_first(busy, 3), [1, 3, 4])
  np.testing.assert_array_equal(lanes.busy_first(busy, 4)[:3], [1, 3, 4])


def test_drain_runs_every_item_to_its_end_on_fewer_lanes():
  """Items of uneven lengths: a lane counts its item down one per step and takes the next
  waiting item when it is done. Every item is done once, at its own length, and the loop
  ends on the last phase's lanes."""
  lengths = jnp.array([5, 1, 1, 9, 2, 1, 12, 1, 3, 1], jnp.int32)
  n, width = lengths.shape[0], 4
  # carry: (item per lane, n when idle; steps left per lane; next item; steps each item took)
  start = (jnp.arange(width), lengths[:width], jnp.int32(width), jnp.zeros(n, jnp.int32))

  def step(carry):
    item, left, next_item, took = carry
    busy = item < n
    took = took.at[jnp.where(busy, item, n)].add(1, mode="drop")
    left = left - busy
    done = busy & (left == 0)
    rank = jnp.cumsum(done) - 1
    fresh = done & (next_item + rank < n)
    item = jnp.where(fresh, next_item + rank, jnp.where(done, n, item))
    left = jnp.where(fresh, lengths[jnp.minimum(item, n - 1)], left)
    return item, left, jnp.minimum(next_item + jnp.sum(done), n), took

  def narrow(carry, w):
    item, left, next_item, took = carry
    keep = lanes.busy_first(item < n, w)
    return item[keep], left[keep], next_item, took

  phases = lanes.widths(width, 2)
  item, _, _, took = jax.jit(lambda c: lanes.drain(
      c, step, phases=phases, waiting=lambda c: c[2] < n, busy=lambda c: jnp.sum(c[0] < n),
      narrow=narrow))(start)
  assert phases == [4, 2, 1] and item.shape == (1,)
  np.testing.assert_array_equal(took, lengths)
  assert np.all(np.asarray(item) == n)
