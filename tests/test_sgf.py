"""SGF records: reading every field we keep, writing and reading back, replaying through the rules.

SGF coordinates are written by hand in the records below: column letter, then the row counted
from the top ('a' is the top row), so on 9x9 the GTP vertex D4 is 'df' and C7 is 'cc'.
"""

import dataclasses

import jax
import pytest

from agz_jax import go, sgf

HANDICAP_GAME = b"""(;GM[1]FF[4]CA[UTF-8]SZ[9]KM[0.5]HA[2]RE[W+2.5]DT[2016-03-09]
PB[Lee Sedol]BR[9p]PW[AlphaGo]WR[-]C[root comment]
AB[cg][gc]
;W[ee]C[tengen];B[cc];W[gg]C[a comment
on two lines];B[df];W[ef];B[ed];W[tt])"""

# Point index (row from the top * size + column) of a GTP vertex, independent of agz_jax.
COLUMNS = "ABCDEFGHJKLMNOPQRST"


def point(size, vertex):
  return (size - int(vertex[1:])) * size + COLUMNS.index(vertex[0])


def test_read_handicap_game_with_players_result_and_comments():
  record = sgf.read(HANDICAP_GAME)
  assert record.size == 9 and record.komi == 0.5 and record.handicap == 2
  assert record.black_setup == sorted([point(9, "C3"), point(9, "G7")])
  assert record.white_setup == []
  assert record.result == "W+2.5" and record.date == "2016-03-09"
  assert record.players == {"black": "Lee Sedol", "black_rank": "9p", "white": "AlphaGo",
                            "white_rank": "-"}
  assert record.first_to_play == go.WHITE
  moves = [(go.WHITE, "E5"), (go.BLACK, "C7"), (go.WHITE, "G3"), (go.BLACK, "D4"),
           (go.WHITE, "E4"), (go.BLACK, "E6")]
  assert record.moves == [(c, point(9, v)) for c, v in moves] + [(go.WHITE, 81)]
  assert record.comments == ["tengen", None, "a comment\non two lines", None, None, None, None]


def test_read_accepts_bytes_str_and_a_path(tmp_path):
  path = tmp_path / "game.sgf"
  path.write_bytes(HANDICAP_GAME)
  expected = sgf.read(HANDICAP_GAME)
  assert sgf.read(str(path)) == expected
  assert sgf.read(path) == expected
  assert sgf.read(HANDICAP_GAME.decode()) == expected


def test_write_then_read_gives_the_same_record():
  record = sgf.GameRecord(
      size=9, komi=6.5, black_setup=sorted([point(9, "C3"), point(9, "G7")]),
      white_setup=[point(9, "E5")], moves=[(go.WHITE, point(9, "C7")), (go.BLACK, 81),
                                          (go.WHITE, point(9, "D4"))],
      first_to_play=go.WHITE, result="B+R", handicap=2,
      players={"black": "black player", "white": "white player", "black_rank": "3d",
               "white_rank": "5k"},
      date="2024-01-02", comments=["first", None, "last [with brackets] and \\ backslash"])
  data = sgf.write(record)
  assert data.startswith(b"(;") and b"FF[4]" in data and b"GM[1]" in data
  assert sgf.read(data) == record
  # Writing again gives the same bytes: nothing drifts on a second trip.
  assert sgf.write(sgf.read(data)) == data


def test_write_then_read_empty_game_keeps_the_player_to_move():
  for colour in (go.BLACK, go.WHITE):
    record = sgf.GameRecord(size=5, komi=0.0, first_to_play=colour)
    back = sgf.read(sgf.write(record))
    assert back == record, colour


def test_replay_gives_the_expected_board_with_a_capture():
  # 5x5: B B2, W C2, B D2, W E5, B C1, W E4, B C3 captures C2.
  record = sgf.read(b"(;GM[1]FF[4]SZ[5]KM[0.5];B[bd];W[cd];B[dd];W[ea];B[ce];W[eb];B[cc])")
  states = sgf.replay(record)
  assert len(states) == 8
  expected = """
      . . . . O
      . . . . O
      . . X . .
      . X . X .
      . . X . .
  """
  size, black, white = go.parse_board(expected)
  cfg = record.config()
  assert go.to_ascii(cfg, states[-1]) == go.to_ascii(cfg, go.init(cfg, black=black, white=white))
  assert int(states[-1].to_play) == go.WHITE and int(states[-1].move_count) == 7
  # Before the capture the white stone is still there.
  assert int(states[6].board[point(size, "C2")]) == go.WHITE


def test_replay_names_the_illegal_move():
  # Handicap game, white moves first; move 7 is W D4 on black's stone of move 4.
  record = sgf.read(b"(;GM[1]FF[4]SZ[9]HA[2]KM[0.5]AB[cg][gc]"
                    b";W[ee];B[cc];W[gg];B[df];W[ef];B[ed];W[df];B[aa])")
  with pytest.raises(ValueError) as info:
    sgf.replay(record)
  assert str(info.value) == "move 7 (W D4) is illegal: occupied"


def test_replay_inserts_a_pass_when_one_colour_plays_twice():
  record = sgf.read(b"(;GM[1]FF[4]SZ[9]KM[7.5];B[ee];B[cc];W[gg];B[aa])")
  states = sgf.replay(record)
  assert len(states) == 5  # one per move of the record, the inserted pass has none
  after_second = states[2]
  assert int(after_second.board[point(9, "E5")]) == go.BLACK
  assert int(after_second.board[point(9, "C7")]) == go.BLACK
  assert int(after_second.to_play) == go.WHITE
  assert int(after_second.move_count) == 3  # B E5, W pass, B C7
  assert int(after_second.passes) == 0 and not bool(after_second.terminated)
  final = states[-1]
  assert int(final.board[point(9, "G3")]) == go.WHITE
  assert int(final.board[point(9, "A9")]) == go.BLACK
  assert int(final.move_count) == 5


@pytest.mark.parametrize("data", [
    b"",
    b"hello world",
    b"(;FF[4]GM[1]SZ[9];B[ee]",            # unterminated
    b"(;FF[4]GM[1]SZ[abc];B[ee])",          # size not a number
    b"(;FF[4]GM[1]SZ[25];B[ee])",           # too big for us
    b"(;FF[4]GM[1]SZ[1])",                  # too small
    b"(;FF[4]GM[1]SZ[9];B[zz])",            # off the board
    b"(;FF[4]GM[1]SZ[9];B[ee];AB[aa];W[bb])",  # setup after the root
])
def test_malformed_sgf_raises_bad_sgf(data):
  with pytest.raises(ValueError, match=r"^bad SGF"):
    sgf.read(data)


def test_bad_player_to_move_property_raises_bad_sgf():
  # PL[x] is not a colour. Fails today: sgfmill's ValueError escapes with an empty message.
  with pytest.raises(ValueError, match=r"^bad SGF"):
    sgf.read(b"(;FF[4]GM[1]SZ[9]PL[x])")


def test_text_source_keeps_non_ascii_names():
  # A str is already decoded text. Fails today: read() encodes it as UTF-8 but sgfmill decodes
  # SGF without CA[] as ISO-8859-1, so 'José' comes back as 'JosÃ©'.
  record = sgf.read("(;FF[4]GM[1]SZ[9]PB[José]PW[Céline];B[ee])")
  assert record.players == {"black": "José", "white": "Céline"}


def test_missing_file_is_not_mistaken_for_sgf_text(tmp_path):
  # A path that does not exist is read as SGF text, which is not SGF: still a clean ValueError.
  with pytest.raises(ValueError, match=r"^bad SGF"):
    sgf.read(str(tmp_path / "missing.sgf"))


_step = jax.jit(go.step, static_argnums=0)


def test_result_string():
  cfg = go.GoConfig(size=5, komi=0.5)
  centre = point(5, "C3")
  assert sgf.result_string(cfg, go.init(cfg, black=[centre])) == "B+24.5"
  assert sgf.result_string(cfg, go.init(cfg, white=[centre])) == "W+25.5"
  assert sgf.result_string(dataclasses.replace(cfg, komi=7.5), go.init(cfg)) == "W+7.5"
  draw = go.GoConfig(size=5, komi=0.0)
  assert sgf.result_string(draw, go.init(draw)) == "0"
  # Forfeits: the side that gave an illegal action (here: an occupied point) loses.
  black_forfeits = _step(cfg, go.init(cfg, white=[centre]), centre)
  assert int(black_forfeits.forfeit) == go.BLACK
  assert sgf.result_string(cfg, black_forfeits) == "W+F"
  white_forfeits = _step(cfg, go.init(cfg, black=[centre], to_play=go.WHITE), centre)
  assert sgf.result_string(cfg, white_forfeits) == "B+F"


def test_format_result():
  assert sgf.format_result(go.BLACK, 3.5) == "B+3.5"
  assert sgf.format_result(go.WHITE, -12.0) == "W+12"  # the margin, whatever its sign
  assert sgf.format_result(go.WHITE, "R") == "W+R"
  assert sgf.format_result(go.BLACK, "T") == "B+T"
  assert sgf.format_result(0, 0.0) == "0"


def test_sgf_moves_count_rows_from_the_bottom():
  # sgfmill's (0, 0) is A1, the bottom left corner: our last row.
  assert go.sgf_move_to_action(9, (0, 0)) == 72 == go.gtp_to_action(go.GoConfig(size=9), "A1")
  assert go.sgf_move_to_action(9, (8, 8)) == 8  # J9, top right
  assert go.sgf_move_to_action(9, None) == 81
  assert go.action_to_sgf_move(9, 81) is None
  for action in range(81):
    assert go.sgf_move_to_action(9, go.action_to_sgf_move(9, action)) == action
