"""The Go game state: a small immutable pytree, one per game (vmap for a batch)."""

import functools

import jax.numpy as jnp
import numpy as np
from flax import struct

BLACK = 1
WHITE = -1
EMPTY = 0

# Filler of unused slots of GoState.seen; sorts after every real hash.
HASH_PAD = np.uint32(0xFFFFFFFF)


@struct.dataclass
class GoState:
  """One game of Go.

  Letters: P = size * size board points, T = GoConfig.history, C = max_moves + 1
  (the most positions one game can produce). Points are indexed row * size + col,
  row 0 at the top. Hashes are two independent 32-bit additive Zobrist hashes
  (sum of a random key per stone, modulo 2**32), so a position changes its hash
  by adding and subtracting the keys of the stones placed and removed.

  Attributes:
    board: [P] int8, 1 black, -1 white, 0 empty.
    previous_boards: [T-1, P] int8, the boards before the last T-1 moves, most
      recent first; empty boards before the game started.
    chain: [P] int16, for each stone the index of one stone of its chain (the
      same for the whole chain); P on empty points.
    hash: [2] uint32, hash of `board`.
    seen: [C, 2] uint32, the hashes of every position of the game so far (the
      current one included) sorted lexicographically; unused slots hold HASH_PAD.
    num_seen: [] int32, used slots of `seen`.
    to_play: [] int8, 1 black, -1 white.
    move_count: [] int32, moves played so far, passes included.
    passes: [] int8, consecutive passes just played.
    terminated: [] bool, the game is over.
    forfeit: [] int8, 0, or the colour that gave `step` an illegal action; that
      colour loses and the board stays as it was before the action.
  """

  board: jnp.ndarray
  previous_boards: jnp.ndarray
  chain: jnp.ndarray
  hash: jnp.ndarray
  seen: jnp.ndarray
  num_seen: jnp.ndarray
  to_play: jnp.ndarray
  move_count: jnp.ndarray
  passes: jnp.ndarray
  terminated: jnp.ndarray
  forfeit: jnp.ndarray


@functools.cache
def zobrist_keys(size: int) -> tuple[np.ndarray, np.ndarray]:
  """Random hash keys of a black and a white stone on each point.

  Returns:
    (black, white), each [P, 2] uint32. Fixed seed: hashes are reproducible.
  """
  rng = np.random.default_rng(20161 + size)
  keys = rng.integers(0, 2**32, size=(2, size * size, 2), dtype=np.uint64).astype(np.uint32)
  return keys[0], keys[1]
