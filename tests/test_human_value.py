"""python -m agz_jax.data.human_value: a few positions per even human game, their planes cached
in the value-data format, resumable, refusing damaged folders in one line; the value task
trains on it, holding out exactly the held-out games' positions."""

import json
import os

import jax
import numpy as np
import pytest

from agz_jax import data, go, training
from agz_jax.data import human_value, positions, value_data

from test_sl_policy import random_game
from test_value import _value_config


@pytest.fixture(scope="module")
def archive_dir(tmp_path_factory):
  """Ten games: six to train on, all won by black (a value the colour plane reads), two held
  out (2017-06), a handicap game and one without a winner, which give no position."""
  rng = np.random.default_rng(11)
  games = [random_game(rng, 14 + 3 * i, winner=1 if i < 6 else (1, -1)[i % 2],
                       date="2017-06-01" if i in (6, 7) else "2016-01-01") for i in range(8)]
  games.append(random_game(rng, 20, setup=True))      # setup stones: not an even game
  games.append(random_game(rng, 20, winner=0))        # no winner
  folder = tmp_path_factory.mktemp("human")
  data.save(data.from_games(9, games), str(folder))
  return str(folder)


def _run(archive_dir, out, *extra):
  return human_value.main(["--data", archive_dir, "--out", str(out), "--val-from", "2017-01-01",
                           "--batch", "4", "--seed", "3", *extra])


def test_positions_come_from_even_games_one_per_held_out_game(archive_dir):
  archive = data.load(archive_dir)
  for per_game in (1, 4):
    game, move, held_out = human_value.choose_positions(
        archive, val_from="2017-01-01", komi_range=(5.5, 7.5), positions_per_game=per_game,
        seed=0)
    assert held_out == 2 and sorted(game[-2:]) == [6, 7]            # held-out games, last
    assert sorted(np.unique(game[:-2])) == [0, 1, 2, 3, 4, 5]       # never games 8 and 9
    assert len(game) - held_out == 6 * per_game
    assert ((move >= 0) & (move < archive.lengths()[game])).all()


def test_max_games_draws_as_many_positions_from_fewer_games(archive_dir, tmp_path, capsys):
  archive = data.load(archive_dir)
  game, _, held_out = human_value.choose_positions(
      archive, val_from="2017-01-01", komi_range=(5.5, 7.5), positions_per_game=4, seed=0,
      max_games=3)
  assert held_out == 2 and sorted(game[-2:]) == [6, 7]            # the held-out games all kept
  assert len(game) - held_out == 12 and len(np.unique(game[:-2])) == 3
  assert set(game[:-2]) <= {0, 1, 2, 3, 4, 5}
  # A folder written before the setting (no max_games in its info) goes on as "all games".
  out = tmp_path / "cache"
  assert _run(archive_dir, out) == 0
  info_path = out / "info.json"
  info = json.loads(info_path.read_text())
  assert info["max_games"] is None
  del info["max_games"]
  info_path.write_text(json.dumps(info))
  os.remove(out / "games_00001.npz")
  assert _run(archive_dir, out) == 0
  assert "1 of 2 batches already computed" in capsys.readouterr().out
  assert _run(archive_dir, out, "--max-games", "2") == 2          # another choice: refused
  assert "made with max_games=None, not 2" in capsys.readouterr().err


def test_the_cache_holds_the_planes_and_results_of_those_positions(archive_dir, tmp_path):
  assert _run(archive_dir, tmp_path / "cache", "--positions-per-game", "2") == 0
  info, packed, z, move = value_data.read(str(tmp_path / "cache"))
  assert info["positions"] == info["planned_positions"] == 14 and info["test_positions"] == 2
  assert info["batches"] == 4 and info["encoding"] == "alphago49"
  # The same positions replayed and featurised here.
  archive = data.load(archive_dir)
  game, number, _ = human_value.choose_positions(
      archive, val_from="2017-01-01", komi_range=(5.5, 7.5), positions_per_game=2, seed=3)
  np.testing.assert_array_equal(move, number)
  cfg = go.GoConfig(size=9, max_moves=162)
  table = positions.make_table(archive, game)

  @jax.jit
  def replayed(table, number):
    states = positions.replay_positions(cfg, table, jax.numpy.arange(len(game)), number[:, None])
    return go.features(cfg, states, "alphago49"), states.to_play

  planes, to_play = map(np.asarray, replayed(jax.tree.map(jax.numpy.asarray, table), number))
  unpacked = np.unpackbits(packed, axis=-1)[:, :planes[0].size].reshape(planes.shape)
  np.testing.assert_array_equal(unpacked, planes > 0.5)
  np.testing.assert_array_equal(z, archive.winner[game] * to_play)


def test_an_interrupted_cache_goes_on_and_a_damaged_one_is_named(archive_dir, tmp_path, capsys):
  out = tmp_path / "cache"
  assert _run(archive_dir, out) == 0
  whole = value_data.read(str(out))
  os.remove(out / "games_00001.npz")                              # stopped before batch 2
  assert _run(archive_dir, out) == 0
  assert "1 of 2 batches already computed, going on" in capsys.readouterr().out
  for a, b in zip(whole[1:], value_data.read(str(out))[1:]):
    np.testing.assert_array_equal(a, b)
  assert _run(archive_dir, out, "--seed", "4") == 2                 # other settings: refused
  assert "made with seed=3, not 4" in capsys.readouterr().err
  with open(out / "games_00000.npz", "r+b") as f:                   # a truncated file
    f.truncate(100)
  with pytest.raises(ValueError, match="games_00000.npz is damaged .*delete it and run"):
    value_data.read(str(out))


def test_the_value_task_trains_on_the_cache_and_holds_out_its_held_out_games(archive_dir,
                                                                             tmp_path):
  out = tmp_path / "cache"
  assert _run(archive_dir, out, "--positions-per-game", "4") == 0
  config = _value_config(**{"value.source": "human_cache", "value.data_dir": str(out),
                            "train.batch_size": 8, "steps": 60, "eval.every": 1,
                            "checkpoint.every": 60})
  config.game.size, config.game.max_moves = 9, 162
  training.train_and_evaluate(config, str(tmp_path / "run"))
  rows = [json.loads(t) for t in open(tmp_path / "run" / "metrics.jsonl", encoding="utf-8")]
  # The training positions' targets are the colour plane (black won them all): learned.
  assert rows[-1]["train_mse"] < 0.5 * rows[0]["train_mse"], (rows[0], rows[-1])
  assert np.isfinite(rows[-1]["test_mse"])
  # An incomplete cache is refused, not trained on without its held-out positions.
  os.remove(out / "games_00006.npz")
  task = training.make_task(config)
  with pytest.raises(ValueError, match="holds 24 of its 26 positions: run the command"):
    task.begin(str(tmp_path / "run2"), 0)
