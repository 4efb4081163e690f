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
plus the longest reading. Ladders are started in chunks (one vmapped start for
a few hundred of them, far cheaper per ladder than starting a lane's worth at
every step) and wait in a queue. Where a step costs in proportion to its lanes (a
CPU), the lanes narrow once every ladder is handed out and few readings are
left: on human positions one reading in a thousand takes hundreds of moves,
and the narrowing halved the time of AlphaGo's planes.

The copy is kept as bitboards: each side's stones and the escaper's chain (the
prey) as `size` rows of `size` bits, some 20 machine words where a board of
points takes 361. A step's point sets are a few shifts and masks of those
words; a chain is found by a flood fill from a stone, and only where it is
needed: the prey is carried from level to level and grows by the stones an
escaper's move joins to it, an opponent stone with an empty neighbour is alive
without one, and the chaser chains next to the prey are looked at only at the
escaper's levels, one chain at a time.
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from agz_jax.alphago import lanes as lanes_lib
from agz_jax.go import GoConfig

UNDECIDED, CAPTURED, ESCAPED = 0, 1, 2


def max_escapes(cfg: GoConfig) -> int:
  """Moves of the escaper after which a ladder still undecided counts as escaped."""
  return 2 * cfg.size


def max_tries(cfg: GoConfig) -> int:
  """Moves tried after which a reading still undecided counts as escaped."""
  return 64 * cfg.size


def _levels(cfg: GoConfig) -> int:
  """The deepest path: the escaper's moves and the chaser's answers."""
  return 2 * max_escapes(cfg)


# -- bitboards: a position's points as `size` rows of `size` bits (uint32), bit c of row r
# the point r * size + c. A reading step works on these: some 20 words per point set
# instead of 361 points, and chains found by flood fills from a few seeds.


def to_bits(cfg: GoConfig, mask: jnp.ndarray) -> jnp.ndarray:
  """[..., P] bool -> [..., N] uint32 rows."""
  n = cfg.size
  rows = mask.reshape(mask.shape[:-1] + (n, n)).astype(jnp.uint32)
  return jnp.sum(rows << jnp.arange(n, dtype=jnp.uint32), axis=-1, dtype=jnp.uint32)


def _full(cfg: GoConfig):
  return jnp.uint32((1 << cfg.size) - 1)


def _shifts(cfg: GoConfig, m):
  """The four sets of points whose west, east, north and south neighbour is in m ([..., N])."""
  z = jnp.zeros_like(m[..., :1])
  return ((m << 1) & _full(cfg), m >> 1, jnp.concatenate([m[..., 1:], z], -1),
          jnp.concatenate([z, m[..., :-1]], -1))


def _grow(cfg: GoConfig, m):
  """m and every point orthogonally next to it."""
  return functools.reduce(jnp.bitwise_or, _shifts(cfg, m), m)


def _count(m):
  return jnp.sum(jax.lax.population_count(m), axis=-1).astype(jnp.int32)


def _bit(cfg: GoConfig, x):
  """The set {x} (empty for x = P)."""
  n = cfg.size
  return jnp.where(jnp.arange(n) == x // n, jnp.uint32(1) << (x % n).astype(jnp.uint32), jnp.uint32(0))


def _lowest(m):
  """The set holding only the smallest point of m (empty if m is)."""
  first = jnp.argmax(m != 0)
  return jnp.where(jnp.arange(m.shape[-1]) == first, m & (~m + jnp.uint32(1)), jnp.uint32(0))


def _first(cfg: GoConfig, m):
  """The smallest point of m, P if none."""
  n = cfg.size
  row = jnp.argmax(m != 0)
  low = m[row] & (~m[row] + jnp.uint32(1))
  point = row * n + jax.lax.population_count(low - jnp.uint32(1)).astype(jnp.int32)
  return jnp.where(jnp.any(m != 0), point, cfg.num_points).astype(jnp.int32)


def _last(cfg: GoConfig, m):
  """The largest point of m (m not empty)."""
  n = cfg.size
  row = n - 1 - jnp.argmax(m[::-1] != 0)
  return (row * n + 31 - jax.lax.clz(m[row]).astype(jnp.int32)).astype(jnp.int32)


def _from(cfg: GoConfig, i):
  """The points >= i."""
  n = cfg.size
  rows = jnp.arange(n)
  in_row = _full(cfg) & ~((jnp.uint32(1) << (i % n).astype(jnp.uint32)) - jnp.uint32(1))
  return jnp.where(rows > i // n, _full(cfg), jnp.where(rows == i // n, in_row, jnp.uint32(0)))


def _flood(cfg: GoConfig, seed, within):
  """The points of `within` connected inside it to a point of `seed` ([..., N] each: any number
  of floods at once). Two steps a loop turn; the loop turns until nothing grows."""
  def body(carry):
    m, _ = carry
    grown = _grow(cfg, _grow(cfg, m) & within) & within
    return grown, jnp.any(grown != m)
  # (The barrier keeps XLA from recomputing the seed for every point of the test below.)
  m = jax.lax.optimization_barrier(seed & within)
  return jax.lax.while_loop(lambda c: c[1], body, (m, jnp.any(m != 0)))[0]


def _two_empty(cfg: GoConfig, empty):
  """The points with two or more empty neighbours."""
  a, b, c, d = _shifts(cfg, empty)
  return (a & (b | c | d)) | (b & (c | d)) | (c & d)


def _atari_liberties(cfg: GoConfig, touching, within, empty):
  """The last liberty of every chain of `within` holding a point of `touching` that has
  exactly one liberty. A stone with two empty neighbours is in no such chain; the other
  chains are found one at a time."""
  def body(carry):
    rest, found = carry
    chain = _flood(cfg, _lowest(rest), within)
    libs = _grow(cfg, chain) & empty
    return rest & ~chain, jnp.where(_count(libs) == 1, found | libs, found)
  rest = touching & ~_two_empty(cfg, empty)
  return jax.lax.while_loop(lambda c: jnp.any(c[0] != 0), body, (rest, jnp.zeros_like(rest)))[1]


class Reading(NamedTuple):
  """One ladder being read, on its own copies of the board.

  Attributes:
    escapers, chasers: [L, N] uint32, the stones of each side at each level of
      the path (level 0: where the reading starts), as bitboards.
    prey: [L, N] uint32, the escaper's chain at each level.
    kos: [L] int32, at each level the point the player to move may not take
      back (P: none).
    next_try: [L] int32, at each level what to try next: at the escaper's, the
      smallest point still to try; at the chaser's, 0 (its first atari), 1 or 2 (none left).
    level: [] int32, the current level of the path.
    chaser_first: [] bool, the chaser moves at the root (the escaper has just
      moved, and that move counts as its first).
    status: [] int32, UNDECIDED, CAPTURED or ESCAPED.
    tries: [] int32, moves tried so far.
  """

  escapers: jnp.ndarray
  chasers: jnp.ndarray
  prey: jnp.ndarray
  kos: jnp.ndarray
  next_try: jnp.ndarray
  level: jnp.ndarray
  chaser_first: jnp.ndarray
  status: jnp.ndarray
  tries: jnp.ndarray


class Play(NamedTuple):
  """A play on a reading's position: the position after it (escapers, chasers, prey [N]),
  legal (False: a suicide, the position meaningless), the prey's liberties after it, and the
  ko point it makes (P: none)."""

  escapers: jnp.ndarray
  chasers: jnp.ndarray
  prey: jnp.ndarray
  legal: jnp.ndarray
  liberties: jnp.ndarray
  ko: jnp.ndarray


def play(cfg: GoConfig, escapers, chasers, prey, x, by_escaper) -> Play:
  """A play at empty point x by the escaper (by_escaper) or the chaser, with its captures.

  The other side's chains next to x left without a liberty are removed; the play is a
  suicide when it captures nothing and x's chain has no liberty. The prey is the chain of
  x where x joins it. Chains are found by flood fills from x's neighbours, except where a
  stone's own empty neighbour already decides.
  """
  p = cfg.num_points
  # (Computed once here, not again for every point that uses them.)
  x, at_x, escapers, chasers = jax.lax.optimization_barrier((x, _bit(cfg, x), escapers, chasers))
  own, other = jnp.where(by_escaper, escapers, chasers), jnp.where(by_escaper, chasers, escapers)
  own_after, empty_after = own | at_x, ~(escapers | chasers | at_x) & _full(cfg)
  next_to_x = jnp.stack(_shifts(cfg, at_x))                                   # [4, N]
  chains = _flood(cfg, next_to_x & other & ~_grow(cfg, empty_after), other)
  dead = _count(_grow(cfg, chains) & empty_after) == 0
  removed = functools.reduce(jnp.bitwise_or, jnp.where(dead[:, None], chains, jnp.uint32(0)))
  other_after, empty_after = other & ~removed, empty_after | removed
  captured = jnp.any(removed != 0)
  breathing = jnp.any(_grow(cfg, at_x) & empty_after != 0)
  extends = by_escaper & jnp.any(_grow(cfg, at_x) & prey != 0)
  # x's chain: needed where it holds the prey, or to tell a suicide.
  chain = _flood(cfg, jnp.where(extends | ~(captured | breathing),
                                at_x | jnp.where(extends, prey, jnp.uint32(0)), jnp.uint32(0)),
                 own_after)
  legal = captured | breathing | (_count(_grow(cfg, chain) & empty_after) > 0)
  prey_after = jnp.where(extends, chain, prey)
  # A ko: one stone captured by a lone stone with that point its only liberty.
  is_ko = ((_count(removed) == 1) & ~jnp.any(_grow(cfg, at_x) & own != 0)
           & (_count(_grow(cfg, at_x) & empty_after) == 1))
  return Play(escapers=jnp.where(by_escaper, own_after, other_after),
              chasers=jnp.where(by_escaper, other_after, own_after), prey=prey_after,
              legal=legal, liberties=_count(_grow(cfg, prey_after) & empty_after),
              ko=jnp.where(is_ko, _first(cfg, removed), p).astype(jnp.int32))


class Ladder(NamedTuple):
  """Where a reading starts: escapers, chasers, prey [N] (bitboards, see `Reading`),
  chaser_first, and status (UNDECIDED to read it at all, else its known outcome)."""

  escapers: jnp.ndarray
  chasers: jnp.ndarray
  prey: jnp.ndarray
  chaser_first: jnp.ndarray
  status: jnp.ndarray


def start(cfg: GoConfig, mine, theirs, prey, x, capture) -> Ladder:
  """The ladder a move starts, for the player to move (stones `mine`, the other's `theirs`).

  capture: x ataris the other's chain `prey` (two liberties): the reading starts with that
  chain to move, and is read only if x is legal and leaves it one liberty (else ESCAPED).
  Otherwise x extends `prey`, the mover's chain in atari: the chaser moves first, and the
  ladder is CAPTURED at once if x is a suicide or leaves one liberty, ESCAPED with three.
  """
  escapers, chasers = jnp.where(capture, theirs, mine), jnp.where(capture, mine, theirs)
  after = play(cfg, escapers, chasers, prey, x, by_escaper=~capture)
  libs = after.liberties
  status = jnp.where(capture, jnp.where(after.legal & (libs == 1), UNDECIDED, ESCAPED),
                     jnp.where(~after.legal | (libs <= 1), CAPTURED,
                               jnp.where(libs >= 3, ESCAPED, UNDECIDED)))
  return Ladder(after.escapers, after.chasers, after.prey, ~capture, status.astype(jnp.int32))


def _step(cfg: GoConfig, r: Reading) -> Reading:
  """One move tried by a reading (none once it is decided)."""
  p = cfg.num_points
  levels = _levels(cfg)
  active = r.status == UNDECIDED

  def escaper_at(level):
    return (level % 2 == 0) != r.chaser_first

  def escapes_before(level):
    """The escaper's moves on the path above an escaper level."""
    return (level + r.chaser_first.astype(jnp.int32)) // 2

  k = r.level
  escapers, chasers, prey, ko, i = r.escapers[k], r.chasers[k], r.prey[k], r.kos[k], r.next_try[k]
  mine = escaper_at(k)
  empty = ~(escapers | chasers) & _full(cfg)
  liberties = _grow(cfg, prey) & empty
  # The escaper tries its moves in point order: its liberty and the last liberty of every
  # chaser chain next to it in atari (looked for at the escaper's levels only).
  touching = jnp.where(mine, _grow(cfg, prey) & chasers, jnp.uint32(0))
  escapes = (liberties | _atari_liberties(cfg, touching, chasers, empty)) & ~_bit(cfg, ko)
  x_escaper = _first(cfg, escapes & _from(cfg, i))
  # The chaser first the atari on the liberty the escaper would gain more from by extending
  # (the smaller point on a tie), then the other.
  u, v = _first(cfg, liberties), _last(cfg, liberties)
  both = jnp.stack([_bit(cfg, u), _bit(cfg, v)])                               # [2, N]
  joined = _flood(cfg, jnp.where(mine, jnp.uint32(0), _grow(cfg, both) & escapers & ~prey), escapers)
  gain = _count(_grow(cfg, prey | both | joined) & empty & ~both)
  u_first = gain[0] >= gain[1]
  x_chaser = jnp.where(i == 0, jnp.where(u_first, u, v), jnp.where(u_first, v, u))
  x_chaser = jnp.where((i >= 2) | (x_chaser == ko), p, x_chaser)   # none left, or a ko
  x = jnp.where(mine, x_escaper, x_chaser)
  exhausted = active & jnp.where(mine, x >= p, i >= 2)
  following = jnp.where(mine, x + 1, i + 1)          # next_try once x is done with

  move = jnp.minimum(x, p - 1)
  after = play(cfg, escapers, chasers, prey, move, mine)
  legal, count = after.legal, after.liberties

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
  keep = lambda array, new: array.at[below].set(jnp.where(deeper, new, array[below]))
  return r._replace(
      escapers=keep(r.escapers, after.escapers),
      chasers=keep(r.chasers, after.chasers),
      prey=keep(r.prey, after.prey),
      kos=keep(r.kos, after.ko),
      # (below is k itself at the last level: k's own update comes last)
      next_try=keep(r.next_try, 0).at[k].set(jnp.where(active, following, i)),
      level=jnp.where(going_back, back, jnp.where(deeper, k + 1, k)),
      status=status, tries=tries)


def read_alone(cfg: GoConfig, ladder: Ladder) -> Reading:
  """One ladder read to its end on a lane of its own, without `read`'s queue and lanes:
  the reading as it ends (its outcome in `status`, the moves it tried in `tries`). For
  tests and benchmarks; `read` gives the same outcome."""
  levels = _levels(cfg)
  bits = jnp.zeros((levels, cfg.size), jnp.uint32)
  zeros = jnp.zeros(levels, jnp.int32)
  first = Reading(bits.at[0].set(ladder.escapers), bits.at[0].set(ladder.chasers),
                  bits.at[0].set(ladder.prey), jnp.full(levels, cfg.num_points, jnp.int32), zeros,
                  jnp.int32(0), ladder.chaser_first, ladder.status, jnp.int32(0))
  return jax.lax.while_loop(lambda r: r.status == UNDECIDED, functools.partial(_step, cfg), first)


class _Queue(NamedTuple):
  """Ladders started and still to be read: a chunk's undecided ladders, in order.

  Attributes:
    ladders: Ladder with [C, ...] fields: where each queued reading starts.
    ids: [C] int32, the ladder each entry is.
    size: [] int32, entries holding a ladder.
    head: [] int32, the next entry to hand to a lane.
    next: [] int32, the first ladder of the next chunk.
  """

  ladders: Ladder
  ids: jnp.ndarray
  size: jnp.ndarray
  head: jnp.ndarray
  next: jnp.ndarray


def _give(capacity: int, outcomes, r: Reading, index):
  """The outcomes of the decided readings (lane i reads ladder index[i], `capacity` when
  idle); their lanes are free after."""
  done = (r.status != UNDECIDED) & (index < capacity)
  outcomes = outcomes.at[jnp.where(done, index, capacity)].set(r.status, mode="drop")
  return outcomes, jnp.where(done, capacity, index)


def _refill(ladder_at, count, capacity: int, chunk: int, queue: _Queue, outcomes):
  """Starts the next chunk of ladders: the decided ones give their outcome, the others are
  queued."""
  ids = queue.next + jnp.arange(chunk, dtype=jnp.int32)
  valid = ids < count
  fresh = jax.vmap(ladder_at)(jnp.minimum(ids, capacity - 1))
  undecided = valid & (fresh.status == UNDECIDED)
  outcomes = outcomes.at[jnp.where(valid & ~undecided, ids, capacity)].set(
      fresh.status, mode="drop")
  order = jnp.nonzero(undecided, size=chunk, fill_value=chunk - 1)[0]
  return _Queue(jax.tree.map(lambda a: a[order], fresh), ids[order],
                jnp.sum(undecided).astype(jnp.int32), jnp.int32(0), queue.next + chunk), outcomes


def _hand_in(p: int, capacity: int, chunk: int, r: Reading, index, queue: _Queue, outcomes):
  """The free lanes, in order, take the queued ladders, in order."""
  outcomes, index = _give(capacity, outcomes, r, index)
  free = index >= capacity
  free_lanes = jnp.nonzero(free, size=index.shape[0], fill_value=index.shape[0])[0]
  k = jnp.arange(index.shape[0], dtype=jnp.int32)
  taken = (k < jnp.sum(free)) & (queue.head + k < queue.size)
  entry = jnp.minimum(queue.head + k, chunk - 1)
  lane = jnp.where(taken, free_lanes, index.shape[0])                           # past the end: none
  new = jax.tree.map(lambda a: a[entry], queue.ladders)
  put = lambda a, v: a.at[lane].set(v, mode="drop")
  r = Reading(
      escapers=r.escapers.at[lane, 0].set(new.escapers, mode="drop"),
      chasers=r.chasers.at[lane, 0].set(new.chasers, mode="drop"),
      prey=r.prey.at[lane, 0].set(new.prey, mode="drop"),
      kos=r.kos.at[lane, 0].set(p, mode="drop"),
      next_try=r.next_try.at[lane, 0].set(0, mode="drop"),
      level=put(r.level, 0), chaser_first=put(r.chaser_first, new.chaser_first),
      status=put(r.status, new.status), tries=put(r.tries, 0))
  queue = queue._replace(head=queue.head + jnp.sum(taken).astype(jnp.int32))
  return r, put(index, queue.ids[entry]), queue, outcomes


def read(cfg: GoConfig, count, capacity: int, ladder_at, lanes: int, shrink: int = 1,
         chunk: int | None = None) -> jnp.ndarray:
  """Reads ladders 0 .. count - 1 on `lanes` lanes.

  Args:
    cfg: the game's configuration.
    count: [] int32, how many ladders (at most `capacity`).
    capacity: the most ladders there may be.
    ladder_at: i -> Ladder, where ladder i starts, vmapped over a chunk of
      ladders at a time. A ladder decided where it starts gives its outcome
      there and never takes a lane; the chunk's others wait in a queue, and a
      lane whose reading is decided takes the next of them. The next chunk is
      started once the queue is empty.
    lanes: readings in progress at once; the loop takes about (total moves
      tried) / lanes steps plus the longest reading.
    shrink: once every ladder has been handed out and at most lanes / shrink
      readings are left, they move onto lanes / shrink lanes, and so on while
      that leaves a lane (`lanes.widths`). Where a step costs in proportion to its
      lanes (a CPU), the few long readings at the end then cost little; 1 keeps
      all the lanes.
    chunk: ladders started at once (default max(256, 4 * lanes), at most
      `capacity`). Starting a ladder costs about as much as a reading step, and
      far less per ladder in large chunks.

  Returns:
    [capacity] int32: CAPTURED or ESCAPED for each ladder below `count`
    (a reading stopped by `max_tries` counts as escaped), UNDECIDED after.
  """
  p, levels = cfg.num_points, _levels(cfg)
  lanes = max(1, min(lanes, capacity))
  chunk = max(1, min(capacity, chunk or max(256, 4 * lanes)))
  count = jnp.asarray(count, jnp.int32)

  give = functools.partial(_give, capacity)
  refill = functools.partial(_refill, ladder_at, count, capacity, chunk)
  hand_in = functools.partial(_hand_in, p, capacity, chunk)

  def step(carry):
    """Starts the next chunk if the queue is empty, hands the free lanes the queued ladders,
    and reads every lane one move further."""
    r, index, queue, outcomes = carry
    queue, outcomes = jax.lax.cond((queue.head >= queue.size) & (queue.next < count),
                                   refill, lambda q, o: (q, o), queue, outcomes)
    free = jnp.any((index >= capacity) | (r.status != UNDECIDED))
    r, index, queue, outcomes = jax.lax.cond(
        free & (queue.head < queue.size), hand_in, lambda *c: c, r, index, queue, outcomes)
    return jax.vmap(functools.partial(_step, cfg))(r), index, queue, outcomes

  def waiting(carry):
    queue = carry[2]
    return (queue.head < queue.size) | (queue.next < count)

  def reading(carry):
    r, index = carry[0], carry[1]
    return jnp.sum((index < capacity) & (r.status == UNDECIDED))

  def narrow(carry, width):
    """Gives the decided readings' outcomes and moves the rest onto the first `width` lanes."""
    r, index, queue, outcomes = carry
    outcomes, index = give(outcomes, r, index)
    keep = lanes_lib.busy_first(index < capacity, width)
    return jax.tree.map(lambda a: a[keep], r), index[keep], queue, outcomes

  zeros = lambda *shape: jnp.zeros((lanes,) + shape, jnp.int32)
  bits = jnp.zeros((lanes, levels, cfg.size), jnp.uint32)
  idle = Reading(bits, bits, bits, zeros(levels), zeros(levels), zeros(), jnp.zeros(lanes, bool),
                 jnp.full(lanes, ESCAPED), zeros())
  nothing = jax.eval_shape(jax.vmap(ladder_at), jnp.zeros(chunk, jnp.int32))
  queue = _Queue(jax.tree.map(lambda a: jnp.zeros(a.shape, a.dtype), nothing),
                 jnp.zeros(chunk, jnp.int32), jnp.int32(0), jnp.int32(0), jnp.int32(0))
  outcomes = jnp.full(capacity, UNDECIDED, jnp.int32)
  carry = (idle, jnp.full(lanes, capacity, jnp.int32), queue, outcomes)
  phases = lanes_lib.widths(lanes, shrink, end_at_fewest=True)  # the longest readings on one lane
  r, index, _, outcomes = lanes_lib.drain(carry, step, phases=phases, waiting=waiting,
                                          busy=reading, narrow=narrow)
  return give(outcomes, r, index)[0]
