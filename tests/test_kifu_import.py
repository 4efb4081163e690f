"""The kifu import (the Tom 9-dan archive's format) beside SGF: joins, skips, splits, CLI."""

import io
import json
import os
import tarfile

import numpy as np
import pytest

from agz_jax import data, go
from agz_jax.data import import_sgf, kifu

CHUNK = 8
OPENING = ";B[pd];W[dp];B[pq];W[dc];B[ce];W[dh]"
# The same moves as an SGF game of the KGS side: the kifu copy is a duplicate.
SGF_TWIN = "(;GM[1]FF[4]SZ[19]KM[6.5]RE[B+R]DT[2011-11-02];B[qd];W[dd];B[pq];W[dp];B[fc];W[cf])"
LINES_NOV = "\n".join([
    f"101\t{OPENING};B[]",                          # a pass at the end
    "102\t;B[qd];W[dd];B[pq];W[dp];B[fc];W[cf]",   # twin of the SGF game
    "103\t;B[pd];W[zz];B[pq];W[dc]",               # off the board: unparsable
    "104\tnot moves at all",                       # unparsable
    "105\t;B[pd];B[dp];W[pq];B[dc];W[ce]",         # black twice
    "999\t;B[pd];W[dp];B[pq];W[dc];B[ce]",         # not in the index
    "",
])
LINES_DEC = "\n".join([
    f"201\t{OPENING};B[qf]",                       # W+Time: a winner, on time
    f"202\t{OPENING};B[qj]",                       # Void: no winner
    "203\t;B[pd];W[dp]",                           # too short
])
INDEX = "\n".join([
    "101\t2011.11.05 20:21\tWhiteOne\tBlackOne\t7.5\tB+0.5\t7\t30/3 5m",
    "102\t2011.11.06 10:00\tW2\tB2\t6.5\tB+Resign\t6\t30/3 5m",
    "103\t2011.11.07 10:00\tW3\tB3\t6.5\tW+R\t4\t30/3 5m",
    "104\t2011.11.08 10:00\tW4\tB4\t6.5\tW+R\t4\t30/3 5m",
    "105\t2011.11.09 10:00\tW5\tB5\t6.5\tW+R\t5\t30/3 5m",
    "201\t2011.12.01 09:00\tW6\tB6\t6.5\tW+Time\t7\t30/3 5m",
    "202\t2011.12.02 09:00\tW7\tB7\t6.5\tVoid\t7\t30/3 5m",
    "203\t2011.12.03 09:00\tW8\tB8\t6.5\tB+R\t2\t30/3 5m",
    "300\t2011.12.04 09:00\tW9\tB9\t6.5\tB+R\t100\t30/3 5m",    # no game line
    "broken index line",
])


def _write_tar(path, members, mode="w:xz"):
  with tarfile.open(path, mode) as tar:
    for name, text in members:
      payload = text.encode()
      info = tarfile.TarInfo(name)
      info.size = len(payload)
      tar.addfile(info, io.BytesIO(payload))


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
  root = tmp_path_factory.mktemp("records")
  (root / "kgs").mkdir()
  (root / "kgs" / "twin.sgf").write_text(SGF_TWIN)
  (root / "tom").mkdir()
  members = [("Kifu.index", INDEX), ("kifu/2011-11", LINES_NOV), ("kifu/2011-12", LINES_DEC)]
  _write_tar(root / "tom" / "tom-test.tar.xz", members)
  # The same archive with the index last: its lines wait for it.
  (root / "late").mkdir()
  _write_tar(root / "late" / "tom-late.tar.xz", members[1:] + members[:1])
  return root


@pytest.fixture(scope="module")
def imported(sources):
  return data.import_games([str(sources / "kgs"), str(sources / "tom")], size=19, min_moves=4,
                           chunk_size=CHUNK, progress=False)


def _game(archive, game_id):
  rows = [i for i, s in enumerate(archive.source) if s.endswith(f":{game_id}")]
  assert len(rows) == 1, (game_id, archive.source)
  return data.game(archive, rows[0])


def test_counts_and_skips(imported):
  archive, counts = imported
  assert counts["games"] == 1 + 9  # the SGF game and nine kifu lines
  assert counts["skipped"] == {
      "unparsable": 2, "not in index": 1, "wrong size": 0, "bad setup": 0,
      "non-alternating moves": 1, "too short": 1, "too long": 0, "illegal move": 0,
      "duplicate": 1}
  assert counts["kept"] == archive.num_games == 4  # the SGF game, 101, 201, 202
  assert counts["duplicate_games"] == [{"source": "tom-test.tar.xz:kifu/2011-11:102",
                                        "same_as": "twin.sgf"}]
  assert counts["kept_without_winner"] == 1  # 202, Void
  assert counts["kifu_index"] == {"index_entries": 9, "index_without_game": 1,
                                  "bad_index_lines": 1}


def test_a_kifu_game_as_stored(imported):
  archive, _ = imported
  g = _game(archive, 101)
  pd, dp = 3 * 19 + 15, 15 * 19 + 3  # SGF 'pd': column p (15), row d (3) from the top
  assert g.moves[:2].tolist() == [pd, dp] and g.moves[-1] == go.GoConfig(19).num_actions - 1
  assert len(g.moves) == 7 and g.first_player == go.BLACK
  assert g.komi == 7.5 and g.handicap == 0 and len(g.setup_black) == len(g.setup_white) == 0
  assert (g.result, g.winner, g.date) == ("B+0.5", go.BLACK, "2011-11-05")
  assert (g.white_name, g.black_name) == ("WhiteOne", "BlackOne")
  assert g.source == "tom-test.tar.xz:kifu/2011-11:101"
  assert _game(archive, 201).winner == go.WHITE  # W+Time names white
  assert _game(archive, 202).winner == 0 and _game(archive, 202).result == "Void"


def test_the_index_may_come_last(sources, imported):
  late, counts = data.import_games([str(sources / "late")], size=19, min_moves=4,
                                   chunk_size=CHUNK, progress=False)
  archive, _ = imported
  assert counts["kifu_index"]["index_without_game"] == 1
  assert counts["skipped"]["not in index"] == 1
  tom = [i for i, s in enumerate(archive.source) if s.startswith("tom-")]
  # 102 is kept here: no SGF twin came before it.
  assert late.num_games == len(tom) + 1
  for i in tom:
    game_id = archive.source[i].rsplit(":", 1)[1]
    assert _game(late, game_id).moves.tolist() == data.game(archive, i).moves.tolist()


def test_an_illegal_kifu_move_is_counted(tmp_path):
  lines = "1\t;B[pd];W[pd];B[dd];W[dp];B[qq]\n"  # white plays on black's stone
  index = "1\t2010.01.01 10:00\tW\tB\t6.5\tB+R\t5\t-\n"
  _write_tar(tmp_path / "t.tar.gz", [("kifu/2010-01", lines), ("Kifu.index", index)], "w:gz")
  archive, counts = data.import_games([str(tmp_path)], size=19, min_moves=4, chunk_size=CHUNK,
                                      progress=False)
  assert archive.num_games == 0 and counts["illegal"]["occupied"] == 1
  assert counts["illegal_games"][0]["move"] == 2


def test_held_out_months_by_source(imported):
  archive, _ = imported
  train, val = data.split_by_date(archive, "2017-05-01,tom-=2011-12-01")
  held = sorted(archive.source[val].tolist())
  assert held == ["tom-test.tar.xz:kifu/2011-12:201", "tom-test.tar.xz:kifu/2011-12:202"]
  assert sorted([*train, *val]) == list(range(archive.num_games))
  # A source-only list holds out nothing else; a bare date covers the other sources.
  _, val = data.split_by_date(archive, "tom-=2011-12-01")
  assert len(val) == 2
  _, val = data.split_by_date(archive, "2011-11-02,tom-=2011-12-01")
  assert sorted(archive.source[val].tolist()) == ["tom-test.tar.xz:kifu/2011-12:201",
                                                   "tom-test.tar.xz:kifu/2011-12:202",
                                                   "twin.sgf"]
  for bad in ("tom-=2011", "=2011-12-01", "2011-12-01,tom-"):
    with pytest.raises(ValueError, match="PREFIX=YYYY-MM-DD"):
      data.split_by_date(archive, bad)


def test_cli_imports_both_sources(sources, tmp_path, capsys):
  out = str(tmp_path / "human")
  assert import_sgf.main([str(sources / "kgs"), str(sources / "tom"), "--out", out,
                          "--min-moves", "4", "--chunk-size", str(CHUNK)]) == 0
  printed = capsys.readouterr().out
  assert "not in index" in printed and "without a game" in printed and "no winner" in printed
  report = json.load(open(os.path.join(out, import_sgf.REPORT_FILE), encoding="utf-8"))
  assert report["kept"] == 4 and report["kifu_index"]["index_without_game"] == 1
  assert data.load(out).num_games == 4


def test_kifu_member_names():
  assert kifu.is_kifu_member("kifu/2011-12") and kifu.is_kifu_member("x/kifu/2004-03")
  assert kifu.is_kifu_member("Kifu.index") and kifu.is_kifu_member("tom/Kifu.index")
  assert not kifu.is_kifu_member("records/game.sgf") and not kifu.is_kifu_member("README")
  np.testing.assert_array_equal(
      kifu.to_game(kifu.KifuGame("s", ";W[aa];B[]", kifu.IndexEntry("", "w", "b", "0.5", "?")),
                   19).moves, [0, 361])
