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

The tree is searched depth first, one move tried per loop step, the escaper's
moves in point order and the chaser's better atari first (on the liberty the
escaper would gain more from by extending, the smaller point on a tie). The
position at every level of the path is kept, so going back costs nothing.

`read` reads any number of ladders on a fixed number of lanes: a lane whose
ladder is decided takes the next one at once, so a few long readings do not
hold up the rest, and the loop runs about (total moves tried) / lanes steps
plus the longest reading. Where a step costs in proportion to its lanes (a
CPU), the lanes narrow once every ladder is handed out and few readings are
left: on human positions one reading in a thousand takes hundreds of moves,
and the narrowing halved the time of AlphaGo's planes.

Chains on the copy are tracked by names, as in `GoState.chain`: a play renames
the chains it joins after the new stone and removed chains lose their names, so
the names stay exact without a flood fill (chains never split).
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from agz_jax.go.config import GoConfig
from agz_jax.go.rules import liberty_range, neighbour_reduce, neighbour_table
from agz_jax.go.state import EMPTY

UNDECIDED, CAPTURED, ESCAPED = 0, 1, 2


def dilate(cfg: GoConfig, mask: jnp.ndarray) -> jnp.ndarray:
  """[..., P] bool: the points orthogonally next to some point of `mask` [..., P]."""
  return neighbour_reduce(cfg, mask, False, jnp.logical_or)


def liberties(cfg: GoConfig, board, names, chains) -> jnp.ndarray:
  """[K] int32: liberties of the chains named `chains` [K] (0 for a name no stone has)."""
  members = names[None, :] == chains[:, None]                                  # [K, P]
  return jnp.sum(dilate(cfg, members) & (board == EMPTY)[None, :], axis=1)


def liberties_of(cfg: GoConfig, board, names, chain) -> jnp.ndarray:
  """[] int32: liberties of the chain named `chain`."""
  return jnp.sum(dilate(cfg, names == chain) & (board == EMPTY))


def _named(names, chains) -> jnp.ndarray:
  """[P] bool: the points of the chains named `chains` [4] (-1: none). Four compares of
  the whole board rather than one [P, 4] compare: XLA on CPU vectorizes these far better."""
  return functools.reduce(jnp.logical_or, [names == chains[j] for j in range(chains.shape[0])])


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
  joined = _named(names, own) | at_x
  names = jnp.where(joined, x, names)
  board = jnp.where(at_x, colour, board).astype(board.dtype)
  enemy = jnp.where(nbr_colour == -colour, nbr_name, -1)
  breathing = dilate(cfg, board == EMPTY)                                      # [P]
  alive = jnp.any((names[None, :] == enemy[:, None]) & breathing[None, :], axis=1)
  dead = (enemy >= 0) & ~alive
  removed = _named(names, jnp.where(dead, enemy, -1))
  board = jnp.where(removed, EMPTY, board).astype(board.dtype)
  names = jnp.where(removed, p, names)
  # A play that captures has the captured points for liberties.
  legal = jnp.any(dead) | jnp.any((names == x) & breathing)
  return board, names, legal


def max_escapes(cfg: GoConfig) -> int:
  """Moves of the escaper after which a ladder still undecided counts as escaped."""
  return 2 * cfg.size


def max_tries(cfg: GoConfig) -> int:
  """Moves tried after which a reading still undecided counts as escaped."""
  return 64 * cfg.size


def _levels(cfg: GoConfig) -> int:
  """The deepest path: the escaper's moves and the chaser's answers."""
  return 2 * max_escapes(cfg)


class Reading(NamedTuple):
  """One ladder being read, on its own copies of the board.

  Attributes:
    boards, names: [L, P] int32, the position at each level of the path
      (level 0: where the reading starts).
    kos: [L] int32, at each level the point the player to move may not take
      back (P: none).
    next_try: [L] int32, at each level what to try next: at the escaper's, the
      smallest point still to try; at the chaser's, 0 (its first atari), 1 or 2 (none left).
    level: [] int32, the current level of the path.
    stone: [] int32, a stone of the escaper's chain (the chain keeps it while it lives).
    escaper: [] int32, the escaper's colour.
    chaser_first: [] bool, the chaser moves at the root (the escaper has just
      moved, and that move counts as its first).
    status: [] int32, UNDECIDED, CAPTURED or ESCAPED.
    tries: [] int32, moves tried so far.
  """

  boards: jnp.ndarray
  names: jnp.ndarray
  kos: jnp.ndarray
  next_try: jnp.ndarray
  level: jnp.ndarray
  stone: jnp.ndarray
  escaper: jnp.ndarray
  chaser_first: jnp.ndarray
  status: jnp.ndarray
  tries: jnp.ndarray


class Ladder(NamedTuple):
  """Where a reading starts (see `Reading`): board and names [P], stone, escaper,
  chaser_first, and status (UNDECIDED to read it at all, else its known outcome)."""

  board: jnp.ndarray
  names: jnp.ndarray
  stone: jnp.ndarray
  escaper: jnp.ndarray
  chaser_first: jnp.ndarray
  status: jnp.ndarray


def _escaper_moves(cfg: GoConfig, board, names, chain, escaper):
  """[P] bool: the escaper's moves, its chain's liberty and the last liberty of every
  chaser chain next to it in atari."""
  p = cfg.num_points
  lib_min, lib_max = liberty_range(cfg, board, names)
  next_to_chain = dilate(cfg, names == chain)
  touching = jax.ops.segment_max((next_to_chain & (board == -escaper)).astype(jnp.int32), names,
                                 num_segments=p + 1) > 0
  # A chaser chain in atari has its last liberty next to each of its stones that has one.
  in_atari = ((lib_min == lib_max) & touching)[names] & (board == -escaper)
  return (board == EMPTY) & (dilate(cfg, in_atari) | next_to_chain)


def _escape_value(cfg: GoConfig, board, names, chain, x, escaper):
  """Liberties the escaper's chain would have after extending to x, x not counted, no captures."""
  nbr_colour, nbr_name = _around(cfg, x, board, names)
  own = jnp.where(nbr_colour == escaper, nbr_name, -1)
  at_x = jnp.arange(cfg.num_points) == x
  group = (names == chain) | _named(names, own) | at_x
  return jnp.sum(dilate(cfg, group) & (board == EMPTY) & ~at_x)


def _ko_after(cfg: GoConfig, board, after, names_after, x, colour):
  """The ko point a play of `colour` at x makes (P: none): it captured one stone, and x is
  a lone stone whose only liberty is that point."""
  p = cfg.num_points
  taken = (board == -colour) & (after == EMPTY)
  nbr_colour, _ = _around(cfg, x, after, names_after)
  is_ko = ((jnp.sum(taken) == 1) & jnp.all(nbr_colour != colour)
           & (jnp.sum(nbr_colour == EMPTY) == 1))
  return jnp.where(is_ko, jnp.argmax(taken).astype(jnp.int32), p)


def _step(cfg: GoConfig, r: Reading) -> Reading:
  """One move tried by a reading (none once it is decided)."""
  p = cfg.num_points
  idx = jnp.arange(p)
  levels = _levels(cfg)
  escaper = r.escaper
  active = r.status == UNDECIDED

  def escaper_at(level):
    return (level % 2 == 0) != r.chaser_first

  def escapes_before(level):
    """The escaper's moves on the path above an escaper level."""
    return (level + r.chaser_first.astype(jnp.int32)) // 2

  k = r.level
  board, names, ko, i = r.boards[k], r.names[k], r.kos[k], r.next_try[k]
  mine = escaper_at(k)
  chain = names[r.stone]
  liberties = dilate(cfg, names == chain) & (board == EMPTY)
  # The escaper tries its moves in point order; the chaser first the atari on the liberty
  # the escaper would gain more from (the smaller point on a tie), then the other.
  escapes = _escaper_moves(cfg, board, names, chain, escaper) & (idx != ko)
  x_escaper = jnp.min(jnp.where(escapes & (idx >= i), idx, p))
  u = jnp.min(jnp.where(liberties, idx, p))
  v = jnp.max(jnp.where(liberties, idx, -1))
  u_first = (_escape_value(cfg, board, names, chain, u, escaper)
             >= _escape_value(cfg, board, names, chain, v, escaper))
  x_chaser = jnp.where(i == 0, jnp.where(u_first, u, v), jnp.where(u_first, v, u))
  x_chaser = jnp.where((i >= 2) | (x_chaser == ko), p, x_chaser)   # none left, or a ko
  x = jnp.where(mine, x_escaper, x_chaser)
  exhausted = active & jnp.where(mine, x >= p, i >= 2)
  following = jnp.where(mine, x + 1, i + 1)          # next_try once x is done with

  move = jnp.minimum(x, p - 1)
  colour = jnp.where(mine, escaper, -escaper)
  after, names_after, legal = play(cfg, board, names, move, colour)
  count = liberties_of(cfg, after, names_after, names_after[r.stone])

  # The escaper wins at once with three liberties; the chaser never wins at once.
  tried = active & ~exhausted & (x < p)              # (not a ko atari skipped)
  wins = tried & legal & mine & (count >= 3)
  deeper = tried & legal & jnp.where(
      mine, count == 2, (count == 1) & (escapes_before(k + 1) < max_escapes(cfg)))
  # A lost level: its parent has won, so the grandparent tries its next move.
  root_wins = jnp.where(escaper_at(0), ESCAPED, CAPTURED)
  root_loses = jnp.where(escaper_at(0), CAPTURED, ESCAPED)
  status = jnp.where(exhausted & (k == 0), root_loses,
                     jnp.where((exhausted & (k == 1)) | (wins & (k == 0)), root_wins, r.status))
  tries = r.tries + tried.astype(jnp.int32)
  status = jnp.where((status == UNDECIDED) & (tries > max_tries(cfg)), ESCAPED, status)
  going_back = (exhausted | wins) & (status == UNDECIDED)
  back = jnp.clip(jnp.where(exhausted, k - 2, k - 1), 0, levels - 1)
  below = jnp.minimum(k + 1, levels - 1)
  keep = lambda new, old: jnp.where(deeper, new, old)
  return r._replace(
      boards=r.boards.at[below].set(keep(after, r.boards[below])),
      names=r.names.at[below].set(keep(names_after, r.names[below])),
      kos=r.kos.at[below].set(keep(_ko_after(cfg, board, after, names_after, move, colour),
                                   r.kos[below])),
      # (below is k itself at the last level: k's own update comes last)
      next_try=r.next_try.at[below].set(keep(0, r.next_try[below]))
               .at[k].set(jnp.where(active, following, i)),
      level=jnp.where(going_back, back, jnp.where(deeper, k + 1, k)),
      status=status, tries=tries)


def read(cfg: GoConfig, count, capacity: int, ladder_at, lanes: int, shrink: int = 1) -> jnp.ndarray:
  """Reads ladders 0 .. count - 1 on `lanes` lanes.

  Args:
    cfg: the game's configuration.
    count: [] int32, how many ladders (at most `capacity`).
    capacity: the most ladders there may be.
    ladder_at: i -> Ladder, where ladder i starts (vmapped over the lanes that
      take a new ladder at a step).
    lanes: readings in progress at once; the loop's cost is about lanes times
      its steps, and it takes about (total moves tried) / lanes steps plus the
      longest reading.
    shrink: once every ladder has been handed out and at most lanes / shrink
      readings are left, they move onto lanes / shrink lanes, and so on down to
      one lane. Where a step costs in proportion to its lanes (a CPU), the few
      long readings at the end then cost little; 1 keeps all the lanes.

  Returns:
    [capacity] int32: CAPTURED or ESCAPED for each ladder below `count`
    (a reading stopped by `max_tries` counts as escaped), UNDECIDED after.
  """
  p, levels = cfg.num_points, _levels(cfg)
  lanes = max(1, min(lanes, capacity))
  count = jnp.asarray(count, jnp.int32)
  widths = [lanes]
  while shrink > 1 and widths[-1] > 1:
    widths.append(max(1, widths[-1] // shrink))

  def wanted(carry):
    """[lanes] bool: decided readings with an outcome to give or a ladder left to take."""
    r, index, head, _ = carry
    return (r.status != UNDECIDED) & ((index < capacity) | (head < count))

  def hand_in(carry, slots):
    """Decided readings give their outcome; up to `slots` of their lanes take the next ladders."""
    r, index, head, outcomes = carry
    n = index.shape[0]
    lane = jnp.nonzero(wanted(carry), size=slots, fill_value=n)[0]                  # [slots], n: none
    valid = lane < n
    at = jnp.minimum(lane, n - 1)
    outcomes = outcomes.at[jnp.where(valid, index[at], capacity)].set(r.status[at], mode="drop")
    taken = head + jnp.cumsum(valid) - 1
    new_index = jnp.where(valid & (taken < count), taken, capacity)
    fresh = jax.vmap(ladder_at)(jnp.minimum(new_index, capacity - 1))
    put = lambda a, v: a.at[lane].set(v, mode="drop")                      # (lane n: dropped)
    r = Reading(
        boards=r.boards.at[lane, 0].set(fresh.board, mode="drop"),
        names=r.names.at[lane, 0].set(fresh.names, mode="drop"),
        kos=r.kos.at[lane, 0].set(p, mode="drop"),
        next_try=r.next_try.at[lane, 0].set(0, mode="drop"),
        level=put(r.level, 0), stone=put(r.stone, fresh.stone), escaper=put(r.escaper, fresh.escaper),
        chaser_first=put(r.chaser_first, fresh.chaser_first),
        status=put(r.status, jnp.where(new_index < capacity, fresh.status, ESCAPED)),
        tries=put(r.tries, 0))
    # A ladder decided where it starts is handed in at a later step.
    return r, put(index, new_index), head + jnp.sum(valid), outcomes

  def phase(carry, width, then):
    """Reads until no ladder is left to hand out and at most `then` lanes read (None: all done)."""
    slots = max(1, width // 4)  # lanes freed per step: about lanes / (mean moves per reading)

    def body(carry):
      carry = jax.lax.cond(jnp.any(wanted(carry)), lambda c: hand_in(c, slots), lambda c: c, carry)
      r, index, head, outcomes = carry
      return jax.vmap(functools.partial(_step, cfg))(r), index, head, outcomes

    def busy(carry):
      r, index, head, _ = carry
      if then is None:
        return jnp.any(index < capacity) | (head < count)
      reading = jnp.sum((index < capacity) & (r.status == UNDECIDED))
      return (head < count) | (reading > then)

    return jax.lax.while_loop(busy, body, carry)

  def narrow(carry, width):
    """Hands in every decided reading and moves the rest onto the first `width` lanes."""
    r, index, head, outcomes = carry
    done = r.status != UNDECIDED
    outcomes = outcomes.at[jnp.where(done, index, capacity)].set(r.status, mode="drop")
    keep = jnp.argsort(done | (index >= capacity), stable=True)[:width]
    r = jax.tree.map(lambda a: a[keep], r)
    return r, jnp.where(done, capacity, index)[keep], head, outcomes

  zeros = lambda *shape: jnp.zeros((lanes,) + shape, jnp.int32)
  idle = Reading(zeros(levels, p), zeros(levels, p), zeros(levels), zeros(levels), zeros(),
                 zeros(), zeros(), jnp.zeros(lanes, bool), jnp.full(lanes, ESCAPED), zeros())
  outcomes = jnp.full(capacity, UNDECIDED, jnp.int32)
  carry = (idle, jnp.full(lanes, capacity, jnp.int32), jnp.int32(0), outcomes)
  for i, width in enumerate(widths):
    if i:
      carry = narrow(carry, width)
    carry = phase(carry, width, widths[i + 1] if i + 1 < len(widths) else None)
  return carry[3]
