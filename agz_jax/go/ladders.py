"""A ladder reader in pure JAX, for AlphaGo's ladder capture / escape planes.

A ladder is read on a private copy of the board as a game tree, the way ladder
readers do: the escaper, in atari, may extend on its only liberty or capture any
chaser chain next to it that is in atari (on that chain's last liberty); the
chaser may atari on either of the escaper's two liberties. The escaper escapes
if some move of its reaches three or more liberties, or leads to a position
where no atari of the chaser works; the chaser captures if some atari leaves
the escaper nothing that works. A move that is suicide, an escaper move that
leaves one liberty, and a chaser move after which the escaper has two or more
liberties (it captured stones next to it) fail. Superko is ignored, simple ko
is not: a play may not retake at once a ko the other side just took. An escaper
that has moved `2 * size` times and is still in atari counts as escaped, and
so does a reading not decided after `max_tries(cfg)` moves tried.

The tree is searched depth first, in point order at every level, one move tried
per loop step: the path from the root is kept as moves, with the next move to
try at each level; after a move is refuted the board of the level above is
rebuilt from the board saved every SAVE_EVERY levels (one replayed move per
step), so a reading holds a few boards whatever its depth.

Chains on the copy are tracked by names, as in `GoState.chain`: a play renames
the chains it joins after the new stone and removed chains lose their names, so
the names stay exact without a flood fill (chains never split).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from agz_jax.go.config import GoConfig
from agz_jax.go.rules import liberty_range, neighbour_table
from agz_jax.go.state import EMPTY

UNDECIDED, CAPTURED, ESCAPED = 0, 1, 2


def dilate(cfg: GoConfig, mask: jnp.ndarray) -> jnp.ndarray:
  """Points orthogonally next to some point of `mask`.

  Args:
    cfg: the game's configuration.
    mask: [..., P] bool.

  Returns:
    [..., P] bool.
  """
  n = cfg.size
  m = mask.reshape(mask.shape[:-1] + (n, n))
  pad = [(0, 0)] * (m.ndim - 2) + [(1, 1), (1, 1)]
  q = jnp.pad(m, pad)
  near = q[..., :-2, 1:-1] | q[..., 2:, 1:-1] | q[..., 1:-1, :-2] | q[..., 1:-1, 2:]
  return near.reshape(mask.shape)


def liberties(cfg: GoConfig, board, names, chains) -> jnp.ndarray:
  """[K] int32: liberties of the chains named `chains` [K] (0 for a name no stone has)."""
  members = names[None, :] == chains[:, None]                                  # [K, P]
  return jnp.sum(dilate(cfg, members) & (board == EMPTY)[None, :], axis=1)


def liberties_of(cfg: GoConfig, board, names, chain) -> jnp.ndarray:
  """[] int32: liberties of the chain named `chain`."""
  return jnp.sum(dilate(cfg, names == chain) & (board == EMPTY))


def _around(cfg: GoConfig, x, board, names):
  """Colour and chain name of the four neighbours of point x: ([4], [4]), 2 and P off the board."""
  p = cfg.num_points
  nbrs = jnp.asarray(neighbour_table(cfg.size))[x]
  return jnp.append(board, 2)[nbrs], jnp.append(names, p)[nbrs]


def play(cfg: GoConfig, board, names, x, colour):
  """A play of `colour` at empty point x on the reading copy.

  Returns:
    (board, names, legal): the copy after the play and its captures; legal is
    False for a suicide (the returned copy is then meaningless).
  """
  p = cfg.num_points
  nbr_colour, nbr_name = _around(cfg, x, board, names)
  own = jnp.where(nbr_colour == colour, nbr_name, -1)
  at_x = jnp.arange(p) == x
  joined = jnp.any(names[:, None] == own[None, :], axis=1) | at_x
  names = jnp.where(joined, x, names)
  board = jnp.where(at_x, colour, board).astype(board.dtype)
  enemy = jnp.where(nbr_colour == -colour, nbr_name, -1)
  dead = (enemy >= 0) & (liberties(cfg, board, names, enemy) == 0)
  removed = jnp.any((names[:, None] == enemy[None, :]) & dead[None, :], axis=1)
  board = jnp.where(removed, EMPTY, board).astype(board.dtype)
  names = jnp.where(removed, p, names)
  legal = liberties(cfg, board, names, x[None])[0] > 0
  return board, names, legal


def max_escapes(cfg: GoConfig) -> int:
  """Moves of the escaper after which a ladder still undecided counts as escaped."""
  return 2 * cfg.size


def max_tries(cfg: GoConfig) -> int:
  """Moves tried after which a reading still undecided counts as escaped."""
  return 64 * cfg.size


def max_steps(cfg: GoConfig) -> int:
  """Loop steps by which every reading is decided: each try is followed by at most
  SAVE_EVERY - 1 replayed moves and one step going back."""
  return (max_tries(cfg) + 1) * (SAVE_EVERY + 1) + _levels(cfg)


# The board of every SAVE_EVERY-th level of the path is kept, so that going back
# up the path replays at most SAVE_EVERY - 1 moves.
SAVE_EVERY = 8


def _levels(cfg: GoConfig) -> int:
  """The deepest path: the escaper's moves and the chaser's answers."""
  return 2 * max_escapes(cfg)


class Reading(NamedTuple):
  """One ladder being read, on its own copy of the board.

  Attributes:
    saved_boards, saved_names: [S, P] int32, the position at levels 0,
      SAVE_EVERY, 2 * SAVE_EVERY, ... of the path (level 0: where the reading starts).
    board, names: [P] int32, the position at the current level of the path.
    ko: [] int32, the point the player to move may not take back (P: none).
    stone: [] int32, a stone of the escaper's chain (the chain keeps it while it lives).
    escaper: [] int32, the escaper's colour.
    chaser_first: [] bool, the chaser moves at the root (the escaper has just
      moved, and that move counts as its first).
    moves: [L] int32, the move played at each level of the path.
    next_try: [L] int32, the smallest point still to try at each level.
    level: [] int32, the current level of the path.
    replay: [] int32, -1, or the next level of the path replayed to rebuild `board`.
    status: [] int32, UNDECIDED, CAPTURED or ESCAPED.
    tries: [] int32, moves tried so far.
    steps: [] int32, loop steps so far (tries, replays and going back).
  """

  saved_boards: jnp.ndarray
  saved_names: jnp.ndarray
  board: jnp.ndarray
  names: jnp.ndarray
  ko: jnp.ndarray
  stone: jnp.ndarray
  escaper: jnp.ndarray
  chaser_first: jnp.ndarray
  moves: jnp.ndarray
  next_try: jnp.ndarray
  level: jnp.ndarray
  replay: jnp.ndarray
  status: jnp.ndarray
  tries: jnp.ndarray
  steps: jnp.ndarray


def start(cfg: GoConfig, board, names, stone, escaper, chaser_first, status) -> Reading:
  """A reading of the ladder of the chain at `stone` (colour `escaper`).

  Args:
    cfg: the game's configuration.
    board, names: [P] the position (the chain has one liberty and the escaper
      moves, or with `chaser_first` two liberties and the chaser moves).
    stone: a point of the escaper's chain.
    escaper: its colour.
    chaser_first: who moves first.
    status: UNDECIDED to read the ladder at all, else its known outcome.
  """
  as_int = lambda x: jnp.asarray(x, jnp.int32)
  levels = _levels(cfg)
  saves = -(-levels // SAVE_EVERY)
  board, names = as_int(board), as_int(names)
  saved = lambda x: jnp.zeros((saves,) + x.shape, jnp.int32).at[0].set(x)
  return Reading(saved(board), saved(names), board, names, jnp.int32(cfg.num_points),
                 as_int(stone), as_int(escaper), jnp.asarray(chaser_first, bool),
                 jnp.zeros(levels, jnp.int32), jnp.zeros(levels, jnp.int32), jnp.int32(0),
                 jnp.int32(-1), as_int(status), jnp.int32(0), jnp.int32(0))


def _escaper_moves(cfg: GoConfig, board, names, chain, escaper):
  """[P] bool: the escaper's moves, its chain's liberty and the last liberty of every
  chaser chain next to it in atari."""
  p = cfg.num_points
  lib_min, lib_max = liberty_range(cfg, board, names)
  in_atari = (lib_min == lib_max)[names] & (board == -escaper)                 # [P]
  next_to_chain = dilate(cfg, names == chain)
  last_liberty = jnp.where(in_atari & next_to_chain, lib_min[names], p)
  captures = jnp.zeros(p + 1, bool).at[last_liberty].set(True)[:p]
  return captures | (next_to_chain & (board == EMPTY))


def _ko_after(cfg: GoConfig, board, after, names_after, x, colour):
  """The ko point a play of `colour` at x makes (P: none): it captured one stone, and x is
  a lone stone whose only liberty is that point."""
  p = cfg.num_points
  taken = (board == -colour) & (after == EMPTY)
  lone = jnp.sum(names_after == names_after[x]) == 1
  ko = jnp.argmax(taken).astype(jnp.int32)
  is_ko = (jnp.sum(taken) == 1) & lone & (liberties_of(cfg, after, names_after, names_after[x]) == 1)
  return jnp.where(is_ko, ko, p)


def advance(cfg: GoConfig, reading: Reading, until: int) -> Reading:
  """Reads on until the ladder is decided or `until` loop steps have been taken."""
  p = cfg.num_points
  idx = jnp.arange(p)
  levels = _levels(cfg)
  escaper = reading.escaper

  def escaper_at(level):
    return (level % 2 == 0) != reading.chaser_first

  def escapes_before(level):
    """The escaper's moves on the path above an escaper level."""
    return (level + reading.chaser_first.astype(jnp.int32)) // 2

  def rebuild(r: Reading, level) -> Reading:
    """Goes back to `level` of the path: its board is replayed from the last saved one."""
    base = level // SAVE_EVERY
    return r._replace(level=level, board=r.saved_boards[base], names=r.saved_names[base],
                      ko=jnp.int32(p), replay=jnp.where(level > base * SAVE_EVERY,
                                                        base * SAVE_EVERY, -1))

  def replay_step(r: Reading) -> Reading:
    j = r.replay
    colour = jnp.where(escaper_at(j), escaper, -escaper)
    board, names, _ = play(cfg, r.board, r.names, r.moves[j], colour)
    ko = _ko_after(cfg, r.board, board, names, r.moves[j], colour)
    return r._replace(board=board, names=names, ko=ko,
                      replay=jnp.where(j + 1 >= r.level, -1, j + 1))

  def search_step(r: Reading) -> Reading:
    k = r.level
    mine = escaper_at(k)
    chain = r.names[r.stone]
    liberties = dilate(cfg, r.names == chain) & (r.board == EMPTY)
    moves = jnp.where(mine, _escaper_moves(cfg, r.board, r.names, chain, escaper), liberties)
    moves = moves & (idx != r.ko)
    x = jnp.min(jnp.where(moves & (idx >= r.next_try[k]), idx, p))
    exhausted = x >= p
    colour = jnp.where(mine, escaper, -escaper)
    x_ = jnp.minimum(x, p - 1)
    board, names, legal = play(cfg, r.board, r.names, x_, colour)
    count = liberties_of(cfg, board, names, names[r.stone])
    # The escaper wins at once with three liberties; the chaser never wins at once.
    wins = ~exhausted & legal & mine & (count >= 3)
    deeper = ~exhausted & legal & jnp.where(
        mine, count == 2, (count == 1) & (escapes_before(k + 1) < max_escapes(cfg)))

    # A lost level: its parent has won, so the grandparent tries its next move.
    root_wins = jnp.where(escaper_at(0), ESCAPED, CAPTURED)
    root_loses = jnp.where(escaper_at(0), CAPTURED, ESCAPED)
    status = jnp.where(exhausted & (k == 0), root_loses,
                       jnp.where((exhausted & (k == 1)) | (wins & (k == 0)), root_wins, UNDECIDED))
    tries = r.tries + (~exhausted).astype(jnp.int32)
    status = jnp.where((status == UNDECIDED) & (tries > max_tries(cfg)), ESCAPED, status)
    back = jnp.clip(jnp.where(exhausted, k - 2, k - 1), 0, levels - 1)
    going_back = (exhausted | wins) & (status == UNDECIDED)
    backed = rebuild(r, back)
    backed = backed._replace(next_try=r.next_try.at[back].set(r.moves[back] + 1))
    below = jnp.minimum(k + 1, levels - 1)
    save = (below % SAVE_EVERY == 0) & (k + 1 < levels)
    slot = below // SAVE_EVERY
    pushed = r._replace(
        board=board, names=names, level=k + 1, moves=r.moves.at[k].set(x),
        ko=_ko_after(cfg, r.board, board, names, x_, colour),
        next_try=r.next_try.at[below].set(0),
        saved_boards=jnp.where(save, r.saved_boards.at[slot].set(board), r.saved_boards),
        saved_names=jnp.where(save, r.saved_names.at[slot].set(names), r.saved_names))
    skipped = r._replace(next_try=r.next_try.at[k].set(x + 1))
    out = select(going_back, backed, select(deeper, pushed, skipped))
    return out._replace(status=status, tries=tries)

  def select(keep, a, b):
    return jax.tree.map(lambda x, y: jnp.where(keep, x, y), a, b)

  def body(r: Reading) -> Reading:
    r = select(r.replay >= 0, replay_step(r), search_step(r))
    return r._replace(steps=r.steps + 1)

  def cond(r: Reading):
    return (r.status == UNDECIDED) & (r.steps < until)

  return jax.lax.while_loop(cond, body, reading)


def outcome(reading: Reading) -> jnp.ndarray:
  """[] int32, CAPTURED or ESCAPED (a ladder still undecided counts as escaped)."""
  return jnp.where(reading.status == UNDECIDED, ESCAPED, reading.status)
