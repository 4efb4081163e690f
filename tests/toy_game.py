"""A tiny game through the game protocol (agz_jax.game), where a player may move twice.

Each move the player to move either takes a point and moves again ("stay", action 0) or hands
the move over ("switch", action 1). After MAX_MOVES moves the player with more points wins.
It exercises what Go cannot: the player to move staying the same after a move.
"""

import jax.numpy as jnp
import numpy as np
from flax import struct

STAY, SWITCH = 0, 1
MAX_MOVES = 6


@struct.dataclass
class State:
  to_play: jnp.ndarray      # [] int8, +1 or -1
  terminated: jnp.ndarray   # [] bool
  move_count: jnp.ndarray   # [] int32
  points: jnp.ndarray       # [] int32, player +1's points minus player -1's


def init(cfg):
  del cfg
  return State(to_play=jnp.int8(1), terminated=jnp.bool_(False), move_count=jnp.int32(0),
               points=jnp.int32(0))


def step(cfg, state, action):
  del cfg
  stay = action == STAY
  after = State(to_play=jnp.where(stay, state.to_play, -state.to_play).astype(jnp.int8),
                terminated=state.move_count + 1 >= MAX_MOVES,
                move_count=state.move_count + 1,
                points=state.points + jnp.where(stay, state.to_play.astype(jnp.int32), 0))
  return jax_tree_where(state.terminated, state, after)


def jax_tree_where(cond, a, b):
  return State(*(jnp.where(cond, x, y) for x, y in zip(
      (a.to_play, a.terminated, a.move_count, a.points),
      (b.to_play, b.terminated, b.move_count, b.points))))


def legal_actions(cfg, state):
  del cfg, state
  return jnp.ones(2, bool)


def result(cfg, state, needed=True):
  del cfg
  return jnp.where(needed, jnp.sign(state.points).astype(jnp.float32), 0.0)


def num_actions(cfg):
  del cfg
  return 2


def max_length(cfg):
  del cfg
  return MAX_MOVES


def pass_action(cfg):
  del cfg


def dirichlet_alpha(cfg):
  del cfg
  return 1.0


def features(cfg, state, encoding):
  del cfg, encoding
  planes = jnp.stack([state.move_count / MAX_MOVES, state.to_play.astype(jnp.float32)], axis=-1)
  return planes[..., None, None, :]


def planes_shape(cfg, encoding):
  del cfg, encoding
  return 1, 1, 2


def symmetries(cfg):
  del cfg
  return np.zeros((1, 1), np.int32), np.asarray([[0, 1]], np.int32)
