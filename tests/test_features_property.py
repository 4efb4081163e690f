"""AlphaGo feature planes (go.features with encoding "alphago49") against a pure-Python reference.

tests/reference_planes.py computes every plane with flood fills and a plain ladder reader; the
first tests here check that reference by hand on small drawn positions, the property test then
compares it with go.features plane by plane on many positions of random games, and the last test
gives go.features batches of one position repeated whose ladders need many reading slots (the
planes of a position must not depend on the rest of its batch).

The random games are played with tests/reference.py and with go.step (jit + vmap, a batch of games
at once), from an empty board or from random setup stones seeded with ladder shapes.  The move
policy is biased towards tactics so that the ladder, capture and self-atari planes are often set:
with probability TACTICAL_PROB a move is drawn among the captures, the ataris of O chains of two
liberties and the extensions of X chains in atari, otherwise uniformly among the legal moves
(pass with probability PASS_PROB, so that passes show up in the turns-since planes).

The number of games scales with the environment variable AGZ_PROPERTY_GAMES_SCALE (default 1).
"""

import collections
import dataclasses
import functools
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import BLACK, WHITE, ReferenceGo, find_groups, neighbours_table  # noqa: E402
from reference_planes import PLANE_NAMES, read_ladder, reference_planes  # noqa: E402

from agz_jax import alphago, go  # noqa: E402

SCALE = float(os.environ.get("AGZ_PROPERTY_GAMES_SCALE", "1"))
COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips the letter I.
PASS_PROB = 0.04
TACTICAL_PROB = 0.6
LADDER_CAPTURE = PLANE_NAMES.index("ladder_capture")
LADDER_ESCAPE = PLANE_NAMES.index("ladder_escape")


@dataclasses.dataclass(frozen=True)
class Run:
  """The games of one board size: `games` games played together for `moves` moves each, planes
  compared at the start and then every `every` moves; `setup` of them start from setup stones."""
  games: int
  setup: int
  moves: int
  every: int


RUNS = {
    7: Run(games=32, setup=16, moves=48, every=3),
    9: Run(games=32, setup=16, moves=64, every=4),
    13: Run(games=16, setup=10, moves=96, every=8),
    19: Run(games=8, setup=6, moves=160, every=20),
}

# Per size at scale 1: points that must be set in each ladder plane, and ladder readings that
# must last at least LONG_READ rounds, or the test could be checking little more than zeros.
MIN_LADDER_POINTS = 25
MIN_LONG_READS = 10
# Escaper moves that capture a chaser chain in atari, tried by the reference's readings.
MIN_CAPTURE_TRIES = 100
LONG_READ = 5


def gtp(size, point):
  row, col = divmod(int(point), size)
  return f"{COLUMNS[col]}{size - row}"


def vertex(size, text):
  """GTP vertex -> point index."""
  return (size - int(text[1:])) * size + COLUMNS.index(text[0])


def vertices(plane, size):
  """The set of GTP vertices where a [size, size] plane is set."""
  rows, cols = np.nonzero(np.asarray(plane))
  return {f"{COLUMNS[c]}{size - r}" for r, c in zip(rows, cols)}


def drawn(text, to_play=BLACK):
  """A ReferenceGo set up from an ASCII board (X black, O white, . empty; top row first)."""
  size, black, white = go.parse_board(text)
  return ReferenceGo(size, 7.5, 2 * size * size, black=black, white=white, to_play=to_play)


def plane(ref, name):
  """The reference plane `name` of a position, as a set of GTP vertices."""
  return vertices(reference_planes(ref)[:, :, PLANE_NAMES.index(name)], ref.size)


# ---------------------------------------------------------------------------- the reference by hand


# X to play; O E5 has two liberties (E4, F5) and X D5, E6, F4 around it.  X E4 starts a ladder that
# runs to the top right, X F5 one that runs to the bottom left; on an empty board both work.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . X . . . .
    . . . X O . . . .
    . . . . . X . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

# The same with an O ladder breaker at H8, on the path of the ladder to the top right.
LADDER_BREAKER_H8 = """
    . . . . . . . . .
    . . . . . . . O .
    . . . . . . . . .
    . . . . X . . . .
    . . . X O . . . .
    . . . . . X . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

# O to play after X F5: O E5 is in atari and extends at E4 into the ladder to the bottom left.
ESCAPE = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . X . . . .
    . . . X O X . . .
    . . . . . X . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

# The same with an O ladder breaker at C3, on the path of the ladder to the bottom left.
ESCAPE_BREAKER_C3 = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . X . . . .
    . . . X O X . . .
    . . . . . X . . .
    . . O . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


# Two 7x7 positions, white (O) to play, whose ladders take long readings with many branches
# (O can capture X stones along the way); the random games also start from them.
DEPTH_14 = """
    O O O X O . .
    . . . . . . .
    . . O X . . .
    X O O . O . O
    . O X O X . O
    O . X . . O .
    X X O . . X O
"""

DEPTH_15 = """
    X O . . . . O
    X X . . . . X
    . . O . . . O
    . . X . . . .
    O . . . . . O
    O . . . . . O
    X . . O O . O
"""


def test_plane_names():
  assert len(PLANE_NAMES) == len(set(PLANE_NAMES)) == 49
  assert PLANE_NAMES[4] == "turns_since_1" and PLANE_NAMES[11] == "turns_since_8plus"
  assert PLANE_NAMES[12] == "liberties_1" and PLANE_NAMES[19] == "liberties_8plus"
  assert PLANE_NAMES[20] == "capture_size_0" and PLANE_NAMES[27] == "capture_size_7plus"
  assert PLANE_NAMES[28] == "self_atari_1" and PLANE_NAMES[36] == "liberties_after_1"
  assert PLANE_NAMES[44:] == ["ladder_capture", "ladder_escape", "sensibleness", "zeros", "player_is_black"]


def test_reference_classic_ladder_is_captured():
  ref = drawn(LADDER)
  assert plane(ref, "ladder_capture") == {"E4", "F5"}
  assert plane(ref, "ladder_escape") == set()
  stats = collections.Counter()
  reference_planes(ref, stats=stats)
  # Two readings, one per atari, each to the edge of the board: seven rounds.
  assert stats == {"reads": 2, "captured": 2, "rounds=7": 2}


def test_reference_ladder_breaker_saves_the_escaper():
  ref = drawn(LADDER_BREAKER_H8)
  assert plane(ref, "ladder_capture") == {"F5"}


def test_reference_ladder_escape():
  # Extending at E4 gives two liberties (D4, E3) and the ladder works: no escape.
  ref = drawn(ESCAPE, to_play=WHITE)
  assert plane(ref, "ladder_escape") == set()
  assert plane(ref, "liberties_after_2") >= {"E4"}
  assert plane(ref, "liberties_1") == {"E5"}
  # With the breaker the same extension escapes.
  ref = drawn(ESCAPE_BREAKER_C3, to_play=WHITE)
  assert plane(ref, "ladder_escape") == {"E4"}
  # The escape reading by hand: after O E4, X (the chaser) is to move.
  for text, expected in ((ESCAPE, "captured"), (ESCAPE_BREAKER_C3, "escaped")):
    ref = drawn(text, to_play=WHITE)
    ref.play(vertex(9, "E4"))
    assert read_ladder(ref.board, ref.neighbours, vertex(9, "E4"), 18, start_at_chaser=True) == expected


def test_reference_ladder_depth_limit():
  # X E4 starts the ladder to the top right: O is captured on its seventh move at the edge,
  # so a reading that stops after six moves counts it as escaped.
  ref = drawn(LADDER)
  ref.play(vertex(9, "E4"))
  stone = vertex(9, "E5")
  assert read_ladder(ref.board, ref.neighbours, stone, 7) == "captured"
  assert read_ladder(ref.board, ref.neighbours, stone, 6) == "escaped"
  # So does one that runs out of tries first (the ladder needs more than 12).
  assert read_ladder(ref.board, ref.neighbours, stone, 7, max_tries=12) == "escaped"


CHASER_IN_ATARI = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X . . . . .
    . O X O X . . . .
    . . . . X . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""

CHASER_IN_ATARI_REFUTED = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . X . X . . . . .
    . O X O X . . . .
    . . . . X . . . .
    . . . . . . . . .
    . . X . . . . . .
    . . . . . . . . .
"""


def test_reference_escaper_captures_a_chaser_stone():
  # O D5 chased by X E5; with O B5, X C5 falls into atari once O reaches C4: O captures it
  # (at C6) and escapes. With X B6 and C2 as well the capture is tried and fails.
  for text, expected in ((CHASER_IN_ATARI, "escaped"), (CHASER_IN_ATARI_REFUTED, "captured")):
    ref = drawn(text, to_play=WHITE)
    stats = collections.Counter()
    assert read_ladder(ref.board, ref.neighbours, vertex(9, "D5"), 18, stats=stats) == expected
    assert stats["capture tries"] >= 1


ATARI = """
    . . . . .
    . . X . .
    . X O X .
    . . . . .
    . . . . .
"""


def test_reference_escape_by_three_liberties():
  ref = drawn(ATARI, to_play=WHITE)
  # O C3 is in atari; extending at C2 gives three liberties (B2, D2, C1): no reading needed.
  assert plane(ref, "ladder_escape") == {"C2"}
  assert plane(ref, "liberties_after_3") >= {"C2"}
  # X to play instead: C2 captures one stone; O has one liberty, so there is no ladder capture.
  ref = drawn(ATARI)
  assert plane(ref, "capture_size_1") == {"C2"}
  assert plane(ref, "ladder_capture") == set()


def test_reference_capture_size_and_liberties():
  ref = drawn("""
      . . . . .
      . . . . .
      . X X . .
      X O O X .
      . X . . .
  """)
  names = {name: plane(ref, name) for name in PLANE_NAMES}
  assert names["liberties_1"] == {"B2", "C2"}
  assert names["liberties_2"] == {"A2", "B1"}
  assert names["liberties_3"] == {"D2"}
  assert names["liberties_4"] == {"B3", "C3"}
  # C1 captures B2 and C2; X C1-B1 then has the liberties A1, B2, C2, D1.
  assert names["capture_size_2"] == {"C1"}
  assert "C1" in names["liberties_after_4"]
  # D3 joins B3-C3 and D2: A3, B4, C4, D4, E3, E2, D1.
  assert "D3" in names["liberties_after_7"]
  # A1 is not an eye: one O diagonal (B2) and the edge make two defects.
  assert "A1" in names["sensibleness"] and "A1" in names["liberties_after_2"]
  legal = {gtp(5, p) for p in range(25) if ref.legal_mask()[p]}
  assert names["sensibleness"] == legal
  assert names["capture_size_0"] == legal - {"C1"}
  assert all(not names[f"self_atari_{k}"] for k in range(1, 8)) and not names["self_atari_8plus"]


def test_reference_self_atari():
  ref = drawn("""
      . . . . .
      . . . . .
      O O . . .
      X X O . .
      . . . . .
  """)
  # A1 leaves A1-A2-B2 with the single liberty B1; B1 leaves two (A1, C1).
  assert plane(ref, "self_atari_3") == {"A1"}
  assert plane(ref, "liberties_after_1") == {"A1"}
  assert {"B1", "C1"} <= plane(ref, "liberties_after_2")


@pytest.mark.parametrize("text, point, is_eye", [
    # A corner point: one defect for the edge.
    (". X . . .\nX X . . .\n. . . . .\n. . . . .\n. . . . .", "A5", True),
    (". X . . .\nX O . . .\n. . . . .\n. . . . .\n. . . . .", "A5", False),
    # A centre point: up to one O diagonal.
    (". . . . .\n. . X . .\n. X . X .\n. . X . .\n. . . . .", "C3", True),
    (". . . . .\n. O X . .\n. X . X .\n. . X . .\n. . . . .", "C3", True),
    (". . . . .\n. O X . .\n. X . X .\n. . X O .\n. . . . .", "C3", False),
    # An edge point: the edge counts one.
    (". . . . .\n. . . . .\n. . . . .\n. . X . .\n. X . X .", "C1", True),
    (". . . . .\n. . . . .\n. . . . .\n. O X . .\n. X . X .", "C1", False),
    # Not every neighbour is X.
    (". . . . .\n. . . . .\n. . . . .\n. . X . .\n. O . X .", "C1", False),
])
def test_reference_eyes_and_sensibleness(text, point, is_eye):
  ref = drawn(text)
  assert ref.legal_mask()[vertex(5, point)]
  assert (point not in plane(ref, "sensibleness")) == is_eye


def test_reference_turns_since_and_colour():
  ref = drawn("""
      X . . . .
      . . . . .
      . . . . .
      . . . . .
      . . . . O
  """)
  for move in ["B4", "C3", "pass", "D4", "B2", "A1", "E5", "pass"]:
    ref.play(25 if move == "pass" else vertex(5, move))
  # Most recent first: pass (1), E5 (2), A1 (3), B2 (4), D4 (5), pass (6), C3 (7), B4 (8).
  ages = {name: plane(ref, name) for name in PLANE_NAMES[4:12]}
  assert ages == {
      "turns_since_1": set(), "turns_since_2": {"E5"}, "turns_since_3": {"A1"},
      "turns_since_4": {"B2"}, "turns_since_5": {"D4"}, "turns_since_6": set(),
      "turns_since_7": {"C3"}, "turns_since_8plus": {"B4", "A5", "E1"},
  }
  assert ref.to_play == BLACK and len(plane(ref, "player_is_black")) == 25
  ref.play(vertex(5, "E4"))
  assert plane(ref, "turns_since_1") == {"E4"} and plane(ref, "turns_since_8plus") >= {"C3", "B4"}
  assert plane(ref, "player_is_black") == set()
  assert plane(ref, "zeros") == set() and len(plane(ref, "ones")) == 25
  assert reference_planes(ref, num_planes=48).shape == (5, 5, 48)


def test_reference_recaptured_stone_is_new():
  # A ko: X takes at C3, both play elsewhere, O takes back at B3.  The age of a stone is counted
  # from the last change of its point, so the recaptured point B3 is one move old.
  ref = drawn("""
      . . . . .
      . X O . .
      X O . O .
      . X O . .
      . . . . .
  """)
  ref.play(vertex(5, "C3"))  # X captures B3
  assert ref.board[vertex(5, "B3")] == 0
  ref.play(vertex(5, "E5"))  # O elsewhere (retaking at once would repeat the position)
  ref.play(vertex(5, "E1"))
  ref.play(vertex(5, "B3"))  # O captures C3
  assert ref.board[vertex(5, "C3")] == 0
  ages = {name: plane(ref, name) for name in PLANE_NAMES[4:12]}
  assert ages["turns_since_1"] == {"B3"}
  assert ages["turns_since_2"] == {"E1"}
  assert ages["turns_since_3"] == {"E5"}


# ---------------------------------------------------------------------------- the property test


@functools.cache
def compiled(cfg):
  """(init, step, features) for a batch of games, jitted; compiled once per config.

  init takes [B, K] black and [B, K] white setup points (a list padded by repeating its points)
  and [B] colours to play.  features is given the whole batch, as search and self-play call it
  (it reads the ladders of the batch together), not vmapped over single games.
  """
  init = jax.jit(jax.vmap(lambda b, w, t: go.init(cfg, black=b, white=w, to_play=t)))
  step = jax.jit(jax.vmap(lambda s, a: go.step(cfg, s, a)))
  features = jax.jit(lambda s: go.features(cfg, s, "alphago49"))
  return init, step, features


def initial_states(cfg, setups):
  """The GoStates of a batch of setups, with one compiled call; every setup must have stones of
  both colours (lists are padded by repeating points, which puts the same stone twice)."""
  init = compiled(cfg)[0]
  width = max(len(points) for b, w, _ in setups for points in (b, w))

  def padded(points):
    assert points, "a setup needs stones of both colours"
    return [points[k % len(points)] for k in range(width)]

  return init(jnp.asarray([padded(b) for b, _, _ in setups], jnp.int32),
              jnp.asarray([padded(w) for _, w, _ in setups], jnp.int32),
              jnp.asarray([t for _, _, t in setups], jnp.int8))


def place(board, neighbours, point, colour):
  """Puts a setup stone unless the point is taken or some chain would have no liberty."""
  if board[point] != 0:
    return False
  board[point] = colour
  groups, _ = find_groups(board, neighbours)
  if all(g.liberties for g in groups):
    return True
  board[point] = 0
  return False


def ladder_setup(size, rng):
  """Random setup stones around one or two ladder seeds.

  A seed is a chain of one stone, stones of the other colour on two sides and on one diagonal
  (the shape of LADDER, in one of four orientations): the player to move can start a ladder on
  it, or, when the seed's stone is the mover's and a third side is taken too, must escape.
  Scattered stones of both colours then make ladder breakers, ladder makers and other tactics.

  Returns:
    (black points, white points, colour to play).
  """
  num_points = size * size
  neighbours = neighbours_table(size)
  board = [0] * num_points
  to_play = BLACK if rng.random() < 0.5 else WHITE
  for _ in range(int(rng.integers(1, 3))):
    r, c = (int(x) for x in rng.integers(1, size - 1, size=2))
    dr, dc = (int(x) for x in rng.choice([-1, 1], size=2))
    escaper = to_play if rng.random() < 0.5 else -to_play
    stones = [(r, c, escaper), (r - dr, c, -escaper), (r, c - dc, -escaper), (r + dr, c + dc, -escaper)]
    if escaper == to_play:
      stones.append((r + dr, c, -escaper))
    for row, col, colour in stones:
      place(board, neighbours, row * size + col, colour)
  density = rng.uniform(0.0, 0.15)
  for p in rng.permutation(num_points):
    if rng.random() < density:
      place(board, neighbours, int(p), BLACK if rng.random() < 0.5 else WHITE)
  black = [p for p in range(num_points) if board[p] == BLACK]
  white = [p for p in range(num_points) if board[p] == WHITE]
  return black, white, to_play


def tactical_moves(ref):
  """The legal captures, ataris (on O chains of two liberties) and extensions of X chains in
  atari of the player to move."""
  me = ref.to_play
  groups, _ = find_groups(ref.board, ref.neighbours)
  legal = ref.legal_mask()
  moves = set()
  for g in groups:
    if (g.colour == -me and len(g.liberties) <= 2) or (g.colour == me and len(g.liberties) == 1):
      moves |= g.liberties
  return sorted(p for p in moves if legal[p])


def choose_action(ref, rng):
  """Pass with probability PASS_PROB; else a tactical move with probability TACTICAL_PROB (if
  there is one); else a uniformly random legal point (pass if there is none)."""
  if ref.terminated or rng.random() < PASS_PROB:
    return ref.pass_action
  tactical = tactical_moves(ref)
  if tactical and rng.random() < TACTICAL_PROB:
    return int(rng.choice(tactical))
  legal = [p for p, ok in enumerate(ref.legal_mask()[:-1]) if ok]
  return int(rng.choice(legal)) if legal else ref.pass_action


def describe(ref, setup, expected, got):
  """The message of a mismatch: each differing plane with its points, the position and its game."""
  n = ref.size
  lines = [f"\nMISMATCH size={n}, to play: {'black' if ref.to_play == BLACK else 'white'}, "
           f"move_count={ref.move_count}, terminated={ref.terminated}"]
  for k in np.flatnonzero((expected != got).reshape(-1, expected.shape[-1]).any(axis=0)):
    only_ref = sorted(vertices((expected[:, :, k] > got[:, :, k]), n))
    only_jax = sorted(vertices((got[:, :, k] > expected[:, :, k]), n))
    lines.append(f"plane {k} {PLANE_NAMES[k]}: set only in the reference at {only_ref}, "
                 f"only in go.features at {only_jax}")
  moves = " ".join("pass" if a == ref.pass_action else gtp(n, a) for a in ref.moves)
  lines.append(f"setup: black={[gtp(n, p) for p in setup[0]]} white={[gtp(n, p) for p in setup[1]]} "
               f"first to play={'black' if setup[2] == BLACK else 'white'}")
  lines.append(f"moves ({len(ref.moves)}): {moves}")
  lines.append(f"board (X black, O white):\n{ref.to_ascii()}")
  return "\n".join(lines)


def compare(refs, setups, got, totals):
  """Asserts that go.features of a batch ([B, N, N, 49]) equals the reference planes."""
  got = np.asarray(got)
  for i, ref in enumerate(refs):
    expected = reference_planes(ref, 49, stats=totals)
    if not np.array_equal(got[i], expected):
      raise AssertionError(describe(ref, setups[i], expected, got[i]))
    totals["positions"] += 1
    totals["ladder capture points"] += int(expected[:, :, LADDER_CAPTURE].sum())
    totals["ladder escape points"] += int(expected[:, :, LADDER_ESCAPE].sum())
    totals["positions with a ladder capture"] += bool(expected[:, :, LADDER_CAPTURE].any())
    totals["positions with a ladder escape"] += bool(expected[:, :, LADDER_ESCAPE].any())


def play_and_compare(size, run, seed, totals):
  """Plays run.games random games in both implementations and compares the planes."""
  cfg = go.GoConfig(size=size)
  _, step, features = compiled(cfg)
  rng = np.random.default_rng(seed)
  setups = []
  if size == 7:  # ladders read to the depth limit, with either side to play
    for text in (DEPTH_14, DEPTH_15):
      _, black, white = go.parse_board(text)
      setups += [(black, white, WHITE), (black, white, BLACK)]
  setups += [ladder_setup(size, rng) for _ in range(run.setup - len(setups))]
  num_empty = max(0, run.games - len(setups))  # games from an empty board
  state = jax.tree_util.tree_map(
      lambda s, e: jnp.concatenate([s, jnp.broadcast_to(e, (num_empty,) + e.shape)]),
      initial_states(cfg, setups), go.init(cfg))
  setups += [((), (), BLACK)] * num_empty
  refs = [ReferenceGo(size, cfg.komi, cfg.max_moves, black=b, white=w, to_play=t) for b, w, t in setups]
  compare(refs, setups, features(state), totals)
  for move in range(1, run.moves + 1):
    actions = np.array([choose_action(ref, rng) for ref in refs], np.int32)
    for ref, action in zip(refs, actions):
      ref.play(int(action))
    state = step(state, jnp.asarray(actions))
    if move % run.every == 0 or move == run.moves:
      compare(refs, setups, features(state), totals)


@pytest.mark.slow
@pytest.mark.parametrize("size", sorted(RUNS))
def test_alphago_planes_match_reference(size):
  start = time.time()
  run = RUNS[size]
  run = dataclasses.replace(run, games=max(2, round(run.games * SCALE)),
                            setup=max(1, round(run.setup * SCALE)))
  totals = collections.Counter()
  play_and_compare(size, run, seed=7000 + size, totals=totals)
  deepest = max((int(k[7:]) for k in totals if k.startswith("rounds=")), default=0)
  print(f"\nsize {size}: {totals['positions']} positions, "
        f"ladder capture points {totals['ladder capture points']} "
        f"(in {totals['positions with a ladder capture']} positions), "
        f"ladder escape points {totals['ladder escape points']} "
        f"(in {totals['positions with a ladder escape']} positions), "
        f"{totals['reads']} ladder readings ({totals['captured']} captured, deepest {deepest} rounds, "
        f"{totals['capture tries']} escaper captures tried), "
        f"{time.time() - start:.1f}s")
  deep = sum(v for k, v in totals.items() if k.startswith("rounds=") and int(k[7:]) >= LONG_READ)
  full = SCALE >= 1  # a reduced run only has to meet each kind once
  assert totals["ladder capture points"] >= (MIN_LADDER_POINTS if full else 1), totals
  assert totals["ladder escape points"] >= (MIN_LADDER_POINTS if full else 1), totals
  assert deep >= (MIN_LONG_READS if full else 1), totals
  assert totals["capture tries"] >= (MIN_CAPTURE_TRIES if full else 1), totals


# X to play on 19x19: 18 O stones of two liberties each; an atari on any of them is a ladder
# capture (the extension has no liberty), which makes 36 (move, chain) candidates on 20 moves.
CROWDED = """
    . O . O . O . O . O . O . O . O . O .
    X X X X X X X X X X X X X X X X X X X
    . O . O . O . O . O . O . O . O . O .
    X X X X X X X X X X X X X X X X X X X
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
    . . . . . . . . . . . . . . . . . . .
"""


@pytest.mark.parametrize("size, text, to_play", [(7, DEPTH_14, WHITE), (19, CROWDED, BLACK)],
                         ids=["long_ladder_7x7", "many_candidates_19x19"])
def test_ladder_planes_do_not_depend_on_the_batch(size, text, to_play):
  """A batch of copies of one position whose ladders need many reading slots (a reading to the
  depth limit; many ladder candidates): every copy must still get the position's planes.

  go.features reads the ladders of a whole batch together, but by the spec the planes of a
  position do not depend on the other positions of the batch.
  """
  cfg = go.GoConfig(size=size)
  _, black, white = go.parse_board(text)
  ref = ReferenceGo(size, cfg.komi, cfg.max_moves, black=black, white=white, to_play=to_play)
  expected = reference_planes(ref)
  batch = max(2, round(RUNS[size].games * SCALE))  # the property test's batch: compiled once
  setups = [(black, white, to_play)] * batch
  got = np.asarray(compiled(cfg)[2](initial_states(cfg, setups)))
  bad = [i for i in range(batch) if not np.array_equal(got[i], expected)]
  if bad:
    raise AssertionError(f"{len(bad)} of {batch} copies in one batch differ; the first, copy {bad[0]}:"
                         + describe(ref, setups[0], expected, got[bad[0]]))


@pytest.mark.slow
@pytest.mark.parametrize("lanes, shrink", [(2.0, 1), (0.02, 1), (0.5, 2), (0.25, 8)],
                         ids=["many_lanes", "one_lane", "narrowing_by_2", "narrowing_by_8"])
def test_ladder_planes_do_not_depend_on_the_lanes(lanes, shrink):
  """How many lanes read a batch's ladders, and how they narrow for the last long readings
  (alphago.LadderSettings' lanes and shrink), only changes the speed: the planes must be the
  default's.

  The batch mixes readings to the depth limit with many short ones, so that lanes fall idle,
  take new ladders and narrow while long readings go on.
  """
  cfg = go.GoConfig(size=7)
  rng = np.random.default_rng(5)
  setups = []
  for text in (DEPTH_14, DEPTH_15):
    _, black, white = go.parse_board(text)
    setups += [(black, white, WHITE), (black, white, BLACK)]
  setups += [ladder_setup(7, rng) for _ in range(28)]
  states = initial_states(cfg, setups)
  expected = np.asarray(compiled(cfg)[2](states))
  assert expected[..., LADDER_CAPTURE].sum() >= 5 and expected[..., LADDER_ESCAPE].sum() >= 5
  ladder = alphago.LadderSettings(reader="device", lanes=lanes, shrink=shrink)
  got = np.asarray(jax.jit(lambda s: go.features(cfg, s, "alphago49", ladder=ladder))(states))
  np.testing.assert_array_equal(got, expected)


@pytest.mark.slow
def test_ladder_planes_do_not_depend_on_the_chunks(monkeypatch):
  """Starting the ladders a few at a time (many refills of the reader's queue, some chunks all
  decided where they start, lanes waiting for the next chunk) gives the default's planes."""
  cfg = go.GoConfig(size=7)
  rng = np.random.default_rng(6)
  _, black, white = go.parse_board(DEPTH_14)
  setups = [(black, white, WHITE)] + [ladder_setup(7, rng) for _ in range(15)]
  states = initial_states(cfg, setups)
  expected = np.asarray(compiled(cfg)[2](states))
  assert expected[..., LADDER_CAPTURE].sum() >= 3 and expected[..., LADDER_ESCAPE].sum() >= 3
  ladders = alphago.ladders
  monkeypatch.setattr(ladders, "read", functools.partial(ladders.read, chunk=3))
  got = np.asarray(jax.jit(lambda s: go.features(cfg, s, "alphago49"))(states))
  np.testing.assert_array_equal(got, expected)


@pytest.mark.slow
def test_the_reader_gives_every_ladder_the_outcome_it_has_read_alone():
  """`ladders.read` (a queue, lanes taking ladders as they fall free, narrowing) gives every
  ladder the outcome of `ladders.read_alone`, which steps one reading to its end."""
  cfg = go.GoConfig(size=7)
  rng = np.random.default_rng(7)
  _, black, white = go.parse_board(DEPTH_14)
  setups = [(black, white, WHITE), (black, white, BLACK)] + [ladder_setup(7, rng) for _ in range(14)]
  features = alphago.planes
  ladders = alphago.ladders

  def both(states):
    _, *candidates = jax.vmap(functools.partial(
        features._alphago_without_ladders, cfg, colour_plane=False))(states)  # pylint: disable=protected-access
    count, capacity, ladder_at, _ = features._ladder_candidates(cfg, *candidates)  # pylint: disable=protected-access
    together = ladders.read(cfg, count, capacity, ladder_at, lanes=4, shrink=2, chunk=16)
    alone = jax.vmap(lambda i: ladders.read_alone(cfg, ladder_at(i)))(
        jnp.minimum(jnp.arange(capacity), count - 1))
    return count, together, alone.status, alone.tries

  count, together, alone, tries = map(np.asarray, jax.jit(both)(initial_states(cfg, setups)))
  n = int(count)
  # Enough ladders, and long enough readings, for lanes to fall free and take new ones.
  assert n >= 50 and tries[:n].max() >= 40
  assert (alone[:n] == ladders.CAPTURED).sum() >= 20 and (alone[:n] == ladders.ESCAPED).sum() >= 20
  np.testing.assert_array_equal(together[:n], alone[:n])
  assert (together[n:] == ladders.UNDECIDED).all()


@pytest.mark.slow
def test_ladder_planes_read_on_the_host_are_the_ones_read_on_the_device(monkeypatch):
  """The reader 'host' (the accelerators' default: a callback that reads on the host's CPU,
  the batch split into chunks over its cores, the last one padded) gives the planes read inside
  the program, under jit and under vmap."""
  cfg = go.GoConfig(size=7)
  rng = np.random.default_rng(8)
  _, black, white = go.parse_board(DEPTH_14)
  setups = [(black, white, WHITE)] + [ladder_setup(7, rng) for _ in range(20)]
  states = initial_states(cfg, setups)
  on_device = dataclasses.replace(alphago.ladder_settings(), reader="device")
  planes = lambda ladder: jax.jit(lambda s: go.features(cfg, s, "alphago49", ladder=ladder))
  expected = np.asarray(planes(on_device)(states))
  assert expected[..., LADDER_CAPTURE].sum() >= 3 and expected[..., LADDER_ESCAPE].sum() >= 3
  on_host = alphago.LadderSettings(reader="host", host_chunk=4)
  monkeypatch.setattr(os, "cpu_count", lambda: 2)  # two chunks: 11 positions and 10 (+1 padding)
  np.testing.assert_array_equal(np.asarray(planes(on_host)(states)), expected)
  three = jax.tree.map(lambda a: a.reshape((3, 7) + a.shape[1:]), states)
  got = jax.jit(jax.vmap(lambda s: go.features(cfg, s, "alphago49", ladder=on_host)))(three)
  np.testing.assert_array_equal(np.asarray(got).reshape(expected.shape), expected)
