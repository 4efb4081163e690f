"""AlphaGo's fast policies: local patterns and hand-made features of every point.

The rollout policy p_pi and the tree policy p_tau of Silver et al. 2016 are
linear softmax policies over sparse binary features (Extended Data Table 4):
each feature group gives every empty point at most one active feature, so a
position is described by `indices(...)`: [P, G] indices into one weight vector,
and a move's logit is the sum of its G weights (`nets.FastPolicy`). The codes and
dictionaries of the patterns are in `agz_jax.alphago.pattern_codes`.

Groups of the rollout policy (ROLLOUT_GROUPS), then the tree policy's extra ones:

=================  =====  ===================================================
group              size   the point ...
=================  =====  ===================================================
response           1      matches a response pattern of the dictionary
save_atari         1      is the last liberty of an X chain in atari and
                          playing it leaves the chain two liberties or more
neighbour          2      is orthogonally / diagonally next to the previous
                          move (the paper counts 8, one per direction: a
                          weight per direction would break the symmetry the
                          canonical patterns keep)
nakade             ~1.3k  is a point of the 3 to 6 stones the previous move
                          captured: the shape of those stones in the point's
                          13-point diamond (canonical, NAKADE_SIZES)
response_pattern   dict   is in the 12-point diamond around the previous move:
                          that diamond (and the previous stone) with the
                          point's place in it
pattern_3x3        dict   the 3x3 pattern of its 8 neighbours
self_atari         1      leaves its chain one liberty (tree policy)
distance_1/2       17+17  Manhattan distance to the previous move / the move
                          before it, 1 .. 16, 17 meaning 17 or more (tree)
pattern_diamond    dict   the 12-point diamond centred on the point (tree)
=================  =====  ===================================================

Every pattern point is in one of 8 states: empty, off the board, or a stone of
the player to move (X) or of the opponent (O) whose chain has 1, 2 or 3+
liberties. Patterns are canonical under the 8 board symmetries: a pattern's
dictionary entry holds its smallest code over the symmetries, and
`Dictionary.expand` lists every symmetric code with its entry's id, so that
looking a point up is one binary search of its raw code. Dictionaries are
harvested from human games (`count_patterns`, `dictionary_from_counts`) with a
fixed capacity per kind, so the weight vector's size is known from the config.

The two liberty estimates (save atari, self atari) count, over the point's
four neighbours, empty points, captured O chains (one each) and the other
liberties of X chains: a chain seen from two sides, or a liberty shared, is
counted twice (as in other rollout-policy reimplementations; cheap, not exact).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from agz_jax.alphago.pattern_codes import (  # noqa: F401  (the codes' names are part of this API)
    BITS, DIAMOND, EMPTY_POINT, KINDS, NUM_STATES, OFF_BOARD, OPPONENT_STONE,
    OWN_STONE, RING, Dictionary, Kind, canonical, nakade_table, pack, point_permutations, unpack)
from agz_jax.go import EMPTY, GoConfig, GoState, liberty_range, neighbour_table

_ORTHOGONAL = ((-1, 0), (1, 0), (0, -1), (0, 1))

# Captures of this many stones by the previous move light the nakade feature.
NAKADE_SIZES = (3, 6)
DISTANCE_BUCKETS = 17

ROLLOUT_GROUPS = ("response", "save_atari", "neighbour", "nakade", "response_pattern",
                  "pattern_3x3")
TREE_GROUPS = ROLLOUT_GROUPS + ("self_atari", "distance_1", "distance_2", "pattern_diamond")
# A fast policy's model.features -> its feature groups.
FEATURES = {"rollout": ROLLOUT_GROUPS, "tree": TREE_GROUPS}


def groups_of(model_config) -> tuple[str, ...]:
  """The feature groups of a fast policy's model config (its `features`: FEATURES' keys)."""
  if model_config.features not in FEATURES:
    raise ValueError(f"model.features must be one of {', '.join(FEATURES)}, "
                     f"got {model_config.features!r}")
  return FEATURES[model_config.features]


@struct.dataclass
class Tables:
  """What a fast policy looks its patterns up in.

  Attributes:
    pattern_3x3: [8**8] int32, the id of every raw 3x3 code (-1 where the
      dictionary has none): 64 MiB, but one gather per point where a binary
      search takes 18 (the features' largest cost: bench/rollout_speed.py).
    response, diamond: the lookup Dictionary of those kinds (the diamond one
      is unused by the rollout policy).
    nakade: [8192] int32, the canonical id of each capture mask.
    sizes: {group: number of features} of every group (static).
  """

  pattern_3x3: jnp.ndarray
  response: Dictionary
  diamond: Dictionary
  nakade: jnp.ndarray
  sizes: tuple[tuple[str, int], ...] = struct.field(pytree_node=False)


def group_sizes(capacity_3x3: int, capacity_response: int, capacity_diamond: int
                ) -> tuple[tuple[str, int], ...]:
  """(group, features) of every group of TREE_GROUPS, from the dictionaries' capacities."""
  sizes = {"response": 1, "save_atari": 1, "neighbour": 2, "nakade": nakade_table()[1],
           "response_pattern": capacity_response, "pattern_3x3": capacity_3x3,
           "self_atari": 1, "distance_1": DISTANCE_BUCKETS, "distance_2": DISTANCE_BUCKETS,
           "pattern_diamond": capacity_diamond}
  return tuple((g, sizes[g]) for g in TREE_GROUPS)


def make_tables(codes: dict) -> Tables:
  """Device tables from harvested dictionaries {'3x3', 'response', 'diamond': [C, 2] int32}.

  A kind left out has no patterns (the rollout policy has no diamond patterns).
  """
  codes = {k: np.asarray(codes.get(k, np.zeros((0, 2), np.int32))) for k in KINDS}
  sizes = group_sizes(*(int(np.asarray(codes[k]).shape[0]) for k in ("3x3", "response", "diamond")))
  listed = Dictionary.expand(KINDS["3x3"], codes["3x3"])
  dense = np.full(NUM_STATES ** len(RING), -1, np.int32)
  used = listed.ids >= 0
  dense[listed.hi[used]] = listed.ids[used]  # a 3x3 code is all in its first word
  tables = Tables(pattern_3x3=dense,
                  response=Dictionary.expand(KINDS["response"], codes["response"]),
                  diamond=Dictionary.expand(KINDS["diamond"], codes["diamond"]),
                  nakade=nakade_table()[0], sizes=sizes)
  return jax.tree.map(jnp.asarray, tables)


def num_features(tables: Tables, groups: tuple[str, ...]) -> int:
  """F, the size of the weight vector of a policy over `groups` (index F is 'none')."""
  sizes = dict(tables.sizes)
  return sum(sizes[g] for g in groups)


def _offsets(tables: Tables, groups: tuple[str, ...]) -> dict:
  sizes = dict(tables.sizes)
  starts = np.cumsum([0] + [sizes[g] for g in groups])
  return dict(zip(groups, starts[:-1].tolist()))


# Per-point facts of one position.

def liberties_capped(cfg: GoConfig, board: jnp.ndarray, chain: jnp.ndarray) -> jnp.ndarray:
  """[P] int32: the liberties of the chain on each point, capped at 3 (0 on empty points).

  From `liberty_range` (the chain's smallest and largest liberty) and whether a
  stone of the chain touches an empty point that is neither.
  """
  n, p = cfg.size, cfg.num_points
  lowest, highest = liberty_range(cfg, board, chain)
  mn, mx = lowest[chain], highest[chain]                                     # [P]
  grid_index = jnp.arange(p).reshape(n, n)
  empty = (board == EMPTY).reshape(n, n)
  other = jnp.zeros((n, n), bool)
  for d in _ORTHOGONAL:
    q = _shift(grid_index, d, -1)
    other = other | (_shift(empty, d, False) & (q != mn.reshape(n, n)) & (q != mx.reshape(n, n)))
  third = jax.ops.segment_max(other.reshape(-1) & (board != EMPTY), chain, num_segments=p + 1)
  libs = jnp.where(mn == mx, 1, jnp.where(third[chain], 3, 2))
  return jnp.where(board == EMPTY, 0, libs)


def point_states(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """[P] int32 state of every point (EMPTY_POINT, OWN_STONE + libs - 1, OPPONENT_STONE + libs - 1)."""
  board = state.board.astype(jnp.int32)
  libs = liberties_capped(cfg, board, state.chain.astype(jnp.int32))
  me = state.to_play.astype(jnp.int32)
  return jnp.where(board == EMPTY, EMPTY_POINT,
                   jnp.where(board == me, OWN_STONE, OPPONENT_STONE) + libs - 1)


def _shift(x: jnp.ndarray, d: tuple[int, int], fill) -> jnp.ndarray:
  """[N, N] y with y[r, c] = x[r + d[0], c + d[1]], `fill` off the board (any offset)."""
  n = x.shape[0]
  k = max(abs(d[0]), abs(d[1]))
  padded = jnp.pad(x, k, constant_values=fill)
  return padded[k + d[0]:k + d[0] + n, k + d[1]:k + d[1] + n]


def around(cfg: GoConfig, states: jnp.ndarray, offsets, fill=OFF_BOARD) -> jnp.ndarray:
  """[P, K] the values at `offsets` from every point (`fill` off the board)."""
  grid = states.reshape(cfg.size, cfg.size)
  return jnp.stack([_shift(grid, d, fill).reshape(-1) for d in offsets], axis=-1)


def check_config(cfg: GoConfig) -> None:
  """Raises a ValueError unless the states of `cfg` keep what the features read."""
  if cfg.history < 3:
    raise ValueError(f"the fast policies need game.history >= 3 (the last two moves), "
                     f"got {cfg.history}")


def previous_moves(cfg: GoConfig, state: GoState) -> tuple[jnp.ndarray, jnp.ndarray]:
  """The points of the last move and of the move before it; P for a pass or none.

  Read from the boards the state keeps (a stone that was not there before), so
  the game's history must keep 3 boards (GoConfig.history >= 3).
  """
  check_config(cfg)
  p = cfg.num_points
  me = state.to_play
  boards = (state.board, state.previous_boards[0], state.previous_boards[1])

  def placed(after, before, colour):
    new = (after == colour) & (before == EMPTY)
    return jnp.where(jnp.any(new), jnp.argmax(new), p)

  return placed(boards[0], boards[1], -me), placed(boards[1], boards[2], me)


@functools.cache
def _relative_table(size: int, offsets: tuple[tuple[int, int], ...]) -> np.ndarray:
  """[P + 1, P] int8: row c holds which of `offsets` each point is from centre c (-1 if none;
  row P, for a pass or no move, is all -1)."""
  p = size * size
  table = np.full((p + 1, p), -1, np.int8)
  for k, point in np.ndenumerate(neighbour_table(size, offsets)):
    if point < p:
      table[k[0], point] = k[1]
  return table


def _relative_index(cfg: GoConfig, centre, offsets) -> jnp.ndarray:
  """[P] int32: which of `offsets` each point is from `centre` (-1 if none or centre is P).

  One row of a table: comparing every point with every offset costs a pass over
  the board per offset, and the rollouts do this at every move.
  """
  return jnp.asarray(_relative_table(cfg.size, offsets))[centre].astype(jnp.int32)


def _distance_bucket(cfg: GoConfig, move) -> jnp.ndarray:
  n = cfg.size
  rows, cols = np.divmod(np.arange(n * n), n)
  d = jnp.abs(rows - move // n) + jnp.abs(cols - move % n)
  return jnp.where((move < n * n) & (d > 0), jnp.minimum(d, DISTANCE_BUCKETS) - 1, -1)


def _response_points(cfg: GoConfig, states: jnp.ndarray, last) -> tuple[jnp.ndarray, jnp.ndarray]:
  """The 12 response patterns around the previous stone: ([12, 13] point states, [12] slot).

  Row k is the diamond and the previous stone's own state with the move on point
  k of the diamond (only rows of empty points on the board are features).
  """
  p = cfg.num_points
  table = np.concatenate([neighbour_table(cfg.size, DIAMOND), np.full((1, len(DIAMOND)), p)])
  padded = jnp.append(states, OFF_BOARD)
  full = padded[jnp.append(jnp.asarray(table)[last], last)]                     # [13]
  return jnp.broadcast_to(full, (len(DIAMOND), full.shape[0])), jnp.arange(len(DIAMOND))


def local_ids(cfg: GoConfig, tables: Tables, state: GoState, groups: tuple[str, ...]) -> dict:
  """{group: [P] int32 the point's feature within the group, -1 for none}, for one game.

  Only empty points get features.
  """
  p = cfg.num_points
  states = point_states(cfg, state)
  empty = states == EMPTY_POINT
  last, before = previous_moves(cfg, state)
  out = {}

  nbr = around(cfg, states, _ORTHOGONAL)                                         # [P, 4]
  nbr_libs = jnp.where(nbr >= OPPONENT_STONE, nbr - OPPONENT_STONE + 1,
                       jnp.where(nbr >= OWN_STONE, nbr - OWN_STONE + 1, 0))
  own = (nbr >= OWN_STONE) & (nbr < OPPONENT_STONE)
  own_atari = own & (nbr_libs == 1)
  capture = (nbr >= OPPONENT_STONE) & (nbr_libs == 1)
  libs_after = jnp.sum((nbr == EMPTY_POINT) + capture + jnp.where(own & ~own_atari, nbr_libs - 1, 0),
                       axis=-1)
  out["save_atari"] = jnp.where(jnp.any(own_atari, axis=-1) & (libs_after >= 2), 0, -1)
  out["self_atari"] = jnp.where(libs_after <= 1, 0, -1)

  ring = _relative_index(cfg, last, RING)
  diagonal = np.array([abs(r) + abs(c) == 2 for r, c in RING], np.int32)
  out["neighbour"] = jnp.where(ring >= 0, jnp.asarray(diagonal)[ring], -1)

  # Response: the diamond around the previous stone, once per board, then its empty points.
  response = tables.response.lookup(*pack(KINDS["response"], *_response_points(cfg, states, last)))
  slot = _relative_index(cfg, last, DIAMOND)
  out["response_pattern"] = jnp.where(slot >= 0, jnp.append(response, -1)[slot], -1)
  out["response"] = jnp.where(out["response_pattern"] >= 0, 0, -1)

  out["pattern_3x3"] = tables.pattern_3x3[pack(KINDS["3x3"], around(cfg, states, RING))[0]]
  if "pattern_diamond" in groups:
    out["pattern_diamond"] = tables.diamond.lookup(*pack(KINDS["diamond"],
                                                         around(cfg, states, DIAMOND)))

  # Nakade: the stones of the player to move that the previous move took.
  # Only the (at most NAKADE_SIZES[1]) taken points are looked at: their diamonds by a
  # gather, not shifted copies of the whole board.
  taken = (state.previous_boards[0] == state.to_play) & (state.board == EMPTY)
  count = jnp.sum(taken)
  points, left = [], taken
  for _ in range(NAKADE_SIZES[1]):  # (argmax passes: jnp.nonzero is a scatter, slow on a CPU)
    q = jnp.argmax(left)
    points.append(jnp.where(left[q], q, p))
    left = left & (jnp.arange(p) != q)
  points = jnp.stack(points)                                                     # [6]
  table = jnp.asarray(np.concatenate([neighbour_table(cfg.size, DIAMOND + ((0, 0),)),
                                      np.full((1, len(DIAMOND) + 1), p, np.int32)]))
  near = jnp.append(taken, False)[table[points]]                                 # [6, 13]
  mask = jnp.sum(near.astype(jnp.int32) << np.arange(near.shape[-1]), axis=-1)
  lit = (count >= NAKADE_SIZES[0]) & (count <= NAKADE_SIZES[1])
  ids = jnp.where(lit, tables.nakade[mask], -1)
  out["nakade"] = jnp.max(jnp.where(jnp.arange(p)[None, :] == points[:, None], ids[:, None], -1),
                          axis=0)

  out["distance_1"] = _distance_bucket(cfg, last)
  out["distance_2"] = _distance_bucket(cfg, before)
  return {g: jnp.where(empty, out[g], -1) for g in groups}


def indices(cfg: GoConfig, tables: Tables, state: GoState, groups: tuple[str, ...] = ROLLOUT_GROUPS
            ) -> jnp.ndarray:
  """[P, G] int32 indices of one game's active features into the weight vector; F for none."""
  ids = local_ids(cfg, tables, state, groups)
  starts = _offsets(tables, groups)
  none = num_features(tables, groups)
  return jnp.stack([jnp.where(ids[g] >= 0, starts[g] + ids[g], none) for g in groups], axis=-1)


# Harvesting the dictionaries from games.

def harvest_codes(cfg: GoConfig, state: GoState, kinds: tuple[str, ...] = tuple(KINDS)) -> dict:
  """The canonical codes of one position's patterns of `kinds`, to be counted on the host.

  Returns:
    {kind: (hi, lo, valid)}: for "3x3" and "diamond" [P] arrays (the patterns
    around every point, valid on empty points); for "response" [12] arrays
    (the patterns of the empty points around the previous stone).
  """
  p = cfg.num_points
  states = point_states(cfg, state)
  empty = states == EMPTY_POINT
  last, _ = previous_moves(cfg, state)
  full, slot = _response_points(cfg, states, last)
  in_diamond = jnp.asarray(np.concatenate([neighbour_table(cfg.size, DIAMOND),
                                           np.full((1, len(DIAMOND)), p)]))[last] < p
  out = {}
  if "3x3" in kinds:
    out["3x3"] = canonical(KINDS["3x3"], around(cfg, states, RING)) + (empty,)
  if "diamond" in kinds:
    out["diamond"] = canonical(KINDS["diamond"], around(cfg, states, DIAMOND)) + (empty,)
  if "response" in kinds:
    out["response"] = canonical(KINDS["response"], full, slot) + (
        in_diamond & (full[:, :len(DIAMOND)].diagonal() == EMPTY_POINT),)
  return out


class PatternCounter:
  """Counts canonical pattern codes on the host, chunk by chunk."""

  def __init__(self):
    self.codes = {k: np.zeros(0, np.int64) for k in KINDS}
    self.counts = {k: np.zeros(0, np.int64) for k in KINDS}

  def add(self, harvested: dict) -> None:
    """Adds `harvest_codes` output (any leading batch axes, numpy or jax)."""
    for kind, (hi, lo, valid) in harvested.items():
      valid = np.asarray(valid)
      combined = (np.asarray(hi)[valid].astype(np.int64) << 32) | (
          np.asarray(lo)[valid].astype(np.int64) & 0xFFFFFFFF)
      new, count = np.unique(combined, return_counts=True)
      merged, inverse = np.unique(np.concatenate([self.codes[kind], new]), return_inverse=True)
      self.counts[kind] = np.bincount(inverse, np.concatenate([self.counts[kind], count]),
                                      minlength=len(merged)).astype(np.int64)
      self.codes[kind] = merged

  def dictionary(self, kind: str, capacity: int, min_count: int) -> np.ndarray:
    """[capacity, 2] int32: the most frequent codes seen at least `min_count` times, by count; -1 rows unused."""
    order = np.argsort(-self.counts[kind], kind="stable")
    order = order[self.counts[kind][order] >= min_count][:capacity]
    out = np.full((capacity, 2), -1, np.int32)
    out[:len(order), 0] = self.codes[kind][order] >> 32
    out[:len(order), 1] = self.codes[kind][order] & 0xFFFFFFFF
    return out

  def summary(self, kind: str, min_count: int) -> tuple[int, int]:
    """(distinct patterns seen, patterns seen at least min_count times)."""
    return len(self.codes[kind]), int(np.sum(self.counts[kind] >= min_count))
