"""A bounded ladder reader in pure JAX, for AlphaGo's ladder capture / escape planes.

A ladder is read on a private copy of the board: the escaper extends from atari
on its only liberty, the chaser answers with an atari on one of the two
liberties the escaper then has, until the escaper is captured (one liberty left
after extending, or no legal extension), escapes (three or more liberties, the
chaser has no legal atari, or the chaser's atari captured stones next to the
escaper), or `2 * size` rounds pass (counted as an escape).

Which atari the chaser plays: for each of the escaper's two liberties x, the
number of liberties the escaper would have after extending to x (x itself not
counted, captures not considered); the chaser takes the liberty with the larger
number, the smaller point index on a tie, so the escaper is left the poorer way
out. The escaper never tries to capture a chaser chain instead of extending;
captures happen only as the side effect of a play.

Chains on the copy are tracked by names, as in `GoState.chain`: a play renames
the chains it joins after the new stone and removed chains lose their names, so
the names stay exact without a flood fill (chains never split).
"""

from typing import NamedTuple

import jax
import jax.numpy as jnp

from agz_jax.go.config import GoConfig
from agz_jax.go.rules import neighbour_table
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


def _escape_value(cfg: GoConfig, board, names, chain, x, escaper):
  """Liberties the escaper's chain would have after extending to x, x not counted, no captures."""
  nbr_colour, nbr_name = _around(cfg, x, board, names)
  own = jnp.where(nbr_colour == escaper, nbr_name, -1)
  at_x = jnp.arange(cfg.num_points) == x
  group = (names == chain) | jnp.any(names[:, None] == own[None, :], axis=1) | at_x
  return jnp.sum(dilate(cfg, group) & (board == EMPTY) & ~at_x)


class Reading(NamedTuple):
  """One ladder being read, on its own copy of the board.

  Attributes:
    board: [P] int32 copy of the board.
    names: [P] int32 chain names of the copy, P on empty points.
    chain: [] int32, the name of the escaper's chain.
    escaper: [] int32, the escaper's colour.
    extend_first: [] bool, the next round starts with the escaper extending
      (False only before the first round of a reading that starts with the
      chaser's atari).
    status: [] int32, UNDECIDED, CAPTURED or ESCAPED.
    rounds: [] int32, rounds read so far.
  """

  board: jnp.ndarray
  names: jnp.ndarray
  chain: jnp.ndarray
  escaper: jnp.ndarray
  extend_first: jnp.ndarray
  status: jnp.ndarray
  rounds: jnp.ndarray


def start(board, names, chain, escaper, extend_first, status) -> Reading:
  """A reading of the ladder of `chain` (colour `escaper`); status UNDECIDED to read it at all."""
  as_int = lambda x: jnp.asarray(x, jnp.int32)
  return Reading(as_int(board), as_int(names), as_int(chain), as_int(escaper),
                 jnp.asarray(extend_first, bool), as_int(status), jnp.int32(0))


def max_rounds(cfg: GoConfig) -> int:
  """Rounds after which an undecided ladder counts as escaped."""
  return 2 * cfg.size


def advance(cfg: GoConfig, reading: Reading, until: int) -> Reading:
  """Reads on until the ladder is decided or `until` rounds have been read."""
  p = cfg.num_points
  idx = jnp.arange(p)
  escaper = reading.escaper

  def escaper_extends(r: Reading) -> Reading:
    libs = dilate(cfg, r.names == r.chain) & (r.board == EMPTY)
    a = jnp.argmax(libs).astype(jnp.int32)
    board, names, legal = play(cfg, r.board, r.names, a, escaper)
    count = liberties(cfg, board, names, a[None])[0]
    status = jnp.where(~legal | (count <= 1), CAPTURED, jnp.where(count >= 3, ESCAPED, UNDECIDED))
    return r._replace(board=board, names=names, chain=a, status=status)

  def chaser_ataris(r: Reading) -> Reading:
    libs = dilate(cfg, r.names == r.chain) & (r.board == EMPTY)
    u = jnp.min(jnp.where(libs, idx, p))
    v = jnp.max(jnp.where(libs, idx, -1))
    value_u = _escape_value(cfg, r.board, r.names, r.chain, u, escaper)
    value_v = _escape_value(cfg, r.board, r.names, r.chain, v, escaper)
    x = jnp.where(value_u >= value_v, u, v)
    board, names, legal = play(cfg, r.board, r.names, x, -escaper)
    count = liberties(cfg, board, names, r.chain[None])[0]
    status = jnp.where(~legal | (count >= 2), ESCAPED, UNDECIDED)
    return r._replace(board=board, names=names, status=status)

  def select(keep, a, b):
    return jax.tree.map(lambda x, y: jnp.where(keep, x, y), a, b)

  def body(r: Reading) -> Reading:
    r = select(r.extend_first, escaper_extends(r), r)
    r = select(r.status == UNDECIDED, chaser_ataris(r), r)
    return r._replace(extend_first=jnp.bool_(True), rounds=r.rounds + 1)

  def cond(r: Reading):
    return (r.status == UNDECIDED) & (r.rounds < until)

  return jax.lax.while_loop(cond, body, reading)


def outcome(reading: Reading) -> jnp.ndarray:
  """[] int32, CAPTURED or ESCAPED (a ladder still undecided counts as escaped)."""
  return jnp.where(reading.status == UNDECIDED, ESCAPED, reading.status)
