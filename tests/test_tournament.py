"""The on-device round robin: results.jsonl that agz_jax.ratings reads, networks of different
shapes (KataGo's heads) against each other, and clear errors."""

import json
import os

import numpy as np
import pytest

from agz_jax import ratings, tournament

import helpers


@pytest.fixture(scope="module")
def played(tmp_path_factory):
  root = tmp_path_factory.mktemp("tournament")
  plain = helpers.make_checkpoint(root / "plain", size=5)
  katago = helpers.make_checkpoint(root / "katago", size=5, seed=1, blocks=2,
                                   global_pooling=True, ownership_head=True, score_head=True,
                                   opponent_policy_head=True)
  out = root / "rr"
  code = tournament.main(["--player", f"plain={plain}", "--player", f"katago={katago}",
                          "--games", "6", "--simulations", "4", "--out", str(out)])
  return code, out, dict(plain=plain, katago=katago)


def test_a_round_robin_writes_every_game_for_the_ratings(played):
  code, out, _ = played
  assert code == 0
  lines = [json.loads(t) for t in open(os.path.join(out, "results.jsonl"))]
  assert [line["game"] for line in lines] == list(range(6))
  # The pair is (katago, plain) in name order: katago moves first in the first three games.
  assert [line["black"] for line in lines] == ["katago"] * 3 + ["plain"] * 3
  assert all({line["black"], line["white"]} == {"katago", "plain"} for line in lines)
  for line in lines:
    assert line["winner"] in ("katago", "plain", None)
    if line["winner"] is not None:
      assert line["result"] == ("B+" if line["winner"] == line["black"] else "W+")
    assert 0 < line["moves"] <= 50 and line["size"] == 5
  players, games, points = ratings.tally(ratings.load_results([str(out)]))
  assert players == ["katago", "plain"] and games[0, 1] == 6
  wins = sum(line["winner"] == "katago" for line in lines)
  assert np.isclose(points[0, 1], wins + 0.5 * sum(line["winner"] is None for line in lines))


def test_bad_input_gets_one_clear_line(played, tmp_path, capsys):
  _, out, paths = played
  cases = [
      (["--player", f"a={paths['plain']}"], "at least two players"),
      (["--player", f"a={paths['plain']}", "--opponent", "greedy"], "go has no scripted player"),
      (["--player", "nameless"], "give NAME=CHECKPOINT"),
      (["--player", f"a={paths['plain']}", "--player", f"b={paths['katago']}", "--games", "3"],
       "--games must be even"),
      (["--player", f"a={paths['plain']}", "--player", f"b={tmp_path / 'nothing'}"], "checkpoint"),
      (["--player", f"a={paths['plain']}", "--player", f"b={paths['katago']}"], "exists"),
  ]
  for args, message in cases:
    out_dir = str(out) if message == "exists" else str(tmp_path / "x")
    assert tournament.main(args + ["--out", out_dir]) == 2, args
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], (args, err)


def test_networks_of_different_games_are_refused(played, tmp_path, capsys):
  _, _, paths = played
  nine = helpers.make_checkpoint(tmp_path / "nine", size=9)
  assert tournament.main(["--player", f"a={paths['plain']}", "--player", f"b={nine}",
                          "--out", str(tmp_path / "o")]) == 2
  assert "needs one game" in capsys.readouterr().err


def test_checkpoints_of_one_shape_share_one_compiled_match(tmp_path):
  paths = [helpers.make_checkpoint(tmp_path / f"c{i}", size=5, seed=i) for i in range(3)]
  before = len(tournament._CACHE)
  args = [a for i, p in enumerate(paths) for a in ("--player", f"c{i}={p}")]
  assert tournament.main(args + ["--games", "2", "--simulations", "2", "--out",
                                 str(tmp_path / "rr")]) == 0
  assert len(tournament._CACHE) == before + 1          # three pairs, one compiled match
  lines = [json.loads(t) for t in open(tmp_path / "rr" / "results.jsonl")]
  assert len(lines) == 6 and {x["black"] for x in lines} == {"c0", "c1", "c2"}
