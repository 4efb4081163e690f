"""Scenario tests for the rules of Go in agz_jax.go, on hand-drawn ASCII boards.

Every scenario states the position, the moves and the exact outcome: the board after the move
(compared as ASCII), the legal mask at the points that matter, termination, score and result.
Moves are written as GTP vertices (columns A..T without I, rows counted from the bottom); the
test converts them itself (`_point`) so that a bug in go.gtp_to_action cannot hide a rules bug.

Jitted functions are built once per config (`_jit`), so each module compiles step, legal_actions,
score and result once per distinct GoConfig.
"""

import functools
import math
import re

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go

COLUMNS = "ABCDEFGHJKLMNOPQRST"  # GTP skips the letter I.

# Most scenarios use this config: a 5x5 board, half-point komi (no draws), default history.
CFG5 = go.GoConfig(size=5, komi=0.5)


# ---------------------------------------------------------------------------- helpers


@functools.cache
def _jit(name):
  """jax.jit of go.<name> with the config static; jit's own cache keys on the config."""
  return jax.jit(getattr(go, name), static_argnums=0)


def step(cfg, state, action):
  return _jit("step")(cfg, state, jnp.int32(action))


def legal(cfg, state):
  return np.asarray(_jit("legal_actions")(cfg, state))


def score(cfg, state):
  return float(_jit("score")(cfg, state))


def result(cfg, state):
  return float(_jit("result")(cfg, state))


def _point(size, vertex):
  """GTP vertex ('C4', 'pass') -> action index, computed independently of go.gtp_to_action."""
  if vertex == "pass":
    return size * size
  col = COLUMNS.index(vertex[0])
  row = size - int(vertex[1:])
  assert 0 <= col < size and 0 <= row < size, vertex
  return row * size + col


def _canonical(text):
  """An ASCII board in one canonical spelling: rows of 'X', 'O', '.' joined by spaces."""
  rows = [line.replace(" ", "").replace("+", ".") for line in text.strip().splitlines() if line.strip()]
  return "\n".join(" ".join(row) for row in rows)


def _ascii(board, size):
  chars = {1: "X", -1: "O", 0: "."}
  board = np.asarray(board)
  return "\n".join(" ".join(chars[int(v)] for v in board[r * size:(r + 1) * size]) for r in range(size))


def position(text, to_play=go.BLACK, **cfg_kwargs):
  """(cfg, state) for an ASCII board; cfg is CFG5 for a 5x5 board unless overridden."""
  size, black, white = go.parse_board(text)
  cfg = CFG5 if (size == 5 and not cfg_kwargs) else go.GoConfig(size=size, **cfg_kwargs)
  return cfg, go.init(cfg, black=black, white=white, to_play=to_play)


def assert_board(cfg, state, expected):
  actual = _ascii(state.board, cfg.size)
  assert actual == _canonical(expected), f"\nboard:\n{actual}\nexpected:\n{_canonical(expected)}"


def play_legal(cfg, state, *vertices):
  """Plays the vertices in order, asserting that each is legal (mask and illegal_reason)."""
  for vertex in vertices:
    action = _point(cfg.size, vertex)
    assert legal(cfg, state)[action], f"{vertex} should be legal"
    assert go.illegal_reason(cfg, state, action) is None, vertex
    to_play, count = int(state.to_play), int(state.move_count)
    state = step(cfg, state, action)
    assert int(state.forfeit) == 0, vertex
    assert int(state.to_play) == -to_play, vertex
    assert int(state.move_count) == count + 1, vertex
  return state


def assert_illegal(cfg, state, vertex, reason):
  action = _point(cfg.size, vertex)
  assert not legal(cfg, state)[action], f"{vertex} should be masked ({reason})"
  assert go.illegal_reason(cfg, state, action) == reason


def assert_forfeit_on(cfg, state, vertex):
  """step with an illegal action: the mover forfeits, the game ends, the board is unchanged."""
  mover = int(state.to_play)
  after = step(cfg, state, _point(cfg.size, vertex))
  assert int(after.forfeit) == mover
  assert bool(after.terminated)
  np.testing.assert_array_equal(np.asarray(after.board), np.asarray(state.board))
  assert result(cfg, after) == -mover
  return after


# ---------------------------------------------------------------------------- captures


def test_single_stone_capture():
  cfg, s = position("""
      . . . . .
      . . X . .
      . X O X .
      . . . . .
      . . . . .
  """)
  s = play_legal(cfg, s, "C2")
  assert_board(cfg, s, """
      . . . . .
      . . X . .
      . X . X .
      . . X . .
      . . . . .
  """)
  assert int(s.to_play) == go.WHITE
  assert int(s.passes) == 0
  assert not bool(s.terminated)


def test_capture_of_a_six_stone_group():
  cfg, s = position("""
      X X X X .
      O O O O X
      X X X O X
      . . X O X
      . . . . .
  """)
  s = play_legal(cfg, s, "D1")
  assert_board(cfg, s, """
      X X X X .
      . . . . X
      X X X . X
      . . X . X
      . . . X .
  """)
  # The six freed points are playable again for white.
  mask = legal(cfg, s)
  for vertex in ("A4", "B4", "C4", "D4", "D3", "D2"):
    assert mask[_point(5, vertex)], vertex


def test_one_move_captures_two_groups():
  cfg, s = position("""
      . X . . .
      X O X X .
      X O . O X
      . X . X .
      . . . . .
  """)
  s = play_legal(cfg, s, "C3")
  assert_board(cfg, s, """
      . X . . .
      X . X X .
      X . X . X
      . X . X .
      . . . . .
  """)


def test_capture_in_the_corner():
  cfg, s = position("""
      O X . . .
      . . . . .
      . . . . .
      . . . . .
      . . . . .
  """)
  s = play_legal(cfg, s, "A4")
  assert_board(cfg, s, """
      . X . . .
      X . . . .
      . . . . .
      . . . . .
      . . . . .
  """)


def test_white_captures_two_stones_on_the_edge():
  cfg, s = position("""
      . . . . .
      . . . . O
      . . . O X
      . . . O X
      . . . . .
  """, to_play=go.WHITE)
  s = play_legal(cfg, s, "E1")
  assert_board(cfg, s, """
      . . . . .
      . . . . O
      . . . O .
      . . . O .
      . . . . O
  """)
  assert int(s.to_play) == go.BLACK


def test_snapback_recaptures_the_capturing_stone_with_its_group():
  cfg, s = position("""
      . . . . .
      . . . . .
      X X X . .
      O O X . .
      . . X . .
  """)
  s = play_legal(cfg, s, "A1")           # throw-in: white A2 B2 is now in atari
  s = play_legal(cfg, s, "B1")           # white captures the A1 stone...
  assert_board(cfg, s, """
      . . . . .
      . . . . .
      X X X . .
      O O X . .
      . O X . .
  """)
  s = play_legal(cfg, s, "A1")           # ...and black plays A1 again: not a ko, three stones.
  assert_board(cfg, s, """
      . . . . .
      . . . . .
      X X X . .
      . . X . .
      X . X . .
  """)


# ---------------------------------------------------------------------------- suicide


def test_single_stone_suicide_is_masked_and_forfeits():
  cfg, s = position("""
      . O . . .
      O . . . .
      . . . . .
      . . . . .
      . . . . .
  """)
  assert_illegal(cfg, s, "A5", "suicide")
  expected = np.ones(cfg.num_actions, bool)
  expected[[_point(5, "A5"), _point(5, "B5"), _point(5, "A4")]] = False
  np.testing.assert_array_equal(legal(cfg, s), expected)
  assert_forfeit_on(cfg, s, "A5")


def test_group_suicide_is_masked_and_forfeits():
  cfg, s = position("""
      X O . . .
      . O . . .
      O . . . .
      . . . . .
      . . . . .
  """)
  assert_illegal(cfg, s, "A4", "suicide")   # A5 A4 would have no liberty left.
  after = assert_forfeit_on(cfg, s, "A4")
  assert int(after.forfeit) == go.BLACK


def test_white_suicide_forfeits_for_white():
  cfg, s = position("""
      . X . . .
      X . . . .
      . . . . .
      . . . . .
      . . . . .
  """, to_play=go.WHITE)
  assert_illegal(cfg, s, "A5", "suicide")
  after = assert_forfeit_on(cfg, s, "A5")
  assert int(after.forfeit) == go.WHITE
  assert result(cfg, after) == 1.0


def test_move_without_liberties_that_captures_is_legal():
  cfg, s = position("""
      . O X . .
      O X . . .
      . . . . .
      . . . . .
      . . . . .
  """)
  # A5 touches only white stones, but B5 has A5 as its last liberty.
  s = play_legal(cfg, s, "A5")
  assert_board(cfg, s, """
      X . X . .
      O X . . .
      . . . . .
      . . . . .
      . . . . .
  """)


# ---------------------------------------------------------------------------- ko and superko

KO = """
    . X O . .
    X O . O .
    . X O . .
    . . . . .
    . . . . .
"""


def test_simple_ko_recapture_is_masked_until_the_position_differs():
  cfg, s = position(KO)
  s = play_legal(cfg, s, "C4")                       # black takes the ko
  assert_board(cfg, s, """
      . X O . .
      X . X O .
      . X O . .
      . . . . .
      . . . . .
  """)
  # Taking back at once would recreate the starting position.
  assert_illegal(cfg, s, "B4", "superko")
  s = play_legal(cfg, s, "E1", "A1")                 # an exchange elsewhere
  s = play_legal(cfg, s, "B4")                       # now the whole board differs: legal
  assert_board(cfg, s, """
      . X O . .
      X O . O .
      . X O . .
      . . . . .
      X . . . O
  """)
  assert_illegal(cfg, s, "C4", "superko")            # and black cannot retake at once
  assert legal(cfg, s)[cfg.pass_action]


def test_ko_recapture_given_to_step_forfeits():
  cfg, s = position(KO)
  s = play_legal(cfg, s, "C4")
  after = assert_forfeit_on(cfg, s, "B4")
  assert int(after.forfeit) == go.WHITE


TRIPLE_KO = """
    O . O . O
    X O . O X
    . . . . .
    X O . . .
    . X O . .
"""


def test_triple_ko_cycle_is_forbidden_by_positional_superko():
  # Three kos: top-left (A5/B5) and top-right (E5/D5) held by white, bottom-left (A1/B1) held
  # by black. White first plays C3 so that the position the cycle returns to is one reached by
  # a move, not the setup position.
  cfg, s = position(TRIPLE_KO, to_play=go.WHITE)
  s = play_legal(cfg, s, "C3")
  # Every move below takes a ko, none of them the ko just taken by the opponent.
  s = play_legal(cfg, s, "B5", "A1", "D5", "A5", "B1")
  assert_board(cfg, s, """
      O . O X .
      X O . O X
      . . O . .
      X O . . .
      . X O . .
  """)
  # E5 takes the top-right ko, which black took three moves ago, so it is no simple ko;
  # but it would recreate the position after C3.
  assert_illegal(cfg, s, "E5", "superko")
  assert_illegal(cfg, s, "A1", "superko")            # the ordinary simple ko
  assert legal(cfg, s)[_point(5, "E3")]
  assert_forfeit_on(cfg, s, "E5")


def test_setup_position_counts_for_superko():
  # The same triple-ko cycle started directly from the setup position: the sixth move would
  # recreate the setup position, which also counts as an earlier position.
  cfg, s = position(TRIPLE_KO)
  s = play_legal(cfg, s, "B5", "A1", "D5", "A5", "B1")
  assert_illegal(cfg, s, "E5", "superko")


def test_occupied_points_are_masked_and_forfeit():
  cfg, s = position("""
      . . . . .
      . X O . .
      . . . . .
      . . . . .
      . . . . .
  """)
  for vertex in ("B4", "C4"):
    assert_illegal(cfg, s, vertex, "occupied")
  assert_forfeit_on(cfg, s, "C4")


# ---------------------------------------------------------------------------- passes and game end


def test_pass_is_always_legal():
  cfg, empty = position(". . . . .\n" * 5)
  _, ko = position(KO)
  _, full_of_suicides = position("""
      . X . X .
      X . X . X
      . X . X .
      X . X . X
      . X . X .
  """, to_play=go.WHITE)
  for s in (empty, ko, play_legal(cfg, ko, "C4"), full_of_suicides):
    assert legal(cfg, s)[cfg.pass_action]
    assert go.illegal_reason(cfg, s, cfg.pass_action) is None
  # White has no legal point at all here, only pass.
  np.testing.assert_array_equal(legal(cfg, full_of_suicides)[:-1], False)


def test_two_consecutive_passes_end_the_game():
  cfg, s = position(". . . . .\n" * 5)
  s = play_legal(cfg, s, "pass")
  assert int(s.passes) == 1 and not bool(s.terminated)
  s = play_legal(cfg, s, "C3")
  assert int(s.passes) == 0
  s = play_legal(cfg, s, "pass")
  assert int(s.passes) == 1 and not bool(s.terminated)
  s = step(cfg, s, cfg.pass_action)
  assert int(s.passes) == 2
  assert bool(s.terminated)
  assert int(s.forfeit) == 0
  assert int(s.move_count) == 4
  # Only pass is legal on a finished game.
  expected = np.zeros(cfg.num_actions, bool)
  expected[cfg.pass_action] = True
  np.testing.assert_array_equal(legal(cfg, s), expected)
  assert go.illegal_reason(cfg, s, _point(5, "A1")) == "game over"


def test_max_moves_ends_the_game():
  cfg = go.GoConfig(size=5, max_moves=6)
  s = go.init(cfg)
  # A pass counts as a move; no two passes in a row.
  s = play_legal(cfg, s, "A5", "E1", "pass", "E2", "A4")
  assert int(s.move_count) == 5 and not bool(s.terminated)
  s = step(cfg, s, _point(5, "E3"))
  assert int(s.move_count) == 6
  assert bool(s.terminated)
  assert int(s.forfeit) == 0
  assert_board(cfg, s, """
      X . . . .
      X . . . .
      . . . . O
      . . . . O
      . . . . O
  """)


def test_default_max_moves_is_twice_the_board_area():
  assert go.GoConfig(size=5).max_moves == 50
  assert go.GoConfig(size=19).max_moves == 722
  cfg = go.GoConfig(size=9)
  assert (cfg.num_points, cfg.pass_action, cfg.num_actions) == (81, 81, 82)


def _finished(cfg, s):
  s = step(cfg, s, cfg.pass_action)
  return step(cfg, s, cfg.pass_action)


@pytest.mark.parametrize("vertex", ["pass", "C3", "B4"])
def test_step_on_a_terminated_state_is_a_no_op(vertex):
  cfg, s = position("""
      . . . . .
      . X . . .
      . . . . .
      . . . . .
      . . . . .
  """)
  done = _finished(cfg, s)
  assert bool(done.terminated)
  after = step(cfg, done, _point(5, vertex))         # empty point, occupied point, pass
  chex.assert_trees_all_equal(after, done)
  assert int(after.forfeit) == 0


def test_terminated_by_forfeit_is_a_no_op_too():
  cfg, s = position(KO)
  s = play_legal(cfg, s, "C4")
  done = step(cfg, s, _point(5, "B4"))
  assert int(done.forfeit) == go.WHITE
  chex.assert_trees_all_equal(step(cfg, done, _point(5, "E1")), done)
  chex.assert_trees_all_equal(step(cfg, done, cfg.pass_action), done)


# ---------------------------------------------------------------------------- scoring

SEKI = """
    . X . O X
    O O O O X
    X X X X X
    . . . . .
    . . . . .
"""


def test_tromp_taylor_score_with_seki():
  # B5 (black) and the white group A4-D4/D5 share their only liberties A5 and C5: seki.
  # Black: 8 stones + 10 empty points reaching only black; white: 5 stones; A5, C5 count for nobody.
  cfg, s = position(SEKI)
  for to_play in (go.BLACK, go.WHITE):
    _, t = position(SEKI, to_play=to_play)
    mask = legal(cfg, t)
    assert mask[_point(5, "A5")] and mask[_point(5, "C5")]   # self-atari, not suicide
  assert score(cfg, s) == 18 - 5 - 0.5
  assert result(cfg, s) == 1.0


DAME = """
    . X . . O
    . X . . O
    . X X . O
    . X . . O
    . X . . O
"""


def test_dame_counts_for_nobody():
  # Black 6 stones + column A (5); white 5 stones; the 9 empty points in C..D touch both.
  cfg, s = position(DAME)
  assert score(cfg, s) == 11 - 5 - 0.5


def test_empty_board_score_is_minus_komi():
  cfg = go.GoConfig(size=5, komi=7.5)
  s = go.init(cfg)
  assert score(cfg, s) == -7.5
  assert result(cfg, s) == -1.0


@pytest.mark.parametrize("colour", [go.BLACK, go.WHITE])
def test_a_lone_stone_owns_the_whole_board(colour):
  cfg, s = position("""
      . . . . .
      . . . . .
      . . X . .
      . . . . .
      . . . . .
  """.replace("X", "X" if colour == go.BLACK else "O"))
  assert score(cfg, s) == 25 * colour - 0.5
  assert result(cfg, s) == colour


def test_integer_komi_draw():
  cfg, s = position(DAME, komi=6)
  assert score(cfg, s) == 0.0
  assert result(cfg, s) == 0.0
  cfg0 = go.GoConfig(size=5, komi=0)
  assert result(cfg0, go.init(cfg0)) == 0.0


def test_forfeit_decides_the_result_whatever_the_score():
  # Black is far ahead, then gives an illegal action: white wins.
  cfg, s = position("""
      . . . . .
      . . . . .
      . . X . .
      . . . . .
      . . . . .
  """)
  assert result(cfg, s) == 1.0
  lost = step(cfg, s, _point(5, "C3"))
  assert int(lost.forfeit) == go.BLACK
  assert score(cfg, lost) == 24.5                     # the board is still the same
  assert result(cfg, lost) == -1.0
  # White is far ahead and forfeits: black wins.
  cfg, s = position("""
      . . . . .
      . . . . .
      . . O . .
      . . . . .
      . . . . .
  """, to_play=go.WHITE)
  assert result(cfg, s) == -1.0
  lost = step(cfg, s, _point(5, "C3"))
  assert int(lost.forfeit) == go.WHITE
  assert result(cfg, lost) == 1.0


# ---------------------------------------------------------------------------- setup and config


def test_setup_stones_with_white_to_play_first():
  text = """
      . X . . .
      X . . . .
      . . . . .
      . . . . O
      . . . . X
  """
  cfg, s = position(text, to_play=go.WHITE)
  assert int(s.to_play) == go.WHITE
  assert int(s.move_count) == 0 and int(s.passes) == 0
  assert not bool(s.terminated) and int(s.forfeit) == 0
  assert_board(cfg, s, text)
  # A5 is suicide for white, not for black.
  assert_illegal(cfg, s, "A5", "suicide")
  _, as_black = position(text, to_play=go.BLACK)
  assert legal(cfg, as_black)[_point(5, "A5")]
  s = play_legal(cfg, s, "D1")                       # white captures E1
  assert_board(cfg, s, """
      . X . . .
      X . . . .
      . . . . .
      . . . . O
      . . . O .
  """)
  assert int(s.to_play) == go.BLACK


@pytest.mark.parametrize("kwargs, field", [
    (dict(size=1), "size"),
    (dict(size=20), "size"),
    (dict(size=9, komi=float("nan")), "komi"),
    (dict(size=9, komi=float("inf")), "komi"),
    (dict(size=9, komi=-math.inf), "komi"),
    (dict(size=9, history=0), "history"),
    (dict(size=9, max_moves=0), "max_moves"),
])
def test_config_validation(kwargs, field):
  with pytest.raises(ValueError, match=field):
    go.GoConfig(**kwargs)


def test_config_is_hashable_and_valid_at_the_limits():
  assert go.GoConfig(size=9, komi=5.5) == go.GoConfig(size=9, komi=5.5)
  assert hash(go.GoConfig(size=9, komi=5.5)) == hash(go.GoConfig(size=9, komi=5.5))
  assert go.GoConfig(size=2).num_actions == 5
  assert go.GoConfig(size=19).num_actions == 362


def test_parse_board_and_to_ascii():
  size, black, white = go.parse_board("""

      X.O
      + + X

      . O .
  """)
  assert size == 3
  assert sorted(black) == [0, 5]
  assert sorted(white) == [2, 7]
  with pytest.raises(ValueError):
    go.parse_board("X .\n. . .")
  cfg, s = position("""
      X . O
      . . X
      . O .
  """)
  text = go.to_ascii(cfg, s)
  assert text.strip("\n").replace("+", ".") == "X . O\n. . X\n. O ."


# ---------------------------------------------------------------------------- host helpers


def test_play_matches_step():
  cfg = CFG5
  moves = [_point(5, v) for v in ("C3", "D3", "pass", "C2")]
  s = go.play(cfg, moves)
  t = go.init(cfg)
  for a in moves:
    t = step(cfg, t, a)
  chex.assert_trees_all_equal(s, t)
  assert_board(cfg, s, """
      . . . . .
      . . . . .
      . . X O .
      . . O . .
      . . . . .
  """)


@pytest.mark.parametrize("setup, vertices, message", [
    (None, ["C3", "C3"], "move 2 (W C3) is illegal: occupied"),
    ("""
        . O . . .
        O . . . .
        . . . . .
        . . . . .
        . . . . .
     """, ["A5"], "move 1 (B A5) is illegal: suicide"),
    (KO, ["C4", "B4"], "move 2 (W B4) is illegal: superko"),
    (TRIPLE_KO, ["C3", "B5", "A1", "D5", "A5", "B1", "E5"], "move 7 (W E5) is illegal: superko"),
    (None, ["pass", "pass", "D4"], "move 3 (B D4) is illegal: game over"),
])
def test_play_names_the_illegal_move(setup, vertices, message):
  cfg = CFG5
  state = None
  if setup is not None:
    to_play = go.WHITE if setup is TRIPLE_KO else go.BLACK
    cfg, state = position(setup, to_play=to_play)
  with pytest.raises(ValueError, match=re.escape(message)):
    go.play(cfg, [_point(5, v) for v in vertices], state=state)


def test_play_off_the_board():
  with pytest.raises(ValueError, match="off the board"):
    go.play(CFG5, [CFG5.num_actions])
  with pytest.raises(ValueError, match="off the board"):
    go.play(CFG5, [-1])
  assert go.illegal_reason(CFG5, go.init(CFG5), CFG5.num_actions) == "off the board"


@pytest.mark.parametrize("size", [9, 19])
def test_gtp_round_trip_on_every_point(size):
  cfg = go.GoConfig(size=size)
  for action in range(cfg.num_actions):
    vertex = go.action_to_gtp(cfg, action)
    assert go.gtp_to_action(cfg, vertex) == action
    assert go.gtp_to_action(cfg, vertex.lower()) == action
    if action < cfg.num_points:
      assert _point(size, vertex) == action, vertex


def test_gtp_known_vertices():
  cfg9, cfg19 = go.GoConfig(size=9), go.GoConfig(size=19)
  assert go.action_to_gtp(cfg9, 0) == "A9"
  assert go.action_to_gtp(cfg9, 8) == "J9"
  assert go.action_to_gtp(cfg9, 48) == "D4"
  assert go.action_to_gtp(cfg9, 80) == "J1"
  assert go.action_to_gtp(cfg9, 81) == "pass"
  assert go.action_to_gtp(cfg19, 18) == "T19"
  assert go.action_to_gtp(cfg19, 360) == "T1"
  assert go.gtp_to_action(cfg9, "d4") == 48
  assert go.gtp_to_action(cfg9, "PASS") == 81
  assert go.gtp_to_action(cfg19, "Q16") == 3 * 19 + 15


@pytest.mark.parametrize("size, vertices", [
    (19, "D4 K4 Q4 D10 K10 Q10 D16 K16 Q16"),
    (13, "D4 K4 G7 D10 K10"),
    (9, "C3 G3 E5 C7 G7"),
    (7, "C3 E3 D4 C5 E5"),
    (8, "C3 F3 C6 F6"),
    (5, "C3"),
    (4, ""),
])
def test_star_points_are_where_a_board_has_its_dots(size, vertices):
  cfg = go.GoConfig(size=size)
  assert sorted(go.action_to_gtp(cfg, p) for p in go.star_points(size)) == sorted(vertices.split())


@pytest.mark.parametrize("size, vertex", [
    (19, "Z99"), (19, "I5"), (19, ""), (19, "A0"), (19, "A20"), (9, "K1"), (9, "A10"), (9, "D"),
])
def test_gtp_bad_vertices(size, vertex):
  with pytest.raises(ValueError):
    go.gtp_to_action(go.GoConfig(size=size), vertex)


@pytest.mark.parametrize("action", [-1, 82])
def test_action_to_gtp_out_of_range(action):
  with pytest.raises(ValueError):
    go.action_to_gtp(go.GoConfig(size=9), action)


# ---------------------------------------------------------------------------- consistency


def test_illegal_reason_agrees_with_the_legal_mask():
  cfg, ko = position(KO)
  taken = play_legal(cfg, ko, "C4")
  _, seki = position(SEKI, to_play=go.WHITE)
  _, suicides = position("""
      . X . X .
      X . X . X
      . X . X .
      X . X . X
      . X . X .
  """, to_play=go.WHITE)
  for s in (ko, taken, seki, suicides, _finished(cfg, ko)):
    mask = legal(cfg, s)
    disagree = [(go.action_to_gtp(cfg, a), go.illegal_reason(cfg, s, a), bool(mask[a]))
                for a in range(cfg.num_actions)
                if (go.illegal_reason(cfg, s, a) is None) != bool(mask[a])]
    assert not disagree, f"(vertex, illegal_reason, legal mask): {disagree}"


# ---------------------------------------------------------------------------- batching and tracing


def _stack(states):
  return jax.tree.map(lambda *xs: jnp.stack(xs), *states)


def test_batched_results_equal_single_game_results():
  cfg = CFG5
  _, ko = position(KO)
  taken = play_legal(cfg, ko, "C4")
  _, capture = position("""
      . . . . .
      . . X . .
      . X O X .
      . . . . .
      . . . . .
  """)
  _, suicide = position("""
      . O . . .
      O . . . .
      . . . . .
      . . . . .
      . . . . .
  """)
  _, seki = position(SEKI, to_play=go.WHITE)
  states = [taken, capture, suicide, go.init(cfg), _finished(cfg, capture), seki, taken]
  actions = [_point(5, v) for v in ("B4", "C2", "A5", "pass", "A1", "A5", "E1")]
  batch = _stack(states)
  batch_actions = jnp.asarray(actions, jnp.int32)

  stepped = jax.jit(jax.vmap(functools.partial(go.step, cfg)))(batch, batch_actions)
  masks = jax.jit(jax.vmap(functools.partial(go.legal_actions, cfg)))(batch)
  scores = jax.jit(jax.vmap(functools.partial(go.score, cfg)))(stepped)
  results = jax.jit(jax.vmap(functools.partial(go.result, cfg)))(stepped)
  planes = jax.jit(jax.vmap(functools.partial(go.features, cfg)))(batch)
  single_features = jax.jit(go.features, static_argnums=0)

  for i, (s, a) in enumerate(zip(states, actions)):
    single = step(cfg, s, a)
    chex.assert_trees_all_equal(jax.tree.map(lambda x: x[i], stepped), single)
    np.testing.assert_array_equal(np.asarray(masks[i]), legal(cfg, s))
    assert float(scores[i]) == score(cfg, single)
    assert float(results[i]) == result(cfg, single)
    np.testing.assert_array_equal(np.asarray(planes[i]), np.asarray(single_features(cfg, s)))
  # The batch really is varied: a forfeit, a capture, a forfeit, a pass, a no-op, a move.
  np.testing.assert_array_equal(np.asarray(stepped.forfeit), [-1, 0, 1, 0, 0, 0, 0])


def test_step_compiles_once_per_config():
  traces = 0

  def counted_step(cfg, state, action):
    nonlocal traces
    traces += 1
    return go.step(cfg, state, action)

  jitted = jax.jit(counted_step, static_argnums=0)
  _, ko = position(KO)
  _, capture = position("""
      . . . . .
      . . X . .
      . X O X .
      . . . . .
      . . . . .
  """, to_play=go.WHITE)
  rng = np.random.default_rng(0)
  # States from init and states from step, several actions each, and a fresh but equal
  # config object every time: all the same shapes and dtypes, so a single trace.
  for start in (ko, capture, go.init(CFG5)):
    s = start
    for _ in range(6):
      cfg = go.GoConfig(size=5, komi=0.5)
      a = int(rng.integers(0, cfg.num_actions))
      s = jitted(cfg, s, jnp.int32(a))
      if bool(s.terminated):
        s = start
  assert traces == 1
  # A different config is a different program.
  jitted(go.GoConfig(size=5, komi=7.5), go.init(go.GoConfig(size=5, komi=7.5)), jnp.int32(0))
  assert traces == 2


def test_step_respects_chex_max_traces():
  cfg = CFG5

  @jax.jit
  @chex.assert_max_traces(n=1)
  def step5(state, action):
    return go.step(cfg, state, action)

  s = go.init(cfg)
  for vertex in ("C3", "D3", "pass", "C2", "B2", "D2"):
    s = step5(s, jnp.int32(_point(5, vertex)))
  assert_board(cfg, s, """
      . . . . .
      . . . . .
      . . X O .
      . X O O .
      . . . . .
  """)
