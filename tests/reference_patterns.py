"""A slow, plain pure-Python oracle of the fast policies' features (agz_jax.alphago.patterns).

Boards are flat lists (1 black, -1 white, 0 empty), point = row * size + col. Everything is
recomputed from scratch with flood fills and loops over points; canonical patterns are found by
transforming the whole board with each of its 8 symmetries and reading the pattern there (the
module permutes pattern points instead), so the two agree only if both are right.

The layout of a code is part of the format both share: a pattern's points are read in the
order of RING / DIAMOND below (then the centre), 3 bits each, the first 10 in `hi`, the rest
(and a response pattern's move slot) in `lo`.
"""

RING = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]
DIAMOND = [(-2, 0), (-1, -1), (-1, 0), (-1, 1), (0, -2), (0, -1), (0, 1), (0, 2),
           (1, -1), (1, 0), (1, 1), (2, 0)]
ORTHOGONAL = [(-1, 0), (1, 0), (0, -1), (0, 1)]
EMPTY_POINT, OFF_BOARD, OWN, OPP = 0, 1, 2, 5


def chains_and_liberties(board, size):
  """(chain id per point or None, {chain id: set of liberties})."""
  chain = [None] * (size * size)
  libs = {}
  for start in range(size * size):
    if board[start] == 0 or chain[start] is not None:
      continue
    chain[start] = start
    stack, liberties = [start], set()
    while stack:
      p = stack.pop()
      r, c = divmod(p, size)
      for dr, dc in ORTHOGONAL:
        if 0 <= r + dr < size and 0 <= c + dc < size:
          q = (r + dr) * size + c + dc
          if board[q] == 0:
            liberties.add(q)
          elif board[q] == board[start] and chain[q] is None:
            chain[q] = start
            stack.append(q)
    libs[start] = liberties
  return chain, libs


def point_states(board, size, to_play):
  chain, libs = chains_and_liberties(board, size)
  out = []
  for p in range(size * size):
    if board[p] == 0:
      out.append(EMPTY_POINT)
    else:
      capped = min(len(libs[chain[p]]), 3)
      out.append((OWN if board[p] == to_play else OPP) + capped - 1)
  return out


def transform(g, r, c, size):
  """Symmetry g of the board applied to point (r, c): transpose if g & 4, then flips."""
  if g & 4:
    r, c = c, r
  if g & 1:
    r = size - 1 - r
  if g & 2:
    c = size - 1 - c
  return r, c


def transformed(values, g, size):
  out = [None] * (size * size)
  for p in range(size * size):
    r, c = transform(g, *divmod(p, size), size)
    out[r * size + c] = values[p]
  return out


def read(values, size, centre, offsets, off=OFF_BOARD):
  r, c = divmod(centre, size)
  out = []
  for dr, dc in offsets:
    inside = 0 <= r + dr < size and 0 <= c + dc < size
    out.append(values[(r + dr) * size + c + dc] if inside else off)
  return out


def pack(point_values, slot=None):
  hi = sum(v << (3 * k) for k, v in enumerate(point_values[:10]))
  lo = sum(v << (3 * k) for k, v in enumerate(point_values[10:]))
  if slot is not None:
    lo |= slot << (3 * (len(point_values) - 10))
  return hi, lo


def canonical_at(values, size, p, offsets, centre=False, slot_point=None, off=OFF_BOARD):
  """The smallest code over the board's symmetries of the pattern around p."""
  best = None
  for g in range(8):
    moved = transformed(values, g, size)
    r, c = transform(g, *divmod(p, size), size)
    q = r * size + c
    points = read(moved, size, q, offsets, off)
    if centre:
      points.append(moved[q])
    slot = None
    if slot_point is not None:
      sr, sc = transform(g, *divmod(slot_point, size), size)
      slot = DIAMOND.index((sr - r, sc - c))
    code = pack(points, slot)
    best = code if best is None or code < best else best
  return best


def nakade_ids():
  """{canonical code: id} of the 13-point capture masks, ids in code order."""
  codes = set()
  for mask in range(2 ** 13):
    window = [0] * 25  # a 5x5 board, the mask around its centre (point 12)
    for k, (dr, dc) in enumerate(DIAMOND + [(0, 0)]):
      if mask >> k & 1:
        window[(2 + dr) * 5 + 2 + dc] = 1
    codes.add(canonical_at(window, 5, 12, DIAMOND, centre=True, off=0))
  return {code: i for i, code in enumerate(sorted(codes))}


def local_ids(board, before, before2, to_play, size, dictionaries, nakade):
  """{group: [P] local feature id or -1} of one position, as agz_jax.alphago.patterns.local_ids.

  Args:
    board, before, before2: the board now, before the last move, before the move before it.
    dictionaries: {'3x3', 'response', 'diamond': list of canonical (hi, lo) codes}.
    nakade: nakade_ids().
  """
  n = size * size
  states = point_states(board, size, to_play)
  index = {k: {tuple(code): i for i, code in enumerate(codes) if code[0] >= 0}
           for k, codes in dictionaries.items()}
  last = next((p for p in range(n) if board[p] == -to_play and before[p] == 0), None)
  prior = next((p for p in range(n) if before[p] == to_play and before2[p] == 0), None)
  taken = [int(before[p] == to_play and board[p] == 0) for p in range(n)]
  groups = {g: [-1] * n for g in ("response", "save_atari", "neighbour", "nakade",
                                  "response_pattern", "pattern_3x3", "self_atari",
                                  "distance_1", "distance_2", "pattern_diamond")}
  for p in range(n):
    if states[p] != EMPTY_POINT:
      continue
    r, c = divmod(p, size)
    total, own_atari = 0, False
    for s in read(states, size, p, ORTHOGONAL):
      if s == EMPTY_POINT:
        total += 1
      elif s == OPP:  # an opponent chain in atari: captured
        total += 1
      elif s == OWN:
        own_atari = True
      elif OWN < s < OPP:
        total += s - OWN
    groups["save_atari"][p] = 0 if own_atari and total >= 2 else -1
    groups["self_atari"][p] = 0 if total <= 1 else -1
    groups["pattern_3x3"][p] = index["3x3"].get(canonical_at(states, size, p, RING), -1)
    groups["pattern_diamond"][p] = index["diamond"].get(canonical_at(states, size, p, DIAMOND), -1)
    for name, move in (("distance_1", last), ("distance_2", prior)):
      if move is not None:
        d = abs(r - move // size) + abs(c - move % size)
        groups[name][p] = min(d, 17) - 1
    if last is not None:
      dr, dc = r - last // size, c - last % size
      if max(abs(dr), abs(dc)) == 1:
        groups["neighbour"][p] = 0 if abs(dr) + abs(dc) == 1 else 1
      if (dr, dc) in DIAMOND:
        code = canonical_at(states, size, last, DIAMOND, centre=True, slot_point=p)
        groups["response_pattern"][p] = index["response"].get(code, -1)
        groups["response"][p] = 0 if groups["response_pattern"][p] >= 0 else -1
    if taken[p] and 3 <= sum(taken) <= 6:
      groups["nakade"][p] = nakade[canonical_at(taken, size, p, DIAMOND, centre=True, off=0)]
  return groups
