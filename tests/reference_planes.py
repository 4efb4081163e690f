"""A slow, plain pure-Python reference of the AlphaGo input feature planes (48 or 49 planes).

Everything is computed from first principles on a flat board list (1 black, -1 white, 0 empty;
point = row * size + col, row 0 at the top) with flood fills and sets; nothing is cached between
points and nothing is vectorised.  X is the player to move, O the opponent.  Planes, 0-based:

   0 X stones, 1 O stones, 2 empty points, 3 all ones.
   4..11 turns since a stone's point last changed (1..7, plane 11: 8 or more, or never).
  12..19 liberties of the stone's chain (1..7, 8+).
  20..27 capture size of X's play at a legal point (0..6, 7+).
  28..35 self-atari size: the size of X's chain after the play when it has one liberty (1..7, 8+).
  36..43 liberties of X's chain after the play (1..7, 8+).
  44 ladder capture, 45 ladder escape.
  46 sensibleness: legal and not an eye of X.
  47 all zeros.
  48 (49 planes only) all ones when X is black.

A "play" of colour c at x: put c at x, remove every chain of -c next to x left without a liberty;
the play is suicide (illegal) if the chain of x then has no liberty.  Legal points come from the
game's legal mask (empty, not suicide, not a positional-superko repeat); inside ladder reading
superko is ignored.

Ladder reading, read(board, C, escaper e): C is a chain of colour e with exactly one liberty and e
is to move; the chaser is h = -e.  Read the plain way, as a game: e tries every move that could
save C, its liberty and the last liberty of every h chain next to C that is in atari; a try
works if it is not suicide and C then has 3 or more liberties, or exactly 2 and no atari of h
works.  h tries both liberties of C; an atari works if it is not suicide, leaves C one
liberty, and no try of e then works.  C is CAPTURED if no try of e works, else ESCAPED.  At most
2 * size moves of e are read on any line; deeper, the ladder counts as ESCAPED; so does a reading
that has tried 64 * size moves, e's in point order, h's atari on the liberty x with the larger
val(x) first (the smaller point on a tie), val(x) being the number of empty points next to {x},
C and every e chain next to x, x itself not counted.  Superko is
ignored, but not simple ko: a play may not retake a ko (capture one stone with a lone stone
that is then in atari) just made by the other side's previous play.

Ladder capture at a legal point m: some O chain next to m has exactly 2 liberties, and after
X's play at m it has one liberty and reading it (O to move) gives CAPTURED.  Ladder escape at a
legal point m: some X chain next to m is in atari, and after X's play at m the chain G of m has 3
or more liberties, or exactly 2 and no atari of O on G works (X's play at m counts as the first
of X's 2 * size moves).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import BLACK, EMPTY, neighbours_table  # noqa: E402

CAPTURED = "captured"
ESCAPED = "escaped"


def _bucket_names(prefix, first, count):
  """[prefix_first, ..., prefix_{first+count-2}, prefix_{first+count-1}plus]."""
  names = [f"{prefix}_{first + i}" for i in range(count - 1)]
  return names + [f"{prefix}_{first + count - 1}plus"]


PLANE_NAMES = (
    ["own_stones", "opponent_stones", "empty", "ones"]
    + _bucket_names("turns_since", 1, 8)
    + _bucket_names("liberties", 1, 8)
    + _bucket_names("capture_size", 0, 8)
    + _bucket_names("self_atari", 1, 8)
    + _bucket_names("liberties_after", 1, 8)
    + ["ladder_capture", "ladder_escape", "sensibleness", "zeros", "player_is_black"]
)
assert len(PLANE_NAMES) == 49

# First plane of each group of planes.
OWN, OPPONENT, EMPTY_POINTS, ONES = 0, 1, 2, 3
TURNS_SINCE = 4
LIBERTIES = 12
CAPTURE_SIZE = 20
SELF_ATARI = 28
LIBERTIES_AFTER = 36
LADDER_CAPTURE = 44
LADDER_ESCAPE = 45
SENSIBLENESS = 46
ZEROS = 47
PLAYER_IS_BLACK = 48


# ---------------------------------------------------------------------------- board helpers


def chain_at(board, neighbours, p):
  """(stones, liberties) of the chain holding the stone at p, as sets of points."""
  colour = board[p]
  assert colour != EMPTY, f"no stone at point {p}"
  stones = {p}
  frontier = [p]
  while frontier:
    q = frontier.pop()
    for r in neighbours[q]:
      if board[r] == colour and r not in stones:
        stones.add(r)
        frontier.append(r)
  liberties = {r for q in stones for r in neighbours[q] if board[r] == EMPTY}
  return stones, liberties


def play_stone(board, neighbours, colour, x):
  """The board after `colour` plays at the empty point x, and the number of stones captured.

  Returns:
    (new board as a list, captured count), or None when the play is suicide.
  """
  assert board[x] == EMPTY, f"point {x} is not empty"
  new = list(board)
  new[x] = colour
  captured = 0
  for q in neighbours[x]:
    if new[q] == -colour:
      stones, liberties = chain_at(new, neighbours, q)
      if not liberties:
        for s in stones:
          new[s] = EMPTY
        captured += len(stones)
  _, liberties = chain_at(new, neighbours, x)
  if not liberties:
    return None
  return new, captured


def merged_liberties(board, neighbours, x, chain_stones):
  """val(x) of the ladder reading: the empty points next to {x}, the given chain and every chain
  of the same colour next to x, x itself not counted, on the board as it is (no captures)."""
  colour = board[next(iter(chain_stones))]
  union = {x} | set(chain_stones)
  for q in neighbours[x]:
    if board[q] == colour:
      union |= chain_at(board, neighbours, q)[0]
  empties = {r for s in union for r in neighbours[s] if board[r] == EMPTY}
  empties.discard(x)
  return len(empties)


def is_eye(board, neighbours, size, m, colour):
  """True when the empty point m is an eye of `colour`: every on-board orthogonal neighbour is a
  stone of `colour`, and (opponent stones on the on-board diagonals) + (1 when m is on the edge,
  i.e. has a diagonal off the board) < 2."""
  if board[m] != EMPTY:
    return False
  if any(board[q] != colour for q in neighbours[m]):
    return False
  row, col = divmod(m, size)
  opponent_diagonals = 0
  off_board = 0
  for dr in (-1, 1):
    for dc in (-1, 1):
      r, c = row + dr, col + dc
      if 0 <= r < size and 0 <= c < size:
        opponent_diagonals += board[r * size + c] == -colour
      else:
        off_board = 1
  return opponent_diagonals + off_board < 2


# ---------------------------------------------------------------------------- ladders


class _OutOfTries(Exception):
  """The reading tried more moves than it may."""


def read_ladder(board, neighbours, stone, max_rounds, start_at_chaser=False, stats=None,
                max_tries=None):
  """Reads a ladder on the chain holding the stone at point `stone` (the escaper's colour is the
  colour of that stone), the plain way: every escaper move and every atari, recursively.

  Args:
    board: the board (not modified).
    neighbours: neighbours_table(size).
    stone: a point of the chain C.  Unless start_at_chaser, C must have exactly one liberty and
      its owner is to move.
    max_rounds: the most moves of the escaper read (2 * size); with start_at_chaser the move
      just played counts as the first.
    start_at_chaser: C has exactly two liberties and the chaser is to move.
    max_tries: moves tried after which the reading counts as ESCAPED (default 64 * size).
    stats: optional collections.Counter; counts readings ('reads'), their results, the most
      escaper moves on one line of each reading ('rounds=K') and the escaper's tries that
      capture a chaser chain rather than extend ('capture tries').

  Returns:
    CAPTURED or ESCAPED.
  """
  escaper = board[stone]
  deepest = [0]
  tries = [0]
  if max_tries is None:
    max_tries = 64 * int(round(len(board) ** 0.5))

  def escaper_moves(position):
    """The escaper's tries: C's liberty and the last liberty of each chaser chain in atari
    next to C."""
    stones, liberties = chain_at(position, neighbours, stone)
    tries = set(liberties)
    for q in {r for s in stones for r in neighbours[s] if position[r] == -escaper}:
      _, chaser_liberties = chain_at(position, neighbours, q)
      if len(chaser_liberties) == 1:
        tries |= chaser_liberties
    return sorted(tries)

  def play(position, colour, x, ko):
    """(the position after the play, the ko point it makes), or None for suicide or ko."""
    if x == ko:
      return None
    tries[0] += 1
    if tries[0] > max_tries:
      raise _OutOfTries
    played = play_stone(position, neighbours, colour, x)
    if played is None:
      return None
    after, captured = played
    taken = [q for q in neighbours[x] if position[q] == -colour and after[q] == EMPTY]
    stones, liberties = chain_at(after, neighbours, x)
    if captured == 1 and len(stones) == 1 and liberties == set(taken):
      return after, taken[0]
    return after, None

  def escaper_to_move(position, moves_made, ko):
    """The escaper, in atari, to move: ESCAPED if some move of its works."""
    if moves_made >= max_rounds:
      return ESCAPED
    deepest[0] = max(deepest[0], moves_made + 1)
    liberty = chain_at(position, neighbours, stone)[1]
    for x in escaper_moves(position):
      played = play(position, escaper, x, ko)
      if played is None:
        continue
      if stats is not None and x not in liberty:
        stats["capture tries"] += 1
      liberties = len(chain_at(played[0], neighbours, stone)[1])
      if liberties >= 3:
        return ESCAPED
      if liberties == 2 and chaser_to_move(played[0], moves_made + 1, played[1]) == ESCAPED:
        return ESCAPED
    return CAPTURED

  def chaser_to_move(position, moves_made, ko):
    """The chaser to move, C with two liberties: CAPTURED if some atari works."""
    stones, liberties = chain_at(position, neighbours, stone)
    u, v = sorted(liberties)
    first = u if merged_liberties(position, neighbours, u, stones) >= merged_liberties(
        position, neighbours, v, stones) else v
    for x in (first, u + v - first):
      played = play(position, -escaper, x, ko)
      if played is None or len(chain_at(played[0], neighbours, stone)[1]) >= 2:
        continue
      if escaper_to_move(played[0], moves_made, played[1]) == CAPTURED:
        return CAPTURED
    return ESCAPED

  board = list(board)
  try:
    if start_at_chaser:
      deepest[0] = 1
      result = chaser_to_move(board, 1, None)
    else:
      result = escaper_to_move(board, 0, None)
  except _OutOfTries:
    result = ESCAPED
  if stats is not None:
    stats["reads"] += 1
    stats[result] += 1
    stats[f"rounds={deepest[0]}"] += 1
  return result


def ladder_capture(board, neighbours, size, me, m, stats=None):
  """Plane 44 at the legal point m (see the module docstring)."""
  after = play_stone(board, neighbours, me, m)[0]
  seen = set()
  for q in neighbours[m]:
    if board[q] != -me or q in seen:
      continue
    stones, liberties = chain_at(board, neighbours, q)
    seen |= stones
    if len(liberties) != 2:
      continue
    if after[q] != -me:  # the chain no longer exists
      continue
    _, liberties_after = chain_at(after, neighbours, q)
    if len(liberties_after) != 1:
      continue
    if read_ladder(after, neighbours, q, 2 * size, stats=stats) == CAPTURED:
      return True
  return False


def ladder_escape(board, neighbours, size, me, m, stats=None):
  """Plane 45 at the legal point m (see the module docstring)."""
  in_atari = any(board[q] == me and len(chain_at(board, neighbours, q)[1]) == 1 for q in neighbours[m])
  if not in_atari:
    return False
  after = play_stone(board, neighbours, me, m)[0]
  _, liberties = chain_at(after, neighbours, m)
  if len(liberties) >= 3:
    return True
  if len(liberties) <= 1:
    return False
  return read_ladder(after, neighbours, m, 2 * size, start_at_chaser=True, stats=stats) == ESCAPED


# ---------------------------------------------------------------------------- planes


def turns_since(boards, move_count, p):
  """Age of the stone at p: the smallest k in 1..7 (k <= move_count) such that the board k moves
  ago did not hold the same value at p, or None.  boards[-1] is the current board and
  boards[-1 - k] the board k moves ago (before the k-th most recent move)."""
  current = boards[-1][p]
  for k in range(1, 8):
    if k > move_count:
      return None
    if boards[-1 - k][p] != current:
      return k
  return None


def reference_planes(ref, num_planes=49, stats=None):
  """The AlphaGo input planes of a reference game, from the point of view of the player to move.

  Args:
    ref: a reference.ReferenceGo (its board, boards history, move_count, to_play and legal mask
      are used).
    num_planes: 48, or 49 for the extra colour plane.
    stats: optional collections.Counter passed to every ladder reading.

  Returns:
    [size, size, num_planes] float32 numpy array.
  """
  assert num_planes in (48, 49), num_planes
  size = ref.size
  num_points = size * size
  neighbours = neighbours_table(size)
  board = list(ref.board)
  assert tuple(board) == tuple(ref.boards[-1])
  me = ref.to_play
  legal = ref.legal_mask()[:num_points]
  planes = np.zeros((num_planes, num_points), np.float32)

  planes[ONES, :] = 1
  if num_planes == 49 and me == BLACK:
    planes[PLAYER_IS_BLACK, :] = 1

  for p in range(num_points):
    if board[p] == EMPTY:
      planes[EMPTY_POINTS, p] = 1
      continue
    planes[OWN if board[p] == me else OPPONENT, p] = 1
    age = turns_since(ref.boards, ref.move_count, p)
    planes[TURNS_SINCE + (7 if age is None else age - 1), p] = 1
    _, liberties = chain_at(board, neighbours, p)
    planes[LIBERTIES + min(len(liberties), 8) - 1, p] = 1

  for m in range(num_points):
    if not legal[m]:
      continue
    played = play_stone(board, neighbours, me, m)
    assert played is not None, f"the legal point {m} is suicide"
    after, captured = played
    planes[CAPTURE_SIZE + min(captured, 7), m] = 1
    stones, liberties = chain_at(after, neighbours, m)
    if len(liberties) == 1:
      planes[SELF_ATARI + min(len(stones), 8) - 1, m] = 1
    planes[LIBERTIES_AFTER + min(len(liberties), 8) - 1, m] = 1
    planes[LADDER_CAPTURE, m] = ladder_capture(board, neighbours, size, me, m, stats)
    planes[LADDER_ESCAPE, m] = ladder_escape(board, neighbours, size, me, m, stats)
    planes[SENSIBLENESS, m] = not is_eye(board, neighbours, size, m, me)

  return planes.T.reshape(size, size, num_planes)

