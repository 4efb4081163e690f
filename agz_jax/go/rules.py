"""The rules of Go in pure JAX: init, step, legal_actions (scoring: go.scoring).

All functions act on one game and take the static GoConfig first; use jax.vmap
for a batch. Rules: captures of any number of chains, suicide illegal,
positional superko (a play may not recreate any earlier whole-board position;
pass is always legal), two consecutive passes or `max_moves` moves end the
game, Tromp-Taylor area scoring with komi.

How the work stays O(P) per move: a chain is named by one of its stones
(`GoState.chain`), so the chains touching a point are found by looking at four
neighbours; per-chain facts (liberties, hash) come from one segment reduction
over chain names; neighbour lookups are shifts of the [N, N] board. Superko
candidates are hashed incrementally and looked up by binary search in the sorted
list of earlier position hashes.
"""

import functools
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from agz_jax.go.config import GoConfig
from agz_jax.go.state import BLACK, EMPTY, HASH_PAD, WHITE, GoState, zobrist_keys

# Neighbour directions as (row, column) offsets: up, down, left, right.
_DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def _shift(x: jnp.ndarray, d: tuple[int, int], fill) -> jnp.ndarray:
  """Value of each point's neighbour in direction d; `fill` off the board.

  Args:
    x: [N, N, ...] per-point values.
    d: one of _DIRECTIONS.
    fill: value for neighbours off the board.

  Returns:
    [N, N, ...] y with y[r, c] = x[r + d[0], c + d[1]].
  """
  n = x.shape[0]
  pad = [(1, 1), (1, 1)] + [(0, 0)] * (x.ndim - 2)
  padded = jnp.pad(x, pad, constant_values=fill)
  return padded[1 + d[0]:1 + d[0] + n, 1 + d[1]:1 + d[1] + n]


def _neighbours(x: jnp.ndarray, fill) -> list[jnp.ndarray]:
  return [_shift(x, d, fill) for d in _DIRECTIONS]


def neighbour_reduce(cfg: GoConfig, values: jnp.ndarray, fill, op) -> jnp.ndarray:
  """`op` over the four orthogonal neighbours of every point.

  Args:
    cfg: the game's configuration.
    values: [..., P] per point.
    fill: the value of the points off the board.
    op: a binary elementwise function (jnp.minimum, jnp.logical_or, ...).

  Returns:
    [..., P]. Shifted copies of the board rather than a gather of the neighbour
    table: XLA on CPU runs these several times faster.
  """
  n = cfg.size
  grid = jnp.moveaxis(values.reshape(values.shape[:-1] + (n, n)), (-2, -1), (0, 1))
  out = functools.reduce(op, _neighbours(grid, fill))
  return jnp.moveaxis(out, (0, 1), (-2, -1)).reshape(values.shape)


def neighbour_values(cfg: GoConfig, values: jnp.ndarray, fill,
                     offsets: tuple[tuple[int, int], ...] = _DIRECTIONS) -> jnp.ndarray:
  """The values at each point's neighbours at the (row, column) offsets (each -1, 0 or 1).

  Args:
    cfg: the game's configuration.
    values: [P] per point.
    fill: the value of the points off the board.
    offsets: the neighbours, in the order of `neighbour_table`'s columns.

  Returns:
    [P, K], as `append(values, fill)[neighbour_table(size, offsets)]`, from shifted copies
    of the board rather than a gather.
  """
  n = cfg.size
  grid = values.reshape(n, n)
  return jnp.stack([_shift(grid, d, fill) for d in offsets], axis=-1).reshape(n * n, len(offsets))


@functools.cache
def neighbour_table(size: int, offsets: tuple[tuple[int, int], ...] = _DIRECTIONS) -> np.ndarray:
  """[P, K] int32: the K neighbours of each point at the (row, column) offsets, P off the board."""
  p = size * size
  table = np.full((p, len(offsets)), p, np.int32)
  for r in range(size):
    for c in range(size):
      for k, (dr, dc) in enumerate(offsets):
        if 0 <= r + dr < size and 0 <= c + dc < size:
          table[r * size + c, k] = (r + dr) * size + c + dc
  return table


def _has_empty_neighbour(cfg: GoConfig, board: jnp.ndarray) -> jnp.ndarray:
  """[P] bool: some neighbour of the point is empty."""
  return neighbour_reduce(cfg, board == EMPTY, False, jnp.logical_or)


def _board_keys(cfg: GoConfig, board: jnp.ndarray) -> jnp.ndarray:
  """[P, 2] uint32: the hash key of the stone on each point, 0 on empty points."""
  keys_b, keys_w = zobrist_keys(cfg.size)
  stone = jnp.where((board == BLACK)[:, None], keys_b, keys_w)
  return jnp.where((board == EMPTY)[:, None], jnp.uint32(0), stone)


def _board_hash(cfg: GoConfig, board: jnp.ndarray) -> jnp.ndarray:
  return jnp.sum(_board_keys(cfg, board), axis=0, dtype=jnp.uint32)


def _stone_keys(cfg: GoConfig, colour) -> jnp.ndarray:
  """[P, 2] uint32: the hash keys of a stone of `colour` on each point."""
  keys_b, keys_w = zobrist_keys(cfg.size)
  return jnp.where(colour == BLACK, keys_b, keys_w)


def _lex_less(a: jnp.ndarray, b: jnp.ndarray) -> jnp.ndarray:
  """a < b for two-word hashes (last axis), compared lexicographically."""
  return (a[..., 0] < b[..., 0]) | ((a[..., 0] == b[..., 0]) & (a[..., 1] < b[..., 1]))


def _insert_seen(state: GoState, key: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
  """Inserts a hash into the sorted `seen` list (O(C), no sort)."""
  seen = state.seen
  pos = jnp.sum(_lex_less(seen, key[None, :]))
  i = jnp.arange(seen.shape[0])[:, None]
  shifted = jnp.concatenate([seen[:1], seen[:-1]], axis=0)
  seen = jnp.where(i < pos, seen, jnp.where(i == pos, key[None, :], shifted))
  return seen, state.num_seen + 1


def _was_seen(state: GoState, keys: jnp.ndarray) -> jnp.ndarray:
  """Whether each hash in keys [K, 2] is in `seen`.

  Two-level search in the sorted list: the last hash of each block of ~sqrt(C)
  slots tells which block could hold the key, then that block is compared
  whole. O(K sqrt(C)) comparisons and one gather per key.
  """
  seen = state.seen
  capacity = seen.shape[0]
  block = max(8, 2 ** int(round(np.log2(np.sqrt(capacity)))))
  num_blocks = -(-capacity // block)
  pad = jnp.full((num_blocks * block - capacity, 2), HASH_PAD, jnp.uint32)
  blocks = jnp.concatenate([seen, pad]).reshape(num_blocks, block, 2)
  after_block = _lex_less(blocks[None, :, -1], keys[:, None])                  # [K, num_blocks]
  j = jnp.minimum(jnp.sum(after_block, axis=1), num_blocks - 1)               # [K]
  slots = j[:, None] * block + jnp.arange(block)[None, :]                      # [K, block]
  same = jnp.all(blocks[j] == keys[:, None], axis=-1) & (slots < state.num_seen)
  return jnp.any(same, axis=1)


def chains(cfg: GoConfig, board: jnp.ndarray) -> jnp.ndarray:
  """[P] int32: every chain named by its smallest point (label propagation); P on empty points.
  (GoState.chain may name a chain by another of its stones.)"""
  n, p = cfg.size, cfg.num_points
  board2 = board.reshape(n, n)
  stone = board2 != EMPTY
  init = jnp.where(stone, jnp.arange(p).reshape(n, n), p)

  def relax(carry):
    labels, _ = carry
    new = labels
    for d in _DIRECTIONS:
      same = stone & (_shift(board2, d, EMPTY) == board2)
      new = jnp.where(same, jnp.minimum(new, _shift(labels, d, p)), new)
    return new, jnp.any(new != labels)

  labels, _ = jax.lax.while_loop(lambda c: c[1], relax, (init, jnp.bool_(True)))
  return labels.reshape(-1)


def _points_to_board(cfg: GoConfig, black, white) -> jnp.ndarray:
  board = jnp.zeros(cfg.num_points, jnp.int8)
  board = board.at[jnp.asarray(black, jnp.int32)].set(BLACK)
  return board.at[jnp.asarray(white, jnp.int32)].set(WHITE)


def check_setup(cfg: GoConfig, black, white):
  """Host-side checks of concrete setup stones (flood fill in Python; setups are small)."""
  black = [int(x) for x in np.asarray(black).reshape(-1)]
  white = [int(x) for x in np.asarray(white).reshape(-1)]
  for name, points in (("black", black), ("white", white)):
    bad = [x for x in points if not 0 <= x < cfg.num_points]
    if bad:
      raise ValueError(f"init: {name} setup point {bad[0]} is off the {cfg.size}x{cfg.size} board")
  both = set(black) & set(white)
  if both:
    raise ValueError(f"init: point {min(both)} is given both a black and a white setup stone")
  colour = {p: BLACK for p in black}
  colour.update({p: WHITE for p in white})
  table = neighbour_table(cfg.size)
  done = set()
  for start in colour:
    if start in done:
      continue
    chain, frontier, breathes = {start}, [start], False
    while frontier:
      for q in table[frontier.pop()]:
        if q == cfg.num_points:
          continue
        if q not in colour:
          breathes = True
        elif colour[q] == colour[start] and q not in chain:
          chain.add(q)
          frontier.append(q)
    done |= chain
    if not breathes:
      raise ValueError(f"init: setup stones make a chain without liberties (at point {min(chain)})")


def init(cfg: GoConfig, black: Sequence[int] = (), white: Sequence[int] = (),
         to_play: int = BLACK) -> GoState:
  """The start of a game, optionally with setup (handicap, SGF AB/AW) stones.

  Args:
    cfg: the game's configuration.
    black: point indices of black setup stones.
    white: point indices of white setup stones.
    to_play: the colour that moves first (BLACK or WHITE).

  Returns:
    A GoState. Raises ValueError (for concrete inputs) on points off the board,
    a point given to both colours, or setup chains without a liberty.
  """
  p = cfg.num_points
  if not any(isinstance(x, jax.core.Tracer) for x in (black, white, to_play)):
    check_setup(cfg, black, white)
    if int(to_play) not in (BLACK, WHITE):
      raise ValueError(f"init: to_play must be 1 (black) or -1 (white), got {to_play!r}")
  board = _points_to_board(cfg, black, white)
  chain = chains(cfg, board)
  h = _board_hash(cfg, board)
  seen = jnp.full((cfg.max_moves + 1, 2), HASH_PAD, jnp.uint32).at[0].set(h)
  return GoState(
      board=board,
      previous_boards=jnp.zeros((cfg.history - 1, p), jnp.int8),
      chain=chain.astype(jnp.int16),
      hash=h,
      seen=seen,
      num_seen=jnp.int32(1),
      to_play=jnp.asarray(to_play, jnp.int8),
      move_count=jnp.int32(0),
      passes=jnp.int8(0),
      terminated=jnp.bool_(False),
      forfeit=jnp.int8(0),
  )


# Why a play is illegal, as returned by _play.
LEGAL, OCCUPIED, SUICIDE, SUPERKO = 0, 1, 2, 3


def _play(cfg: GoConfig, state: GoState, point, superko: bool = True) -> tuple[GoState, jnp.ndarray]:
  """Puts a stone of the player to move on `point` (in [0, P)).

  With superko False the position is not recorded (hash and seen stay as they
  were) and no repetition is detected.

  Returns:
    (state after the stone, captures and bookkeeping, before the move counters
    change; code) where code is LEGAL, OCCUPIED, SUICIDE or SUPERKO. When the
    code is not LEGAL the returned state is meaningless.
  """
  p = cfg.num_points
  me = state.to_play.astype(jnp.int32)
  board = state.board
  chain = state.chain.astype(jnp.int32)
  nbrs = jnp.asarray(neighbour_table(cfg.size))[point]                # [4]
  nbr_colour = jnp.append(board, 2)[nbrs].astype(jnp.int32)            # [4], 2 off board
  nbr_chain = jnp.append(chain, p)[nbrs]                               # [4]
  opp_chains = jnp.where(nbr_colour == -me, nbr_chain, -1)
  own_chains = jnp.where(nbr_colour == me, nbr_chain, -1)

  placed = board.at[point].set(me.astype(jnp.int8))
  has_lib = _has_empty_neighbour(cfg, placed)                          # [P]
  in_opp = chain[:, None] == opp_chains[None, :]                       # [P, 4]
  opp_alive = jnp.any(in_opp & has_lib[:, None], axis=0)               # [4]
  captured = jnp.any(in_opp & ~opp_alive[None, :], axis=1)             # [P]
  new_board = jnp.where(captured, jnp.int8(EMPTY), placed)

  idx = jnp.arange(p)
  merged = jnp.any(chain[:, None] == own_chains[None, :], axis=1) | (idx == point)
  new_chain = jnp.where(merged, point, jnp.where(captured, p, chain))
  suicide = ~jnp.any(captured) & ~jnp.any(merged & has_lib)

  new_state = state.replace(board=new_board, chain=new_chain.astype(jnp.int16))
  repeat = jnp.bool_(False)
  if superko:
    removed = jnp.sum(jnp.where(captured[:, None], _stone_keys(cfg, -me), jnp.uint32(0)), axis=0,
                      dtype=jnp.uint32)
    new_hash = state.hash + _stone_keys(cfg, me)[point] - removed
    valid = jnp.arange(state.seen.shape[0]) < state.num_seen
    repeat = jnp.any(jnp.all(state.seen == new_hash, axis=-1) & valid)
    seen, num_seen = _insert_seen(state, new_hash)
    new_state = new_state.replace(hash=new_hash, seen=seen, num_seen=num_seen)

  code = jnp.where(board[point] != EMPTY, OCCUPIED,
                   jnp.where(suicide, SUICIDE, jnp.where(repeat, SUPERKO, LEGAL)))
  return new_state, code


def _tree_where(cond, a, b):
  return jax.tree.map(lambda x, y: jnp.where(cond, x, y), a, b)


def step(cfg: GoConfig, state: GoState, action, superko: bool = True) -> GoState:
  """Plays one action for the player to move.

  Args:
    cfg: the game's configuration.
    state: the game before the action.
    action: [] int, a point in [0, P) or P for pass.
    superko: False for games played by the simple-ko rule (rollouts): the
      positions are not recorded (`hash` and `seen` go stale, so the state is
      for `legal_actions(..., superko=False)` only) and an action that breaks
      the ko rule is not caught: give only actions that rule allows.

  Returns:
    The game after the action. On a terminated game, the state is returned
    unchanged. An illegal action (off the board, occupied point, suicide,
    superko) changes nothing but `terminated` (set) and `forfeit` (the mover's
    colour): board, player to move and move count stay as they were, and
    `result` counts the game as lost by the mover.
  """
  p = cfg.num_points
  action = jnp.asarray(action, jnp.int32)
  is_pass = action == p
  on_board = (action >= 0) & (action < p)
  played, code = _play(cfg, state, jnp.clip(action, 0, p - 1), superko)
  after = _tree_where(is_pass, state, played)
  passes = jnp.where(is_pass, state.passes + 1, 0).astype(jnp.int8)
  move_count = state.move_count + 1
  after = after.replace(
      previous_boards=jnp.concatenate([state.board[None], state.previous_boards[:-1]], axis=0),
      to_play=-state.to_play,
      move_count=move_count,
      passes=passes,
      terminated=(passes >= 2) | (move_count >= cfg.max_moves),
  )
  illegal = ~(is_pass | (on_board & (code == LEGAL)))
  forfeited = state.replace(terminated=jnp.bool_(True), forfeit=state.to_play)
  after = _tree_where(illegal, forfeited, after)
  return _tree_where(state.terminated, state, after)


def liberty_range(cfg: GoConfig, board: jnp.ndarray, chain: jnp.ndarray):
  """The smallest and the largest liberty of every chain, by chain name.

  Args:
    board: [P] int32. chain: [P] int32 chain names (P on empty points).

  Returns:
    ([P + 1], [P + 1]) int32: equal for a chain in atari; P and -1 for a
    chain without liberties and for names no chain has (index P collects the
    empty points).
  """
  p = cfg.num_points
  point = jnp.arange(p)
  empty = board == EMPTY
  lowest = neighbour_reduce(cfg, jnp.where(empty, point, p), p, jnp.minimum)
  highest = neighbour_reduce(cfg, jnp.where(empty, point, -1), -1, jnp.maximum)
  return (jax.ops.segment_min(lowest, chain, num_segments=p + 1),
          jax.ops.segment_max(highest, chain, num_segments=p + 1))


def legal_actions(cfg: GoConfig, state: GoState, superko: bool = True) -> jnp.ndarray:
  """Which actions the player to move may take.

  A point is legal when it is empty, the stone would have a liberty after
  captures (no suicide), and the resulting position is new (positional
  superko). With `superko` False the simple ko rule replaces the last
  condition: a move may not bring back the position before the opponent's
  last move (it reads only `board`, `chain` and `previous_boards[0]`). Pass
  is always legal; on a terminated game only pass is.

  Returns:
    [P + 1] bool, pass last.
  """
  placeable, repeat = _placeable(cfg, state, superko)
  return jnp.append(placeable & ~repeat, True)


def ko_banned(cfg: GoConfig, state: GoState) -> jnp.ndarray:
  """[P] bool: points the mover may not play only because the position would repeat."""
  placeable, repeat = _placeable(cfg, state, True)
  return placeable & repeat


def _placeable(cfg: GoConfig, state: GoState, superko: bool):
  """([P] empty points where a stone would breathe, game not over; [P] whose play repeats a
  position: any earlier one with `superko`, else the one before the opponent's last move)."""
  p = cfg.num_points
  me = state.to_play.astype(jnp.int32)
  board = state.board.astype(jnp.int32)
  chain = state.chain.astype(jnp.int32)

  # Per chain: in atari or not.
  lib_min, lib_max = liberty_range(cfg, board, chain)
  in_atari = lib_min == lib_max

  # A stone breathes after the move when a neighbour is empty, an own chain with
  # another liberty, or an opponent chain in atari (an empty point next to a chain
  # in atari is its last liberty: the move captures it).
  atari = in_atari[chain]
  safe = (board == EMPTY) | ((board == me) & ~atari) | ((board == -me) & atari)
  breathes = neighbour_reduce(cfg, safe, False, jnp.logical_or)

  if superko:
    # An opponent chain in atari is captured by a play on its last liberty; a
    # chain is named by one of its stones, so board[name] is its colour.
    capturable = in_atari & (jnp.append(board, EMPTY) == -me)                  # [P+1]
    last_liberty = jnp.where(capturable, lib_min, p)
    stone_keys = _board_keys(cfg, board)                                       # [P, 2]
    chain_hash = [jax.ops.segment_sum(stone_keys[:, w], chain, num_segments=p + 1) for w in (0, 1)]
    removed = [jax.ops.segment_sum(jnp.where(capturable, h, 0), last_liberty,
                                   num_segments=p + 1)[:p] for h in chain_hash]
    keys = _stone_keys(cfg, me)
    new_hash = jnp.stack([state.hash[w] + keys[:, w] - removed[w] for w in (0, 1)], axis=-1)
    repeat = _was_seen(state, new_hash)
  else:
    repeat = _ko_point(state, board, chain, lib_min, lib_max, me) == jnp.arange(p)
  return (board == EMPTY) & breathes & ~state.terminated, repeat


def _ko_point(state: GoState, board, chain, lib_min, lib_max, me) -> jnp.ndarray:
  """The point where a play would retake a ko at once (bring back the board before the
  opponent's last move), or P.

  That happens only when the last move put a lone stone in atari that took
  exactly one stone of ours, on its liberty: retaking puts ours back and takes
  theirs, and nothing else changed.
  """
  p = board.shape[0]
  before = state.previous_boards[0].astype(jnp.int32)
  taken = (before == me) & (board == EMPTY)
  placed = (before == EMPTY) & (board == -me)
  stone, point = jnp.argmax(placed), jnp.argmax(taken)
  lone = jnp.sum(chain == stone) == 1  # a new stone's chain is named after it
  ko = ((jnp.sum(taken) == 1) & (jnp.sum(placed) == 1) & lone
        & (lib_min[stone] == point) & (lib_max[stone] == point))
  return jnp.where(ko, point, p)
