"""A slow, plain pure-Python Benson's algorithm: the oracle for agz_jax.go.benson.

Same contract as `agz_jax.go.benson.pass_alive` (its module docstring has the definitions):
for each colour, chains and the regions (empty or opponent points) that have an empty point;
a region is vital to a chain when each of its empty points is a liberty of the chain; chains
with fewer than two vital regions among those present are removed, with every region next to
them, until nothing changes. A colour's area is its surviving chains' stones and every region
left that has at most one point with no stone of that colour next to it. White's area is
written over black's. Everything is sets and flood fills; nothing is vectorised.
"""

import functools

from reference import neighbours_table

BLACK = 1
WHITE = -1
EMPTY = 0


@functools.cache
def _table(size):
  return neighbours_table(size)


def _neighbours(size, p):
  return _table(size)[p]


def _flood(size, start, inside):
  """The 4-connected set of points satisfying `inside` that holds `start`."""
  seen = {start}
  stack = [start]
  while stack:
    p = stack.pop()
    for q in _neighbours(size, p):
      if q not in seen and inside(q):
        seen.add(q)
        stack.append(q)
  return frozenset(seen)


def _components(size, points, inside):
  """Every 4-connected component of the points satisfying `inside`, started from `points`."""
  done = set()
  out = []
  for p in points:
    if p not in done and inside(p):
      component = _flood(size, p, inside)
      done |= component
      out.append(component)
  return out


def area_of(size, board, colour):
  """The set of points in `colour`'s pass-alive area."""
  points = range(size * size)
  chains = _components(size, points, lambda q: board[q] == colour)
  empties = [p for p in points if board[p] == EMPTY]
  regions = _components(size, empties, lambda q: board[q] != colour)
  chain_of = {p: i for i, chain in enumerate(chains) for p in chain}

  def chains_next_to(p):
    return {chain_of[q] for q in _neighbours(size, p) if q in chain_of}

  vital_to = []      # per region: the chains it is vital to
  bordering = []     # per region: the chains next to any of its points
  for region in regions:
    sets = [chains_next_to(p) for p in region if board[p] == EMPTY]
    vital_to.append(set.intersection(*sets))
    bordering.append(set().union(*(chains_next_to(p) for p in region)))

  alive = set(range(len(chains)))
  present = set(range(len(regions)))
  while True:
    vital_count = {c: sum(1 for r in present if c in vital_to[r]) for c in alive}
    dead = {c for c in alive if vital_count[c] < 2}
    if not dead:
      break
    alive -= dead
    present = {r for r in present if bordering[r] <= alive}

  area = set()
  for c in alive:
    area |= chains[c]
  for r in present:
    internal = [p for p in regions[r] if not chains_next_to(p)]
    if len(internal) <= 1:
      area |= regions[r]
  return area


def pass_alive(size, board):
  """Benson's pass-alive area: a list of P ints, 1 black's, -1 white's, 0 neither."""
  board = [int(v) for v in board]
  out = [EMPTY] * (size * size)
  for colour in (BLACK, WHITE):
    for p in area_of(size, board, colour):
      out[p] = colour
  return out
