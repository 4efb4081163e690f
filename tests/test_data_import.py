"""The SGF import for supervised learning: skips, stored games, archive file, splits, CLI."""

import io
import json
import os
import tarfile

import numpy as np
import pytest

from agz_jax import data, go
from agz_jax.data import import_sgf

P = 19 * 19  # the pass action on 19x19
CHUNK = 8    # a small batch keeps the compiled legality check small


def _sgf(moves, props="", size=19):
  """An SGF game: root properties, then one node per (colour, coordinate) move."""
  nodes = "".join(f";{colour}[{where}]" for colour, where in moves)
  return f"(;GM[1]FF[4]SZ[{size}]{props}{nodes})"


def _alternate(coords, first="B"):
  other = {"B": "W", "W": "B"}
  colours = [first]
  for _ in coords[1:]:
    colours.append(other[colours[-1]])
  return list(zip(colours, coords))


NORMAL = _sgf(_alternate(["pd", "dp", "pp", "dd", "qf", "fq"]),
              "PB[Alice]PW[Bob]BR[6d]WR[7d]KM[6.5]RE[B+Resign]DT[2017-02-18,2017-02-19]")
# Same setup and moves as NORMAL, other players: a duplicate.
DUPLICATE = _sgf(_alternate(["pd", "dp", "pp", "dd", "qf", "fq"]), "PB[Carol]PW[Dan]RE[W+R]")
NINE = _sgf(_alternate(["cc", "gg", "cg", "gc"]), size=9)
# Move 5 (B pd) is on a stone.
OCCUPIED = _sgf(_alternate(["pd", "dp", "pp", "dd", "pd", "qq"]), "RE[W+R]")
# White holds ba and ab; move 5, black aa (the top-left corner), has no liberty.
SUICIDE = _sgf(_alternate(["pd", "ba", "pp", "ab", "aa", "qq"]))
# A ko at the top left: black takes at cb (move 9), white's retake at bb
# (move 10) repeats the position after move 8.
SUPERKO = _sgf(_alternate(["ba", "ca", "ab", "bb", "bc", "cc", "kk", "db", "cb", "bb"]))
SHORT = _sgf(_alternate(["pd", "dp", "pp"]))
NON_ALTERNATING = _sgf([("B", "pd"), ("B", "dp"), ("W", "pp"), ("B", "dd"), ("W", "qq")])
# Two handicap stones, white first, no KM (komi 0 for handicap games), no date.
HANDICAP = _sgf(_alternate(["pd", "dc", "qf", "qq"], first="W"),
                "HA[2]AB[dd][pp]RE[W+3.5]DT[?]PB[Erin]PW[Frank]")
# A mid-game pass (W[]), the game's end (W[tt] then B[]) and two moves after it.
PASSES = _sgf(_alternate(["pd", "", "dp", "tt", "", "qq", "cc"]))
TOO_LONG = _sgf(_alternate(["aa", "ba"] * 362))
BAD_SETUP = _sgf(_alternate(["pd", "dp", "pp", "qq"]), "AB[dd]AW[dd]")
GARBAGE = "this is not a game record\n"

LOOSE = {"a_normal.sgf": NORMAL, "nine.sgf": NINE, "garbage.sgf": GARBAGE, "short.sgf": SHORT,
         "non_alternating.sgf": NON_ALTERNATING, "superko.sgf": SUPERKO, "too_long.sgf": TOO_LONG,
         "bad_setup.sgf": BAD_SETUP, "notes.txt": "not read: not an SGF file name",
         "sub/passes.sgf": PASSES}
PACKED = {"records/occupied.sgf": OCCUPIED, "records/suicide.sgf": SUICIDE,
          "records/duplicate.sgf": DUPLICATE, "records/handicap.sgf": HANDICAP,
          "records/README": "not an SGF member"}


def _write_tar(path, members):
  with tarfile.open(path, "w:gz") as tar:
    for name, text in members.items():
      payload = text.encode()
      info = tarfile.TarInfo(name)
      info.size = len(payload)
      tar.addfile(info, io.BytesIO(payload))


@pytest.fixture(scope="module")
def source(tmp_path_factory):
  root = tmp_path_factory.mktemp("sgf")
  for name, text in LOOSE.items():
    os.makedirs(os.path.dirname(root / name), exist_ok=True)
    (root / name).write_text(text)
  _write_tar(root / "games.tar.gz", PACKED)
  return str(root)


@pytest.fixture(scope="module")
def imported(source):
  return data.import_games([source], size=19, min_moves=4, chunk_size=CHUNK, progress=False)


def _by_source(archive, name):
  matches = np.flatnonzero(archive.source == name)
  assert len(matches) == 1, (name, archive.source)
  return data.game(archive, matches[0])


def test_counts_by_reason(imported):
  archive, counts = imported
  assert counts["skipped"] == {
      "unparsable": 1, "not in index": 0, "wrong size": 1, "bad setup": 1,
      "non-alternating moves": 1,
      "too short": 1, "too long": 1, "illegal move": 3, "duplicate": 1}
  assert counts["illegal"] == {"occupied": 1, "suicide": 1, "superko": 1}
  assert counts["duplicate_games"] == [{"source": "games.tar.gz:records/duplicate.sgf",
                                        "same_as": "a_normal.sgf"}]
  assert counts["kept"] == archive.num_games == 3
  assert counts["games"] == 13 and counts["files"] == 10 and counts["unreadable"] == []
  assert list(archive.source) == ["a_normal.sgf", "games.tar.gz:records/handicap.sgf", "sub/passes.sgf"]


def test_illegal_moves_are_named(imported):
  found = {g["source"]: (g["move"], g["action"], g["reason"]) for g in imported[1]["illegal_games"]}
  assert found == {
      "games.tar.gz:records/occupied.sgf": (5, 3 * 19 + 15, "occupied"),
      "games.tar.gz:records/suicide.sgf": (5, 0, "suicide"),
      "superko.sgf": (10, 1 * 19 + 1, "superko"),
  }
  # The host replay agrees.
  occupied = import_sgf.parse_game(OCCUPIED.encode())
  with pytest.raises(ValueError, match="move 5 .* occupied"):
    go.play(go.GoConfig(size=19), [int(a) for a in occupied.moves])


def test_normal_game(imported):
  g = _by_source(imported[0], "a_normal.sgf")
  # pd = column p (15), row d (3) from the top; dp = column 3, row 15.
  assert g.moves.tolist() == [3 * 19 + 15, 15 * 19 + 3, 15 * 19 + 15, 3 * 19 + 3, 5 * 19 + 16,
                              16 * 19 + 5]
  assert g.moves.dtype == np.int16
  assert g.setup_black.size == 0 and g.setup_white.size == 0
  assert (g.first_player, g.komi, g.handicap, g.winner) == (1, 6.5, 0, 1)
  assert (g.result, g.date) == ("B+Resign", "2017-02-18")
  assert (g.black_name, g.white_name, g.black_rank, g.white_rank) == ("Alice", "Bob", "6d", "7d")


def test_handicap_game(imported):
  g = _by_source(imported[0], "games.tar.gz:records/handicap.sgf")
  assert g.setup_black.tolist() == [3 * 19 + 3, 15 * 19 + 15] and g.setup_white.size == 0
  assert g.moves.tolist() == [3 * 19 + 15, 2 * 19 + 3, 5 * 19 + 16, 16 * 19 + 16]
  assert (g.first_player, g.komi, g.handicap, g.winner, g.result, g.date) == (-1, 0.0, 2, -1, "W+3.5", "")


def test_passes_end_the_game(imported):
  g = _by_source(imported[0], "sub/passes.sgf")
  # B[] is a pass, W[tt] too; the moves after the two consecutive passes are dropped.
  assert g.moves.tolist() == [3 * 19 + 15, P, 15 * 19 + 3, P, P]
  assert (g.komi, g.winner, g.result) == (6.5, 0, "")


def test_kept_games_replay_on_the_host(imported):
  archive = imported[0]
  for i in range(archive.num_games):
    g = data.game(archive, i)
    cfg = go.GoConfig(size=archive.size, komi=g.komi)
    state = go.init(cfg, g.setup_black.tolist(), g.setup_white.tolist(), g.first_player)
    go.play(cfg, [int(a) for a in g.moves], state)  # raises on an illegal move


def _game(moves, black=(), white=(), first_player=1):
  as16 = lambda x: np.array(x, np.int16)
  return data.Game(as16(black), as16(white), as16(moves), first_player, 0.0)


def test_batched_start_pads_setup_with_dropped_points():
  cfg = go.GoConfig(size=19, komi=0.0, history=1)
  black = np.array([[60, 300, P, P], [P, P, P, P]], np.int32)
  white = np.array([[P, P, P, P], [7, P, P, P]], np.int32)
  states = import_sgf._start(cfg, black, white, np.array([-1, 1], np.int8))
  for i, (b, w, t) in enumerate([([60, 300], [], -1), ([], [7], 1)]):
    want = go.init(cfg, b, w, t)
    assert np.array_equal(states.board[i], want.board) and np.array_equal(states.hash[i], want.hash)
    assert int(states.to_play[i]) == t


def test_find_illegal_across_blocks_and_setup():
  isolated = [r * 19 + c for r in range(0, 19, 2) for c in range(0, 19, 2)]  # no two adjacent
  games = [
      _game(isolated[:70]),                         # legal, longer than one 64-move block
      _game(isolated[:70] + [isolated[0]]),         # move 71 is on move 1's stone
      _game([72, 100, 60], black=[60], first_player=-1),  # white plays on a handicap stone
      _game([72, 100, 61, P, P], white=[61]),
  ]
  found = import_sgf.find_illegal(games, 19, chunk_size=CHUNK)
  assert found == {1: (70, isolated[0], "occupied"), 2: (2, 60, "occupied"), 3: (2, 61, "occupied")}


def test_dates_and_winners():
  assert import_sgf.normalise_date("2001-6-5") == "2001-06-05"
  assert import_sgf.normalise_date("2001-02-10,2001-02-11") == "2001-02-10"
  assert import_sgf.normalise_date("2001") == import_sgf.normalise_date("?") == ""
  assert import_sgf.normalise_date("2001-13-01") == ""
  assert [import_sgf.winner_of(r) for r in ("B+R", "w+3.5", "0", "Void", "", "?")] == [1, -1, 0, 0, 0, 0]


def test_save_load_round_trip(imported, tmp_path):
  archive = imported[0]
  data.save(archive, str(tmp_path))
  loaded = data.load(str(tmp_path))
  assert loaded.size == 19
  for name in archive._fields[1:]:
    a, b = getattr(archive, name), getattr(loaded, name)
    assert a.dtype == b.dtype and a.dtype != object and np.array_equal(a, b), name
  with np.load(tmp_path / data.GAMES_FILE, allow_pickle=False) as raw:
    assert raw["size"].shape == () and raw["size"].dtype == np.int32


def test_load_errors(tmp_path):
  with pytest.raises(FileNotFoundError, match="no games.npz in .*import_sgf"):
    data.load(str(tmp_path))
  (tmp_path / data.GAMES_FILE).write_bytes(b"not a zip file")
  with pytest.raises(ValueError, match="cannot read .*games.npz"):
    data.load(str(tmp_path))
  np.savez_compressed(tmp_path / data.GAMES_FILE, moves=np.zeros(3, np.int16))
  with pytest.raises(ValueError, match="lacks size, offsets"):
    data.load(str(tmp_path))


def _dated(dates):
  game = data.Game(np.zeros(0, np.int16), np.zeros(0, np.int16), np.array([1, 2], np.int16), 1, 7.5)
  return data.from_games(19, [game._replace(date=d) for d in dates])


def test_split_by_date():
  archive = _dated(["2001-01-01", "", "2017-02-18", "2017-02-17", "2018-01-01", ""])
  train, val = data.split_by_date(archive, "2017-02-18")
  assert train.tolist() == [0, 1, 3, 5] and val.tolist() == [2, 4]
  assert not set(train) & set(val) and sorted([*train, *val]) == list(range(archive.num_games))
  with pytest.raises(ValueError, match="YYYY-MM-DD"):
    data.split_by_date(archive, "2017")


def test_padded_moves():
  base = data.Game(np.zeros(0, np.int16), np.zeros(0, np.int16), np.zeros(0, np.int16), 1, 7.5)
  archive = data.from_games(19, [base._replace(moves=np.array(m, np.int16))
                                 for m in ([5, 6, 7], [], [8, 9, 10, 11, 12])])
  out = data.padded_moves(archive, [2, 0, 1], 4)
  assert out.dtype == np.int16
  assert out.tolist() == [[8, 9, 10, 11], [5, 6, 7, -1], [-1, -1, -1, -1]]


def test_cli(source, tmp_path, capsys):
  out = str(tmp_path / "out")
  assert import_sgf.main([source, "--out", out, "--min-moves", "4", "--chunk-size", str(CHUNK)]) == 0
  printed = capsys.readouterr()
  assert "kept" in printed.out and "non-alternating moves" in printed.out and "superko" in printed.out
  assert "files" in printed.err  # the progress line
  report = json.load(open(os.path.join(out, import_sgf.REPORT_FILE), encoding="utf-8"))
  assert report["kept"] == 3 and report["skipped"]["duplicate"] == 1 and report["min_moves"] == 4
  assert data.load(out).num_games == 3
  with pytest.raises(SystemExit, match="no such file or folder"):
    import_sgf.main([str(tmp_path / "missing"), "--out", out])
