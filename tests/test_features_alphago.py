"""AlphaGo's 48/49 input planes (encodings "alphago48" / "alphago49"), checked by hand.

Every plane group on ASCII positions drawn here: X is black, O is white, X to play unless a
test says otherwise. Planes are compared as sets of GTP vertices.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from agz_jax import go

CFG = go.GoConfig(size=9, komi=7.5)
_features = jax.jit(go.features, static_argnums=(0, 2))

STONES, ONES, TURNS, LIBS, CAPTURE, SELF_ATARI, LIBS_AFTER = 0, 3, 4, 12, 20, 28, 36
LADDER_CAPTURE, LADDER_ESCAPE, SENSIBLE, ZEROS, COLOUR = 44, 45, 46, 47, 48


@functools.cache
def _jit(name):
  return jax.jit(getattr(go, name), static_argnums=0)


def _vertices(plane):
  plane = np.asarray(plane)
  assert set(np.unique(plane).tolist()) <= {0.0, 1.0}
  rows, cols = np.nonzero(plane)
  return {go.action_to_gtp(CFG, int(r) * 9 + int(c)) for r, c in zip(rows, cols)}


def _position(text, to_play=go.BLACK, moves=()):
  size, black, white = go.parse_board(text)
  assert size == 9
  state = go.init(CFG, black=black, white=white, to_play=to_play)
  for vertex in moves:
    state = _jit("step")(CFG, state, jnp.int32(go.gtp_to_action(CFG, vertex)))
    assert int(state.forfeit) == 0, vertex
  return state


def _planes(state):
  planes = np.asarray(_features(CFG, state, "alphago49"))
  assert planes.shape == (9, 9, 49) and planes.dtype == np.float32
  return [_vertices(planes[:, :, i]) for i in range(49)]


def _group(planes, first, num=8):
  return planes[first:first + num]


def _only(index_to_vertices, num=8):
  """Expected plane group: {index: vertices}, every other plane of the group empty."""
  out = [set() for _ in range(num)]
  for i, v in index_to_vertices.items():
    out[i] = set(v)
  return out


def _all_points():
  return {go.action_to_gtp(CFG, p) for p in range(81)}


EMPTY_BOARD = "\n".join([". . . . . . . . ."] * 9)


def test_constant_and_colour_planes():
  state = _position(EMPTY_BOARD, moves=("E5",))            # white to play
  planes = _planes(state)
  assert planes[0] == set() and planes[1] == {"E5"}
  assert planes[2] == _all_points() - {"E5"}
  assert planes[ONES] == _all_points()
  assert planes[ZEROS] == set()
  assert planes[COLOUR] == set()                          # white to play
  assert _planes(_position(EMPTY_BOARD))[COLOUR] == _all_points()
  planes48 = np.asarray(_features(CFG, state, "alphago48"))
  np.testing.assert_array_equal(planes48, np.asarray(_features(CFG, state, "alphago49"))[:, :, :48])
  assert go.num_planes(CFG, "alphago48") == 48 and go.num_planes(CFG, "alphago49") == 49


def test_turns_since_counts_passes_and_puts_setup_stones_last():
  # Setup stone at A9; then B C3, W D4, B pass, W E5, B F6.
  text = EMPTY_BOARD.replace(". . . . . . . . .", "X . . . . . . . .", 1)
  state = _position(text, moves=("C3", "D4", "pass", "E5", "F6"))
  turns = _group(_planes(state), TURNS)
  assert turns == _only({0: {"F6"}, 1: {"E5"}, 3: {"D4"}, 4: {"C3"}, 7: {"A9"}})


def test_turns_since_saturates_after_seven_moves():
  moves = ("A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1", "J1")
  turns = _group(_planes(_position(EMPTY_BOARD, moves=moves)), TURNS)
  assert turns == _only({0: {"J1"}, 1: {"H1"}, 2: {"G1"}, 3: {"F1"}, 4: {"E1"}, 5: {"D1"},
                         6: {"C1"}, 7: {"A1", "B1"}})


def test_turns_since_of_a_stone_replayed_after_a_capture():
  # White A9 is captured by B8... then A9 is refilled by black: its age is the refill's.
  text = """
      O X . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
  """
  state = _position(text, moves=("A8", "E5", "A9"))
  turns = _group(_planes(state), TURNS)
  assert turns == _only({0: {"A9"}, 1: {"E5"}, 2: {"A8"}, 7: {"B9"}})


def test_liberties_one_two_and_eight_or_more():
  text = """
      . O X . . . . . .
      . . O . . . . . .
      . . . . . . . . .
      . . X X X X . . .
      . . X . . X . . .
      . . X X X X . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . X
  """
  libs = _group(_planes(_position(text)), LIBS)
  # X C9 is in atari (D9); O B9: A9, B8 -> 2; O C8: B8, D8, C7 -> 3; the black ring of 10 stones
  # has 2 inner and 14 outer liberties -> 8+; X J1: H1, J2 -> 2.
  ring = {"C6", "D6", "E6", "F6", "C5", "F5", "C4", "D4", "E4", "F4"}
  assert libs == _only({0: {"C9"}, 1: {"B9", "J1"}, 2: {"C8"}, 7: ring})


def test_capture_size_self_atari_and_liberties_after_move():
  text = """
      . . . . . . . . .
      . . . . . . . . .
      . . . X X X . . .
      . . . O O O X . .
      . . . X X X . . .
      . . . . . . . . .
      . O O . . . . . .
      O X X O . . . . .
      . O . . . . . . .
  """
  planes = _planes(_position(text))
  stones = planes[0] | planes[1]
  legal = _all_points() - stones - {"A1"}                 # A1 would be suicide
  # C6 captures the three white stones; no other move captures anything.
  assert _group(planes, CAPTURE) == _only({0: legal - {"C6"}, 3: {"C6"}})
  # A3 (next to O A2 and O B3) is left with A4 alone; C1 joins B2 C2 and is left with D1.
  assert _group(planes, SELF_ATARI) == _only({0: {"A3"}, 2: {"C1"}})
  libs_after = _group(planes, LIBS_AFTER)
  assert {"A3", "C1"} <= libs_after[0]
  assert "D1" in libs_after[1]                            # C1, E1 (D2 is white)
  assert "C6" in libs_after[3]                            # B6, C7, C5 and the emptied D6
  assert "E4" in libs_after[4]                            # D4, F4, E3 and C5, G5 of the trio
  assert set().union(*libs_after) == legal
  assert sum(len(p) for p in libs_after) == len(legal)    # one plane per legal move


def test_eye_filling_is_not_sensible():
  text = """
      . X . . . . . . .
      X X . . . . . . .
      . . . . X . . . .
      . . . X . X . . .
      . . . O X O . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . O X . . . .
      . . . X . X . . .
  """
  planes = _planes(_position(text))
  sensible = planes[SENSIBLE]
  assert "A9" not in sensible          # corner eye, no O diagonal
  assert "E6" in sensible              # diagonals D5, F5 are O: a false eye
  assert "E1" in sensible              # edge eye with one O diagonal (D2): false
  assert "C7" in sensible              # an ordinary empty point
  assert "B8" not in sensible          # occupied
  occupied = planes[0] | planes[1]
  assert sensible == _all_points() - occupied - {"A9"}
  moves = np.asarray(jax.jit(go.sensible_moves, static_argnums=0)(CFG, _position(text)))
  assert not moves[-1]                                     # pass is never "sensible"
  assert {go.action_to_gtp(CFG, int(a)) for a in np.flatnonzero(moves)} == sensible


# Classic ladder: the white stone D5 is chased toward the lower left corner.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X . . . . .
    . . X O . . . . .
    . . . . X . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


def _with(text, vertex, colour):
  """text with one more stone of colour ("X" / "O") at a GTP vertex."""
  rows = [r.split() for r in text.strip().splitlines()]
  col = "ABCDEFGHJ".index(vertex[0])
  rows[9 - int(vertex[1:])][col] = colour
  return "\n".join(" ".join(r) for r in rows)


def test_ladder_capture_works_on_an_empty_board():
  planes = _planes(_position(LADDER))
  assert planes[LADDER_CAPTURE] == {"E5", "D4"}


def test_ladder_breaker_makes_the_ladder_fail():
  # From E5 the escape runs D4, C4, C3, ...; a white stone at B4 breaks it.
  planes = _planes(_position(_with(LADDER, "B4", "O")))
  assert "E5" not in planes[LADDER_CAPTURE]


def test_ladder_that_ends_by_capturing_a_chaser_stone():
  # Black C5 is in atari (white B5, C6): when white extends to C4 it captures C5 and escapes.
  text = _with(_with(LADDER, "B5", "O"), "C6", "O")
  planes = _planes(_position(text))
  assert "E5" not in planes[LADDER_CAPTURE]


def test_escaper_breaks_the_ladder_by_capturing_a_chaser_stone():
  # With white B5, black C5 falls into atari once white reaches C4 (black ataris at C3): white
  # then captures C5 at C6 instead of extending, and escapes. Only a reader that lets the
  # escaper capture sees it; without B5 the ladder works.
  text = _with(LADDER, "B5", "O")
  assert "E5" not in _planes(_position(text))[LADDER_CAPTURE]
  assert "E5" in _planes(_position(LADDER))[LADDER_CAPTURE]
  # White to play, D5 in atari after black E5: extending at D4 escapes, by the same capture.
  assert _planes(_position(_with(text, "E5", "X"), to_play=go.WHITE))[LADDER_ESCAPE] == {"D4"}


def test_capturing_a_chaser_stone_that_does_not_save_the_escaper():
  # Black B6 and C2 as well: white still captures C5, but its stones are caught all the same.
  text = _with(_with(_with(LADDER, "B5", "O"), "B6", "X"), "C2", "X")
  assert "E5" in _planes(_position(text))[LADDER_CAPTURE]
  assert _planes(_position(_with(text, "E5", "X"), to_play=go.WHITE))[LADDER_ESCAPE] == set()


def test_ladder_along_the_edge():
  text = """
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . . . . . . . .
      . . X . . . . . .
      . . O . . . . . .
  """
  planes = _planes(_position(text))
  assert planes[LADDER_CAPTURE] == {"B1", "D1"}
  # A white stone on the first line far away does not help: the crawl still dies at the corner.
  assert _planes(_position(_with(text, "G3", "O")))[LADDER_CAPTURE] == {"B1", "D1"}
  # A white stone on the second line next to the crawl's path breaks the rightward ladder only.
  assert _planes(_position(_with(text, "F2", "O")))[LADDER_CAPTURE] == {"D1"}


def test_ladder_escape_for_the_player_in_atari():
  # White to play, D5 in atari: extending to D4 runs into a working ladder: not an escape.
  text = _with(LADDER, "E5", "X")
  assert _planes(_position(text, to_play=go.WHITE))[LADDER_ESCAPE] == set()
  # With the breaker at B4 the same extension escapes.
  escape = _planes(_position(_with(text, "B4", "O"), to_play=go.WHITE))[LADDER_ESCAPE]
  assert escape == {"D4"}
  # Extending to three liberties is an escape too.
  open_text = _with(_with(EMPTY_BOARD, "D5", "O"), "E5", "X")
  open_text = _with(_with(open_text, "D6", "X"), "C5", "X")
  assert _planes(_position(open_text, to_play=go.WHITE))[LADDER_ESCAPE] == {"D4"}


def test_planes_under_vmap_match_single_positions():
  states = [_position(LADDER), _position(_with(LADDER, "B4", "O")),
            _position(EMPTY_BOARD, moves=("E5", "D5", "pass"))]
  batch = jax.tree.map(lambda *x: jnp.stack(x), *states)
  batched = np.asarray(jax.jit(jax.vmap(functools.partial(go.features, CFG, encoding="alphago49")))(batch))
  for i, s in enumerate(states):
    np.testing.assert_array_equal(batched[i], np.asarray(_features(CFG, s, "alphago49")))


def test_alphago_planes_need_eight_positions_of_history():
  with pytest.raises(ValueError, match="history >= 8"):
    go.features(go.GoConfig(size=9, history=4), go.init(go.GoConfig(size=9, history=4)),
                "alphago48")
  with pytest.raises(ValueError, match="encoding must be one of"):
    go.num_planes(go.GoConfig(size=9), "alphago50")
